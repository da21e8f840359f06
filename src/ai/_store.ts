/**
 * The store call the model integration makes, in one place: append a batch
 * of drafts durably. Not exported.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import {
  type SessionHandle,
  SessionStore,
  type WriteError,
} from "../store/store.ts";
import type { AppendError, EventDraft, Session } from "../session/session.ts";

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
    return (yield* store.append(handle, drafts)).session;
  });
