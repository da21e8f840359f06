/**
 * The JSONL layer of the session store: one file per session in a root
 * folder, `<encoded id>.jsonl`.
 *
 * - **Durable batches.** A batch is encoded, written with one write loop at
 *   the end of the last good line and fdatasynced before it resolves. A
 *   failed write truncates the file back to the last good length; if that
 *   fails too the batch is `AppendOutcomeUnknown` and the handle is
 *   released (see `src/fs/durable_file.ts`).
 * - **No overwrite on create.** A new session (its header, and its events
 *   when created from a session) is written to a temp file, fsynced, and
 *   published with `link`, which fails when the name exists
 *   (`SessionAlreadyExists`); the folder is fsynced after.
 * - **Committed lines are never rewritten.** Opening for write only cuts a
 *   torn tail (a final line without `\n`, which no resolved batch left).
 * - **One writer per session.** Each writer publishes its own claim file
 *   `<file>.lock.<uuid>` (`flock`ed under Deno) and wins only when no other
 *   claim is live (see `src/jsonl/lock.ts`); another writer, in this process
 *   or another, gets `SessionLocked`; a claim whose owner is proven dead is
 *   removed. Readers take no claim and see a snapshot of the complete lines
 *   at open.
 * - **Scoped.** The lock and the descriptor are registered with the scope
 *   before they are taken, and released at once when `open` or `create`
 *   fails or is interrupted (a long read yields between 1 MiB chunks, so a
 *   timeout stops it).
 * - **Follow.** `follow` polls the file (every 50 ms by default) and serves
 *   only complete lines that are in the file (see `follow_file.ts`): it
 *   reads again from the end of the last complete line it served whenever
 *   the file changed, so a torn tail cut by a writer or by `repair` is
 *   never glued to the lines written in its place. A concurrent reader can
 *   see a batch's complete lines before its fsync; a batch whose write
 *   fails is cut back, and is so rare that a follower that served some of
 *   it then fails (`StorageError`, code `ETRUNCATED`) rather than guess;
 *   so does a follower whose served lines were rewritten. With
 *   `waitForSession`, a follow of a missing session looks for its file at
 *   each poll.
 * - **Safe names.** Ids are encoded reversibly into file names (see
 *   `encodeSessionId`); no id can name a path outside the root.
 *
 * File-system failures are `StorageError`s whose `cause` is the
 * `FileIoError` naming the path.
 *
 * @module
 */
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Result from "effect/Result";
import type * as Scope from "effect/Scope";
import * as Semaphore from "effect/Semaphore";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import { knownEvents, Session } from "../session.ts";
import type { FileIoError } from "../fs/errors.ts";
import {
  AppendOutcomeUnknown,
  type InvalidSessionId,
  SessionAlreadyExists,
  type SessionLocked,
  SessionNotFound,
  StorageError,
} from "../store/errors.ts";
import {
  type OpenOptions,
  type SessionHandle,
  SessionStore,
  type WriteError,
} from "../store/store.ts";
import { makeSessionStore, type StoreCore } from "../store/core.ts";
import { scanByteRange } from "../store/history.ts";
import { encodeSessionId } from "../store/ids.ts";
import { SESSION_FILE_EXTENSION, sessionIdOfFileName } from "./names.ts";
import { errorCode, ioError } from "../fs/io.ts";
import {
  acquireClaim,
  type HeldClaim,
  isClaimed,
  releaseClaim,
} from "./lock.ts";
import { DEFAULT_MAX_LINE_BYTES, readSessionFile } from "../log/reader.ts";
import { makeFileFollower } from "./follow_file.ts";
import {
  appendBatch,
  type AppendIo,
  closeQuietly,
  nodeAppendIo,
  publishBytes,
} from "../fs/durable_file.ts";
import { acquireScoped } from "../store/scoped.ts";
import { makeHandleRegistry, writeNewEvents } from "../store/handles.ts";
import {
  createdFrom,
  openWith,
  wholeReport,
  writableLog,
} from "../store/open.ts";
import { encodeBatch, encodeLog, followLines } from "../store/lines.ts";
import {
  type CheckpointMark,
  type CheckpointOptions,
  loadWithCheckpoint,
  type ResolvedPolicy,
  resolvePolicy,
} from "../store/checkpoints.ts";
import {
  type CheckpointTarget,
  makeCheckpointer,
} from "../store/checkpoint_write.ts";
import {
  fileByteLog,
  readCheckpointFile,
  writeCheckpointFile,
} from "./checkpoint_file.ts";

