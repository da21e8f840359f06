/**
 * The session the AI, AI SDK and CLI tests run against: session "s",
 * created in the `SessionStore` of the context, with the given drafts
 * appended.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { type EventDraft, SessionStore } from "@palimpsest/session";

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
