/**
 * What the steps of the JSONL store share: the store's state record
 * ({@link JsonlStoreState}: the root, the append's file calls, the poll
 * interval, the checkpoint policy, the handles), the state behind one
 * handle ({@link JsonlHandleState}), and the steps every operation uses
 * around a handle: where a session's file is, taking the claim, opening
 * the descriptor, releasing both, and the handle's checkpoints. The
 * operations themselves are `store_write.ts` (create, open for write,
 * append) and `store_read.ts` (open for read, follow, ranges, list,
 * stat); `store.ts` assembles them.
 *
 * @module
 * @internal
 */
import type * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import type * as Scope from "effect/Scope";
import * as Semaphore from "effect/Semaphore";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import type { Session } from "../session/session.ts";
import type { FileIoError } from "../fs/errors.ts";
import {
  type InvalidSessionId,
  type SessionLocked,
  SessionNotFound,
  StorageError,
} from "../store/errors.ts";
import type { SessionHandle } from "../store/store.ts";
import type { StoreCore } from "../store/core.ts";
import { encodeSessionId } from "../store/ids.ts";
import { ioError } from "../fs/io.ts";
import { type AppendIo, closeQuietly } from "../fs/durable_file.ts";
import { acquireScoped } from "../store/scoped.ts";
import { type HandleRegistry, makeHandleRegistry } from "../store/handles.ts";
import type { CheckpointMark, ResolvedPolicy } from "../store/checkpoints.ts";
import {
  type Checkpointer,
  type CheckpointTarget,
  makeCheckpointer,
} from "../store/checkpoint_write.ts";
import { SESSION_FILE_EXTENSION } from "./names.ts";
import { type CatalogueCache, makeCatalogueCache } from "./catalogue.ts";
import { acquireClaim, type HeldClaim, releaseClaim } from "./lock.ts";
import { fileByteLog, writeCheckpointFile } from "./checkpoint_file.ts";

/** What one JSONL store holds: everything its steps read besides a handle. */
export interface JsonlStoreState {
  /** The folder, resolved. */
  readonly root: string;
  /** The file calls of an append. */
  readonly io: AppendIo;
  /** How often `follow` looks at a file. */
  readonly pollInterval: Duration.Input;
  /** When checkpoints are written (undefined: never on their own). */
  readonly policy: ResolvedPolicy | undefined;
  /** Writes checkpoints under `policy`. */
  readonly checkpointer: Checkpointer;
  /** The store's handles and the state behind each. */
  readonly handles: HandleRegistry<JsonlHandleState>;
  /** The catalogue index as this process holds it. */
  readonly catalogue: CatalogueCache;
}

/** The state behind one handle of the JSONL store. */
export interface JsonlHandleState {
  /** The handle's current session. */
  session: Session;
  /** The length of the file's complete lines, where the next batch goes. */
  length: number;
  /** A writer's descriptor, open for appending; undefined once released. */
  fd: number | undefined;
  /** A writer's claim; undefined once released. */
  lock: HeldClaim | undefined;
  /** Set once the handle is released. */
  closed: boolean;
  /** The newest checkpoint of the session, as the handle knows it. */
  readonly mark: CheckpointMark;
  /** The session's file. */
  readonly path: string;
  /** One commit at a time per handle. */
  readonly semaphore: Semaphore.Semaphore;
}

/**
 * The state record of a store over `root` (already resolved and created).
 *
 * @param root The folder.
 * @param io The file calls of an append.
 * @param pollInterval How often `follow` looks at a file.
 * @param policy When checkpoints are written.
 * @returns The store's state, with no handle yet.
 */
export const makeJsonlStoreState = (
  root: string,
  io: AppendIo,
  pollInterval: Duration.Input,
  policy: ResolvedPolicy | undefined,
): JsonlStoreState => ({
  root,
  io,
  pollInterval,
  policy,
  checkpointer: makeCheckpointer(policy),
  handles: makeHandleRegistry<JsonlHandleState>(),
  catalogue: makeCatalogueCache(),
});

/**
 * A file-system failure as the store reports it: a `StorageError` whose
 * cause is the `FileIoError` naming the path.
 */
export const storageError = (
  operation: string,
  id: string | undefined,
  error: FileIoError,
): StorageError =>
  new StorageError({
    operation,
    id,
    code: error.code,
    cause: error,
    ...(error.permission === undefined ? {} : { permission: error.permission }),
  });

