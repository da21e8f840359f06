/**
 * The two store calls the model integration makes, in one place: append a
 * batch of drafts durably, and persist what a pure history operation
 * appended. Not exported.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import {
  type SessionHandle,
  SessionStore,
  type WriteError,
} from "../store/store.ts";
import type { NotAnAppend } from "../store/errors.ts";
import type { AppendError, EventDraft, Session } from "../session.ts";

/** What a durable append can fail with. */
export type StoreAppendError = AppendError | WriteError | NotAnAppend;

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
    return (yield* store.append(handle, drafts)).session;
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
    return (yield* store.update(handle, operation)).session;
  });
