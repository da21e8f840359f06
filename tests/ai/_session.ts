/**
 * The session the AI, AI SDK and CLI tests run against: session "s",
 * created in the `SessionStore` of the context, with the given drafts
 * appended; and a turn on it.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import type { Tool, Toolkit } from "effect/ai";
import { type EventDraft, SessionStore } from "@palimpsest/session";
import { runTurn, type RunTurnOptions } from "@palimpsest/session/ai";

/**
 * Creates session "s" and appends `drafts` (when given, even empty).
 *
 * @param drafts The events to append after creating it.
 * @returns The store and the write handle of the session.
 */
export const newSession = (drafts?: ReadonlyArray<EventDraft>) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const handle = yield* store.create({
      id: "s",
      createdAt: 0,
      isSeeded: false,
    });
    if (drafts !== undefined) yield* store.append(handle, drafts);
    return { store, handle };
  });

/**
 * Creates session "s" with `drafts` (as {@link newSession}) and describes a
 * turn on it with `toolkit`'s tools and `options`; the turn is not run.
 *
 * @param toolkit The toolkit whose handlers the turn runs.
 * @param options The turn's options but the handle and the toolkit.
 * @param drafts The events to append after creating the session.
 * @returns The store, the write handle and the turn.
 */
export const turnOnNewSession = <
  Tools extends Record<string, Tool.Any>,
  R,
>(
  toolkit: Effect.Effect<Toolkit.WithHandler<Tools>, never, R>,
  options: Omit<RunTurnOptions<Tools>, "handle" | "toolkit">,
  drafts?: ReadonlyArray<EventDraft>,
) =>
  Effect.gen(function* () {
    const { store, handle } = yield* newSession(drafts);
    const turn = runTurn({ ...options, handle, toolkit: yield* toolkit });
    return { store, handle, turn };
  });
