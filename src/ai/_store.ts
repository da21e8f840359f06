/**
 * The two store calls the model integration makes, in one place: append a
 * batch of drafts durably, and persist what a pure history operation
 * appended. Not exported.
 *
 * @module
 */
import { Effect } from "effect";
import {
  type SessionHandle,
  SessionStore,
  type WriteError,
} from "../jsonl/store.ts";
import { type AppendError, type EventDraft, Session } from "../session.ts";

/** What a durable append can fail with. */
export type StoreAppendError = AppendError | WriteError;

/**
 * Appends drafts as one durable batch.
 * @internal
 */
export const appendDrafts = (
  handle: SessionHandle,
  drafts: ReadonlyArray<EventDraft>,
): Effect.Effect<Session, StoreAppendError, SessionStore> =>
  Effect.gen(function* () {
    if (drafts.length === 0) return handle.session;
    const store = yield* SessionStore;
    return yield* store.append(handle, drafts);
  });

/**
 * Runs a pure history operation on the handle's session and appends what
 * it added as one durable batch.
 * @internal
 */
export const persistOperation = <E>(
  handle: SessionHandle,
  operation: (session: Session) => Effect.Effect<Session, E>,
): Effect.Effect<Session, E | StoreAppendError, SessionStore> =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const before = handle.session;
    const after = yield* operation(before);
    return yield* store.appendEvents(
      handle,
      Session.events(after, Session.nextSeq(before)),
    );
  });
