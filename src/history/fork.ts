/**
 * Forking: a child session seeded with a prefix of its parent's log.
 *
 * The child's log is the parent's events up to and including the cut,
 * byte-for-byte the same events, followed by `session/end-seed
 * {inherited: true}`. Its surface is folded afresh, so it shares no state
 * with the parent and equals the parent's surface as it was at the cut. The
 * parent is never changed.
 *
 * @module
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { seqInput, SessionSeq } from "../core/seq.ts";
import type { SessionEvent } from "../core/event.ts";
import { ForkPointOutOfRange } from "./errors.ts";
import {
  type AppendError,
  eventsFrom,
  Session,
  type SessionHeader,
} from "../session/session.ts";
import type { EventsNotHeld } from "../core/errors.ts";

/** Options of {@link fork}. */
export interface ForkOptions {
  /**
   * The child's id. By default `<parent id>-fork-<cut>-<createdAt>`, where
   * `cut` is the last inherited seq (or `none` for an empty parent).
   */
  readonly id?: string;
  /** The child's header metadata. */
  readonly meta?: { readonly [key: string]: unknown };
}

/**
 * Forks a session at `atSeq` (by default after its last event). The child's
 * log holds the parent's events from its base up to and including `atSeq`,
 * then `session/end-seed {inherited: true}`; its header has a new id,
 * `createdAt` from `Clock`, `isSeeded: true` and `parentSession` set to the
 * parent's id. It keeps the parent's vocabulary and window base.
 *
 * @param session The parent session.
 * @param atSeq The last seq the child inherits; the parent's last by default.
 * @param options The child's id and metadata.
 * @returns `Effect<Session, ForkPointOutOfRange | EventsNotHeld |
 * AppendError>`: failing with `ForkPointOutOfRange` when `atSeq` is not in
 * the parent's log, and with `EventsNotHeld` when the parent holds only
 * its surface (opened from a checkpoint: fork it inside
 * `store.withHistory`).
 *
 * @example Forking before the last answer
 * ```ts
 * import { deriveMessages, fork, Session, SessionSeq } from "@palimpsest/session";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const user = (id: string) => ({
 *   type: "user/message" as const, surfaceOp: "append" as const,
 *   data: { id, role: "user" as const, content: [{ type: "text" as const, text: id }], source: { kind: "user" } },
 * });
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "parent", createdAt: 0, isSeeded: false });
 *   const parent = yield* Session.appendAll(empty, [user("a"), user("b"), user("c")]);
 *   return yield* fork(parent, SessionSeq.make(1), { id: "child" });
 * });
 * const child = Effect.runSync(program);
 * assert.equal(child.header.parentSession, "parent");
 * assert.equal(child.header.isSeeded, true);
 * assert.deepEqual(deriveMessages(child.surface).map((m) => m.id), ["a", "b"]);
 * assert.equal(Result.getOrThrow(Session.eventAt(child, SessionSeq.make(2)))?.type, "session/end-seed");
 * ```
 */
export function fork(
  session: Session,
  atSeqGiven?: number,
  options?: ForkOptions,
): Effect.Effect<Session, ForkPointOutOfRange | EventsNotHeld | AppendError> {
  if (atSeqGiven !== undefined) {
    const checked = seqInput(atSeqGiven);
    if (Result.isFailure(checked)) return Effect.fail(checked.failure);
  }
  const atSeq = atSeqGiven === undefined
    ? undefined
    : SessionSeq.make(atSeqGiven);
  return Effect.flatMap(
    Clock.currentTimeMillis,
    (
      createdAt,
    ): Effect.Effect<
      Session,
      ForkPointOutOfRange | EventsNotHeld | AppendError
    > => {
      const { baseSeq, nextSeq } = session.surface;
      if (atSeq !== undefined && (atSeq < baseSeq || atSeq >= nextSeq)) {
        return Effect.fail(
          new ForkPointOutOfRange({ atSeq, baseSeq, nextSeq }),
        );
      }
      const last = atSeq ?? (nextSeq > baseSeq ? nextSeq - 1 : undefined);
      let inherited: ReadonlyArray<SessionEvent> = [];
      if (last !== undefined) {
        const events = eventsFrom(session, baseSeq);
        if (Result.isFailure(events)) return Effect.fail(events.failure);
        inherited = events.success.slice(0, last - baseSeq + 1);
      }
      const header: SessionHeader = {
        id: options?.id ??
          `${session.header.id}-fork-${last ?? "none"}-${createdAt}`,
        createdAt,
        isSeeded: true,
        parentSession: session.header.id,
        ...(options?.meta === undefined ? {} : { meta: options.meta }),
      };
      // The inherited events are the parent's, accepted already.
      const makeOptions = {
        baseSeq,
        stored: true,
        ...(session.vocabulary === undefined
          ? {}
          : { vocabulary: session.vocabulary }),
      };
      return Effect.flatMap(
        Session.fromEvents(header, inherited, makeOptions),
        (child) =>
          Session.append(child, {
            type: "session/end-seed",
            data: { inherited: true },
          }),
      );
    },
  );
}