/** Options of {@link layerJsonlStore}. */
export interface JsonlStoreOptions {
  /** The folder; created when missing. */
  readonly root: string;
  /** How often `follow` looks at a file for new lines; 50 ms by default. */
  readonly pollInterval?: Duration.Input;
  /**
   * When to write checkpoints (`<file>.checkpoint`, beside the session's
   * file): every 10,000 events, and on close after 1,000, by default;
   * `false` for none (then opens never read one either).
   */
  readonly checkpoints?: CheckpointOptions;
}

interface HandleState {
  session: Session;
  length: number;
  fd: number | undefined;
  lock: HeldClaim | undefined;
  closed: boolean;
  readonly mark: CheckpointMark;
  readonly path: string;
  readonly semaphore: Semaphore.Semaphore;
}

const storageError = (
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

/**
 * Makes a JSONL session store over a folder (created when missing).
 *
 * @param options The root folder.
 * @returns `Effect<SessionStore, StorageError>`.
 *
 * @example Listing an empty store
 * ```ts
 * import { makeJsonlStore } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 * import assert from "node:assert/strict";
 *
 * const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "store-")), "sessions");
 * const ids = Effect.runSync(Effect.flatMap(makeJsonlStore({ root }), (store) => store.list()));
 * assert.deepEqual(ids, []);
 * ```
 */
export function makeJsonlStore(
  options: JsonlStoreOptions,
): Effect.Effect<SessionStore, StorageError> {
  return makeJsonlStoreWith(options, nodeAppendIo);
}

/**
 * A JSONL store whose append path goes through `io`; for tests.
 *
 * @param options The root folder.
 * @param io The file calls of an append.
 * @returns `Effect<SessionStore, StorageError>`.
 * @internal
 */
export function makeJsonlStoreWith(
  options: JsonlStoreOptions,
  io: AppendIo,
): Effect.Effect<SessionStore, StorageError> {
  return Effect.suspend(() => {
    const root = nodePath.resolve(options.root);
    try {
      fs.mkdirSync(root, { recursive: true });
    } catch (cause) {
      return Effect.fail(
        storageError(
          "create the store",
          undefined,
          ioError("create the store folder", root, cause),
        ),
      );
    }
    return Effect.succeed(
      makeSessionStore(
        makeCore(
          root,
          io,
          options.pollInterval ?? Duration.millis(50),
          resolvePolicy(options.checkpoints),
        ),
      ),
    );
  });
}

/**
 * The JSONL layer of `SessionStore` over a folder.
 *
 * @param options The root folder.
 * @returns `Layer<SessionStore, StorageError>`.
 *
 * @example Writing through a scoped handle
 * ```ts
 * import { layerJsonlStore, SessionStore } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 * import assert from "node:assert/strict";
 *
 * const root = fs.mkdtempSync(path.join(os.tmpdir(), "store-"));
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   yield* Effect.scoped(store.create({ id: "chat", createdAt: 0, isSeeded: false }));
 *   const { events } = yield* store.withSession("chat", (writer) =>
 *     store.append(writer, [{ type: "turn/start", data: { turn: 0 } }]));
 *   return [events[0]?.seq, yield* store.list()] as const;
 * });
 * const [seq, ids] = await Effect.runPromise(program.pipe(Effect.provide(layerJsonlStore({ root }))));
 * assert.deepEqual([seq, ids], [0, ["chat"]]);
 * ```
 */
export function layerJsonlStore(
  options: JsonlStoreOptions,
): Layer.Layer<SessionStore, StorageError> {
  return Layer.effect(SessionStore, makeJsonlStore(options));
}

const makeCore = (
  root: string,
  io: AppendIo,
  pollInterval: Duration.Input,
  policy: ResolvedPolicy | undefined,
): StoreCore => {
  const handles = makeHandleRegistry<HandleState>();

  const pathOf = (id: string): Result.Result<string, InvalidSessionId> =>
    Result.map(
      encodeSessionId(id),
      (stem) => nodePath.join(root, `${stem}${SESSION_FILE_EXTENSION}`),
    );

  const newState = (path: string, session: Session): HandleState => ({
    session,
    length: 0,
    fd: undefined,
    lock: undefined,
    closed: false,
    mark: { seq: 0, since: undefined },
    path,
    semaphore: Semaphore.makeUnsafe(1),
  });

  const makeHandle = handles.make;

  const checkpointer = makeCheckpointer(policy);
  const target = (state: HandleState): CheckpointTarget<StorageError> => ({
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
  const checkpointOnClose = (state: HandleState): void => {
    if (state.closed || state.fd === undefined || state.lock === undefined) {
      return;
    }
    checkpointer.onClose(state.session, state.length, target(state));
  };

  /** Releases what a handle holds; idempotent. */
  const release = (state: HandleState, checkpoint = true): void => {
    if (checkpoint) checkpointOnClose(state);
    closeQuietly(state.fd);
    state.fd = undefined;
    if (state.lock !== undefined) releaseClaim(state.lock);
    state.lock = undefined;
    state.closed = true;
  };

  const scoped = <E>(
    state: HandleState,
    build: Effect.Effect<SessionHandle, E>,
  ): Effect.Effect<SessionHandle, E, Scope.Scope> =>
    acquireScoped(() => release(state), build);

  const takeLock = (
    state: HandleState,
    id: string,
  ): Effect.Effect<void, SessionLocked | StorageError> =>
    Effect.mapError(
      acquireClaim(state.path, id, (claim) => {
        state.lock = claim;
      }),
      (error) =>
        error._tag === "SessionLocked"
          ? error
          : storageError("claim", id, error),
    );

  /** Opens the file for appending into `state`, cutting a torn tail. */
  const openFd = (state: HandleState, id: string, cut: number | undefined) =>
    Effect.suspend(() => {
      try {
        state.fd = fs.openSync(state.path, "r+");
        if (cut !== undefined) {
          fs.ftruncateSync(state.fd, cut);
          fs.fsyncSync(state.fd);
        }
      } catch (cause) {
        return Effect.fail(
          storageError(
            "open",
            id,
            ioError("open for write", state.path, cause),
          ),
        );
      }
      return Effect.void;
    });

  const create: StoreCore["create"] = (init, options) =>
    Effect.suspend((): ReturnType<StoreCore["create"]> => {
      const { header, vocabulary, session } = createdFrom(init, options);
      const located = pathOf(header.id);
      if (Result.isFailure(located)) return Effect.fail(located.failure);
      const state = newState(located.success, session);
      const id = header.id;
      return scoped(
        state,
        Effect.gen(function* () {
          yield* takeLock(state, id);
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
          yield* openFd(state, id, undefined);
          state.length = bytes.length;
          const events = session.surface.nextSeq - session.surface.baseSeq;
          return makeHandle(id, "write", wholeReport(events), state);
        }),
      );
    });

  /** The file of an existing session, or why there is none. */
  const locate = (
    id: string,
  ): Result.Result<string, InvalidSessionId | SessionNotFound> => {
    const located = pathOf(id);
    if (Result.isFailure(located)) return located;
    return fs.existsSync(located.success)
      ? located
      : Result.fail(new SessionNotFound({ id }));
  };

  const read = <E>(
    id: string,
    path: string,
    options: OpenOptions<E>,
    strict: boolean,
  ) =>
    Effect.mapError(
      loadWithCheckpoint(
        policy,
        // An unreadable checkpoint is no checkpoint: it is derived data.
        (maxLineBytes) =>
          Effect.orElseSucceed(
            readCheckpointFile(path, maxLineBytes),
            () => undefined,
          ),
        fileByteLog(path),
        options,
        strict,
        (read) => readSessionFile(path, read),
      ),
      (error) =>
        typeof error === "object" && error !== null && "_tag" in error &&
          error._tag === "FileIoError"
          ? error.code === "ENOENT"
            ? new SessionNotFound({ id })
            : storageError("open", id, error)
          : error,
    );

  const open: StoreCore["open"] = openWith(
    locate,
    (id, path, options) =>
      Effect.map(read(id, path, options, false), (loaded) => {
        const state = newState(path, loaded.log.session);
        Object.assign(state.mark, loaded.mark);
        return makeHandle(id, "read", loaded.report, state);
      }),
    (id, path, options) => {
      const state = newState(
        path,
        Session.make({ id, createdAt: 0, isSeeded: false }),
      );
      return scoped(
        state,
        Effect.gen(function* () {
          yield* takeLock(state, id);
          const loaded = yield* read(id, path, options, true);
          const log = yield* writableLog(loaded.log);
          yield* openFd(
            state,
            id,
            log.report.tornTail === undefined ? undefined : log.report.bytes,
          );
          state.session = log.session;
          state.length = log.report.bytes;
          Object.assign(state.mark, loaded.mark);
          return makeHandle(id, "write", loaded.report, state);
        }),
      );
    },
  );

  /** Writes the events of `next` past the handle's session, durably. */
  const commit: StoreCore["commit"] = handles.commit((handle, state, next) =>
    writeNewEvents(
      handle,
      state,
      next,
      state.fd,
      (fd, from, to): Effect.Effect<void, WriteError> => {
        const bytes = encodeBatch(next, from);
        const outcome = appendBatch(io, fd, state.length, bytes);
        switch (outcome._tag) {
          case "Written":
            state.length += bytes.length;
            // Derived data, after the batch is durable: a failed
            // checkpoint write costs the next open a longer replay only.
            return checkpointer.afterBatch(next, state.length, target(state));
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
            release(state, false);
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
    )
  );

  const follow: StoreCore["follow"] = (id, options) =>
    followLines(
      () => locate(id),
      options,
      (path, follower) => {
        const file = makeFileFollower(path, follower, DEFAULT_MAX_LINE_BYTES);
        return {
          read: Effect.suspend(() => {
            const looked = file.look();
            if (Result.isSuccess(looked)) return Effect.succeed(looked.success);
            const error = looked.failure;
            return Effect.fail(
              error._tag === "FileIoError"
                ? storageError("follow", id, error)
                : error,
            );
          }),
          idle: Effect.sleep(pollInterval),
        };
      },
      Effect.sleep(pollInterval),
    );

  const readRange: StoreCore["readRange"] = (id, from, to, vocabulary, index) =>
    Effect.suspend((): ReturnType<StoreCore["readRange"]> => {
      const located = locate(id);
      if (Result.isFailure(located)) return Effect.fail(located.failure);
      return Effect.mapError(
        scanByteRange(
          fileByteLog(located.success).range,
          from,
          to,
          vocabulary,
          index,
        ),
        (error) =>
          error._tag === "FileIoError"
            ? storageError("read the events of", id, error)
            : error,
      );
    });

  const list: StoreCore["list"] = () =>
    Effect.suspend(() => {
      const ids: string[] = [];
      let names: string[];
      try {
        names = fs.readdirSync(root);
      } catch (cause) {
        return Effect.fail(
          storageError("list", undefined, ioError("list", root, cause)),
        );
      }
      for (const name of names) {
        const id = sessionIdOfFileName(name);
        if (id !== undefined) ids.push(id);
      }
      return Effect.succeed(ids.sort());
    });

  const stat: StoreCore["stat"] = (id) =>
    Effect.suspend((): ReturnType<StoreCore["stat"]> => {
      const located = pathOf(id);
      if (Result.isFailure(located)) return Effect.fail(located.failure);
      const path = located.success;
      let info: fs.Stats;
      try {
        info = fs.statSync(path);
      } catch (cause) {
        return errorCode(cause) === "ENOENT"
          ? Effect.fail(new SessionNotFound({ id }))
          : Effect.fail(storageError("stat", id, ioError("stat", path, cause)));
      }
      return Effect.succeed({
        id,
        bytes: info.size,
        modifiedAt: info.mtimeMs,
        locked: isClaimed(path),
      });
    });

  const close: StoreCore["close"] = handles.close((state) =>
    Effect.sync(() => release(state))
  );

  const checkpoint = checkpointer.now(handles, (state) => ({
    bytes: state.length,
    target: target(state),
  }));

  const reads = { follow, readRange, list, stat };
  return { create, open, commit, close, checkpoint, ...reads };
};
