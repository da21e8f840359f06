/**
 * The life of a handle of the PostgreSQL store around its operations: a
 * writer's scope ({@link withHandleScope}, {@link scopedHandle}), its
 * checkpoints through its connection ({@link checkpointTargetOf},
 * {@link checkpointAfterBatch}, {@link checkpointOnClose},
 * {@link checkpointNow}) and its end ({@link closeHandle}). Each takes the
 * store's state record (`store_state.ts`).
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Scope from "effect/Scope";
import type { SqlClient } from "effect/sql/SqlClient";
import type { Session } from "../session/session.ts";
import { StorageError } from "../store/errors.ts";
import type { SessionHandle } from "../store/store.ts";
import type { StoreCore } from "../store/core.ts";
import {
  type CheckpointTarget,
  writeCheckpoint,
} from "../store/checkpoint_write.ts";
import type { HandleState } from "./claim.ts";
import { readEventPage } from "./rows.ts";
import { putCheckpoint } from "./checkpoint.ts";
import type { PostgresStoreState } from "./store_state.ts";

/**
 * Runs `f` with a fresh scope, closed unless `f` succeeds; a child of the
 * store's scope, so closing the store closes every writer.
 *
 * @param store The store.
 * @param f Takes the writer's resources into the scope.
 * @returns What `f` returns.
 */
export const withHandleScope = <A, E>(
  store: PostgresStoreState,
  f: (scope: Scope.Closeable) => Effect.Effect<A, E>,
): Effect.Effect<A, E> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(
      Scope.fork(store.scope),
      (scope) =>
        restore(f(scope)).pipe(
          Effect.onExit((exit) =>
            Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit)
          ),
        ),
    )
  );

/**
 * Registers the handle's close with the caller's scope; an interrupted or
 * failed acquisition has already closed its own scope.
 *
 * @param store The store.
 * @param acquire Makes the handle.
 * @returns The handle, closed with the caller's scope.
 */
export const scopedHandle = <E>(
  store: PostgresStoreState,
  acquire: Effect.Effect<SessionHandle, E>,
): Effect.Effect<SessionHandle, E, Scope.Scope> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.tap(
      restore(acquire),
      (handle) => Effect.addFinalizer(() => closeHandle(store)(handle)),
    )
  );

/**
 * Where a checkpoint of `session` goes through the writer's `client`: the
 * checkpoint row, and the stored line of one event when the session does
 * not hold it.
 *
 * @param store The store.
 * @param client The writer's connection.
 * @param session The handle's session.
 * @param mark The handle's newest checkpoint.
 * @returns The target.
 */
export const checkpointTargetOf = (
  store: PostgresStoreState,
  client: SqlClient,
  session: Session,
  mark: HandleState["mark"],
): CheckpointTarget<StorageError> => ({
  mark,
  put: (text) =>
    putCheckpoint(
      client,
      session.header.id,
      session.surface.nextSeq,
      text,
    ).pipe(
      Effect.asVoid,
      Effect.mapError(
        store.failed("write the checkpoint of", session.header.id),
      ),
    ),
  lineAt: (seq) =>
    Effect.map(
      readEventPage(
        client,
        session.header.id,
        seq,
        seq + 1,
        1,
        store.failed,
      ),
      (rows) => rows[0]?.line,
    ),
});

/**
 * After a durable batch that made `next` the handle's session: the
 * checkpoint the policy asks for, if the writer still has its connection
 * and its claim. Derived data: a failed write costs the next open a longer
 * replay only.
 *
 * @param store The store.
 * @param state The writer's state.
 * @param next The session just stored.
 * @returns Never fails.
 */
export const checkpointAfterBatch = (
  store: PostgresStoreState,
  state: HandleState,
  next: Session,
): Effect.Effect<void> =>
  state.client === undefined || state.lostClaim !== undefined
    ? Effect.void
    : store.checkpointer.afterBatch(
      next,
      undefined,
      checkpointTargetOf(store, state.client, next, state.mark),
    );

/**
 * Writes the checkpoint a closing writer owes by the policy's `onClose`,
 * if any, as the checkpointer's `onClose` judges it (which writes
 * synchronously; a row is written over the network). Derived data: a
 * failure, or a connection that does not answer in 5 s, costs the next
 * open a longer replay only.
 *
 * @param store The store.
 * @param state The closing handle's state.
 * @returns Never fails.
 */
export const checkpointOnClose = (
  store: PostgresStoreState,
  state: HandleState,
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const client = state.client;
    const policy = store.policy;
    const since = state.session.surface.nextSeq - state.mark.seq;
    if (
      state.closed || client === undefined ||
      state.lostClaim !== undefined || policy?.onClose === undefined ||
      state.session.surface.nextSeq <= policy.holdLogUpTo || since <= 0 ||
      since < policy.onClose
    ) return Effect.void;
    return Effect.ignore(
      Effect.timeoutOption(
        writeCheckpoint(
          state.session,
          undefined,
          checkpointTargetOf(store, client, state.session, state.mark),
        ),
        "5 seconds",
      ),
    );
  });

/**
 * The store's `close`: the checkpoint a writer owes, then the lease given
 * back and the writer's scope closed.
 *
 * @param store The store.
 * @returns The layer's `close`.
 */
export const closeHandle = (store: PostgresStoreState): StoreCore["close"] =>
  store.handles.close((state) =>
    Effect.andThen(
      checkpointOnClose(store, state),
      store.claims.release(state.session.header.id, state),
    )
  );

/**
 * The store's `checkpoint`: on a write handle, under its permit, writes one
 * now through its connection.
 *
 * @param store The store.
 * @returns The layer's `checkpoint`.
 */
export const checkpointNow = (
  store: PostgresStoreState,
): StoreCore["checkpoint"] =>
  store.checkpointer.now(store.handles, (state) => ({
    bytes: undefined,
    // A write handle always has its connection.
    target: state.client === undefined
      ? {
        mark: state.mark,
        put: () =>
          Effect.fail(
            new StorageError({
              operation:
                `write the checkpoint (no connection) in ${store.address}`,
              id: state.session.header.id,
              code: "connection",
              cause: undefined,
            }),
          ),
        lineAt: undefined,
      }
      : checkpointTargetOf(store, state.client, state.session, state.mark),
  }));
