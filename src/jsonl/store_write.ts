/**
 * The writing steps of the JSONL store: {@link createSession} (a new file,
 * published whole), {@link openForWrite} (the claim, the log read
 * strictly, a torn tail cut) and {@link appendEvents} (one durable batch
 * at the end of the last good line). Each takes the store's state record
 * (`store_state.ts`); `store.ts` assembles them.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import type * as Scope from "effect/Scope";
import * as fs from "node:fs";
import { knownEvents, Session } from "../session/session.ts";
import { AppendOutcomeUnknown, SessionAlreadyExists } from "../store/errors.ts";
import type {
  OpenError,
  OpenOptions,
  SessionHandle,
  WriteError,
} from "../store/store.ts";
import type { StoreCore } from "../store/core.ts";
import { ioError } from "../fs/io.ts";
import { appendBatch, publishBytes } from "../fs/durable_file.ts";
import { writeNewEvents } from "../store/handles.ts";
import { createdFrom, wholeReport, writableLog } from "../store/open.ts";
import { batchNeedsSync, encodeBatch, encodeLog } from "../store/lines.ts";
import {
  checkpointTarget,
  type JsonlHandleState,
  type JsonlStoreState,
  newHandleState,
  openDescriptor,
  pathOf,
  releaseHandle,
  scopedHandle,
  storageError,
  takeClaim,
} from "./store_state.ts";
import { readStored } from "./store_read.ts";
import { journalBatch, journalCreated } from "./catalogue.ts";

/**
 * The store's `create`: under the new session's claim, publishes its file
 * (header, and events when created from a session) without overwriting,
 * and opens it for appending.
 *
 * @param store The store.
 * @param init The header, or the session, to create.
 * @param options The vocabulary.
 * @returns A write handle held by the caller's scope.
 */
export const createSession = (
  store: JsonlStoreState,
  init: Parameters<StoreCore["create"]>[0],
  options: Parameters<StoreCore["create"]>[1],
): ReturnType<StoreCore["create"]> =>
  Effect.suspend((): ReturnType<StoreCore["create"]> => {
    const { header, vocabulary, session } = createdFrom(init, options);
    const located = pathOf(store, header.id);
    if (Result.isFailure(located)) return Effect.fail(located.failure);
    const state = newHandleState(located.success, session);
    const id = header.id;
    return scopedHandle(
      store,
      state,
      Effect.gen(function* () {
        yield* takeClaim(state, id);
        if (fs.existsSync(state.path)) {
          return yield* new SessionAlreadyExists({ id });
        }
        const bytes = encodeLog(header, session, vocabulary);
        yield* Effect.mapError(
          publishBytes(state.path, bytes),
          (error) =>
            error._tag === "TargetExists"
              ? new SessionAlreadyExists({ id })
              : storageError("create", id, error),
        );
        yield* openDescriptor(state, id, undefined);
        state.length = bytes.length;
        journalCreated(store.root, session, state.path);
        const events = session.surface.nextSeq - session.surface.baseSeq;
        return store.handles.make(id, "write", wholeReport(events), state);
      }),
    );
  });

/**
 * The write half of the store's `open`: takes the claim, reads the log
 * strictly (from a checkpoint when one fits), and opens the file for
 * appending, cutting a torn tail.
 *
 * @param store The store.
 * @param id The session.
 * @param path Its file.
 * @param options The open's options.
 * @returns A write handle held by the caller's scope.
 */
export const openForWrite = <E>(
  store: JsonlStoreState,
  id: string,
  path: string,
  options: OpenOptions<E>,
): Effect.Effect<SessionHandle, OpenError | E, Scope.Scope> => {
  const state = newHandleState(
    path,
    Session.make({ id, createdAt: 0, isSeeded: false }),
  );
  return scopedHandle(
    store,
    state,
    Effect.gen(function* () {
      yield* takeClaim(state, id);
      const loaded = yield* readStored(store, id, path, options, true);
      const log = yield* writableLog(loaded.log);
      yield* openDescriptor(
        state,
        id,
        log.report.tornTail === undefined ? undefined : log.report.bytes,
      );
      state.session = log.session;
      state.length = log.report.bytes;
      Object.assign(state.mark, loaded.mark);
      return store.handles.make(id, "write", loaded.report, state);
    }),
  );
};

/**
 * The write of the store's `commit`: the events of `next` past the
 * handle's session, encoded and appended durably at the end of the last
 * good line, then the checkpoint the policy asks for. A failed write whose
 * undo failed too leaves the file unknown: the handle is released and the
 * batch is `AppendOutcomeUnknown`.
 *
 * @param store The store.
 * @param handle The write handle.
 * @param state The state behind it.
 * @param next The session to store.
 * @returns `next`, once stored.
 */
export const appendEvents = (
  store: JsonlStoreState,
  handle: SessionHandle,
  state: JsonlHandleState,
  next: Session,
): Effect.Effect<Session, WriteError> =>
  writeNewEvents(
    handle,
    state,
    next,
    state.fd,
    (fd, from, to): Effect.Effect<void, WriteError> => {
      const bytes = encodeBatch(next, from);
      const outcome = appendBatch(
        store.io,
        fd,
        state.length,
        bytes,
        batchNeedsSync(next, from),
      );
      switch (outcome._tag) {
        case "Written":
          state.length += bytes.length;
          journalBatch(store.root, next, from, fd, state.length);
          // Derived data, after the batch is durable: a failed
          // checkpoint write costs the next open a longer replay only.
          return store.checkpointer.afterBatch(
            next,
            state.length,
            checkpointTarget(state),
          );
        case "NotWritten":
          return Effect.fail(
            storageError(
              "append to",
              handle.id,
              ioError("append to", state.path, outcome.cause),
            ),
          );
        case "Unknown":
          // The file may hold part of the batch: stop writing through it.
          releaseHandle(store, state, false);
          return Effect.fail(
            new AppendOutcomeUnknown({
              id: handle.id,
              fromSeq: from,
              events: to - from,
              batch: knownEvents(next, from),
              header: undefined,
              cause: ioError("append to", state.path, outcome.cause),
              undo: ioError("truncate back", state.path, outcome.undo),
            }),
          );
      }
    },
  );