/** The file of session `id`, existing or not. */
export const pathOf = (
  store: JsonlStoreState,
  id: string,
): Result.Result<string, InvalidSessionId> =>
  Result.map(
    encodeSessionId(id),
    (stem) => nodePath.join(store.root, `${stem}${SESSION_FILE_EXTENSION}`),
  );

/** The file of an existing session, or why there is none. */
export const locate = (
  store: JsonlStoreState,
  id: string,
): Result.Result<string, InvalidSessionId | SessionNotFound> => {
  const located = pathOf(store, id);
  if (Result.isFailure(located)) return located;
  return fs.existsSync(located.success)
    ? located
    : Result.fail(new SessionNotFound({ id }));
};

/** The state of a handle on the file at `path`, holding nothing yet. */
export const newHandleState = (
  path: string,
  session: Session,
): JsonlHandleState => ({
  session,
  length: 0,
  fd: undefined,
  lock: undefined,
  closed: false,
  mark: { seq: 0, since: undefined },
  path,
  semaphore: Semaphore.makeUnsafe(1),
});

/** Where a handle's checkpoints go: the file beside its session's. */
export const checkpointTarget = (
  state: JsonlHandleState,
): CheckpointTarget<StorageError> => ({
  mark: state.mark,
  put: (text) =>
    Effect.mapError(
      writeCheckpointFile(state.path, text),
      (error) => storageError("checkpoint", undefined, error),
    ),
  range: (offset, length) =>
    Effect.mapError(
      fileByteLog(state.path).range(offset, length),
      (error) => storageError("checkpoint", undefined, error),
    ),
});

/** Writes the checkpoint a closing writer owes, if any; never fails. */
export const checkpointOnClose = (
  store: JsonlStoreState,
  state: JsonlHandleState,
): void => {
  if (state.closed || state.fd === undefined || state.lock === undefined) {
    return;
  }
  store.checkpointer.onClose(
    state.session,
    state.length,
    checkpointTarget(state),
  );
};

/**
 * Releases what a handle holds (its descriptor, its claim), after the
 * checkpoint it owes unless `checkpoint` is false; idempotent.
 */
export const releaseHandle = (
  store: JsonlStoreState,
  state: JsonlHandleState,
  checkpoint = true,
): void => {
  if (checkpoint) checkpointOnClose(store, state);
  closeQuietly(state.fd);
  state.fd = undefined;
  if (state.lock !== undefined) releaseClaim(state.lock);
  state.lock = undefined;
  state.closed = true;
};

/**
 * Runs `build`, which takes resources into `state`, so that they are
 * released with the caller's scope, and at once when `build` fails or is
 * interrupted.
 */
export const scopedHandle = <E>(
  store: JsonlStoreState,
  state: JsonlHandleState,
  build: Effect.Effect<SessionHandle, E>,
): Effect.Effect<SessionHandle, E, Scope.Scope> =>
  acquireScoped(() => releaseHandle(store, state), build);

/** Takes the writer's claim on the session into `state`. */
export const takeClaim = (
  state: JsonlHandleState,
  id: string,
): Effect.Effect<void, SessionLocked | StorageError> =>
  Effect.mapError(
    acquireClaim(state.path, id, (claim) => {
      state.lock = claim;
    }),
    (error) =>
      error._tag === "SessionLocked" ? error : storageError("claim", id, error),
  );

/** Opens the file for appending into `state`, cutting a torn tail at `cut`. */
export const openDescriptor = (
  state: JsonlHandleState,
  id: string,
  cut: number | undefined,
): Effect.Effect<void, StorageError> =>
  Effect.suspend(() => {
    try {
      state.fd = fs.openSync(state.path, "r+");
      if (cut !== undefined) {
        fs.ftruncateSync(state.fd, cut);
        fs.fsyncSync(state.fd);
      }
    } catch (cause) {
      return Effect.fail(
        storageError("open", id, ioError("open for write", state.path, cause)),
      );
    }
    return Effect.void;
  });

/** The store's `close`: releases the handle, after the checkpoint it owes. */
export const closeHandle = (store: JsonlStoreState): StoreCore["close"] =>
  store.handles.close((state) =>
    Effect.sync(() => releaseHandle(store, state))
  );

/** The store's `checkpoint`: writes one now through the handle's target. */
export const checkpointNow = (
  store: JsonlStoreState,
): StoreCore["checkpoint"] =>
  store.checkpointer.now(store.handles, (state) => ({
    bytes: state.length,
    target: checkpointTarget(state),
  }));
