/**
 * The session store: an effect service over a folder of JSONL logs, one
 * file per session, and its JSONL layer.
 *
 * Guarantees of the JSONL store:
 *
 * - **Durable appends.** A batch is encoded, written with one write call at
 *   the end of the last good line and fsynced before `append` succeeds. A
 *   failed write truncates the file back to the last good length.
 * - **No overwrite on create.** A new session is written to a temp file,
 *   fsynced, and published with `link`, which fails when the name exists
 *   (`SessionAlreadyExists`); the folder is fsynced after.
 * - **Committed lines are never rewritten.** Opening for write only cuts a
 *   torn tail (a final line without `\n`, which no resolved append left).
 * - **One writer per session.** A writer holds `<file>.lock` (pid, process
 *   start time, token); another writer, in this process or another, gets
 *   `SessionLocked`; a lock left by a dead process is reclaimed. Readers
 *   take no lock and see a snapshot of the complete lines at open.
 * - **Safe names.** Ids are encoded reversibly into file names (see
 *   {@link encodeSessionId}); no id can name a path outside the root.
 *
 * Calls are synchronous `node:fs` calls inside effects, so the store runs
 * the same on Deno and Node. Reading uses the streaming reader.
 *
 * @module
 */
import { Context, Effect, Layer, Result, Semaphore } from "effect";
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import type { SessionEvent } from "../event.ts";
import type { Vocabulary } from "../decode.ts";
import type { SurfaceError } from "../errors.ts";
import {
  type AppendError,
  type EventDraft,
  Session,
  type SessionHeader,
} from "../session.ts";
import { logEvent } from "../surface/mod.ts";
import { interruptedTurnClosers } from "../repair.ts";
import { encodeEventLine, encodeHeaderLine } from "./codec.ts";
import {
  FormatTooOld,
  HandleClosed,
  type InvalidSessionId,
  type JsonlIoError,
  type LogReadError,
  ReadOnlyHandle,
  SessionAlreadyExists,
  type SessionLocked,
  SessionNotFound,
} from "./errors.ts";
import { decodeSessionId, encodeSessionId } from "./ids.ts";
import { errorCode, ioError } from "./io.ts";
import { acquireLock, type HeldLock, isLocked, releaseLock } from "./lock.ts";
import { type Migration, type ReadReport, readSessionFile } from "./reader.ts";
import { FORMAT_VERSION } from "../event.ts";

/** How a session is opened. */
export type OpenMode = "read" | "write";

/** An open session. */
export interface SessionHandle {
  /** The session id. */
  readonly id: string;
  /** How it was opened. */
  readonly mode: OpenMode;
  /** The file. */
  readonly path: string;
  /** The session as of the last append (or as read, for a reader). */
  readonly session: Session;
  /** What the reader saw when the session was opened. */
  readonly report: ReadReport;
}

/** Options of {@link SessionStore} `open`. */
export interface OpenOptions<E = never> {
  /** `read` (the default) or `write`. */
  readonly mode?: OpenMode;
  /** Extra log-only types the session's events may have. */
  readonly vocabulary?: Vocabulary;
  /** The longest line accepted, in bytes; 256 MiB by default. */
  readonly maxLineBytes?: number;
  /** Read handles only: serve the valid prefix before a bad line. */
  readonly recover?: boolean;
  /** Read handles only: migrates an older log in memory. */
  readonly migrate?: Migration<E>;
}

/** Options of {@link SessionStore} `create`. */
export interface CreateOptions {
  /** Extra log-only types the session's events may have. */
  readonly vocabulary?: Vocabulary;
}

/** What `stat` tells about a stored session. */
export interface SessionStat {
  /** The session id. */
  readonly id: string;
  /** The file. */
  readonly path: string;
  /** The file's size in bytes. */
  readonly bytes: number;
  /** The file's last modification, epoch milliseconds. */
  readonly modifiedAt: number;
  /** Whether a live writer holds the session's lock. */
  readonly locked: boolean;
}

/** What `repair` did. */
export interface RepairResult {
  /** The session after the closers. */
  readonly session: Session;
  /** The closers appended; empty when the last turn was closed. */
  readonly closers: ReadonlyArray<SessionEvent>;
}

/** Errors of opening a session. */
export type OpenError =
  | InvalidSessionId
  | SessionNotFound
  | SessionLocked
  | LogReadError
  | JsonlIoError;

/** Errors of appending to a handle. */
export type WriteError = ReadOnlyHandle | HandleClosed | JsonlIoError;

/** The operations of a session store. */
export interface SessionStore {
  /** The folder holding the sessions. */
  readonly root: string;
  /**
   * Creates a session and opens it for writing; never overwrites.
   *
   * @param header The new session's header.
   * @param options The vocabulary.
   * @returns `Effect<SessionHandle, InvalidSessionId | SessionAlreadyExists
   * | SessionLocked | JsonlIoError>`.
   */
  readonly create: (
    header: SessionHeader,
    options?: CreateOptions,
  ) => Effect.Effect<
    SessionHandle,
    InvalidSessionId | SessionAlreadyExists | SessionLocked | JsonlIoError
  >;
  /**
   * Opens a session. A writer takes the lock and cuts a torn tail; a
   * reader sees the complete lines. Writers read strictly and refuse older
   * versions (`FormatTooOld`): migrate to a new file first.
   *
   * @param id The session id.
   * @param options Mode, vocabulary, limits; `recover` and `migrate` for readers.
   * @returns `Effect<SessionHandle, InvalidSessionId | SessionNotFound |
   * SessionLocked | LogReadError | JsonlIoError | E>`.
   */
  readonly open: <E = never>(
    id: string,
    options?: OpenOptions<E>,
  ) => Effect.Effect<SessionHandle, OpenError | E>;
  /**
   * Appends drafts as one durable batch: seqs and the `Clock` time assigned,
   * decoded, folded, written and fsynced. All or nothing.
   *
   * @param handle A write handle.
   * @param drafts The events without seq and time.
   * @returns `Effect<Session, EventDecodeError | SurfaceError |
   * ReadOnlyHandle | HandleClosed | JsonlIoError>`.
   */
  readonly append: (
    handle: SessionHandle,
    drafts: Iterable<EventDraft>,
  ) => Effect.Effect<Session, AppendError | WriteError>;
  /**
   * Appends decoded events (seqs and times set) as one durable batch.
   *
   * @param handle A write handle.
   * @param events Events continuing the log.
   * @returns `Effect<Session, SurfaceError | ReadOnlyHandle | HandleClosed |
   * JsonlIoError>`.
   */
  readonly appendEvents: (
    handle: SessionHandle,
    events: Iterable<SessionEvent>,
  ) => Effect.Effect<Session, SurfaceError | WriteError>;
  /**
   * Appends the closers of an interrupted last turn
   * ({@link interruptedTurnClosers}) as one durable batch.
   *
   * @param handle A write handle.
   * @returns `Effect<RepairResult, SurfaceError | ReadOnlyHandle |
   * HandleClosed | JsonlIoError>`.
   */
  readonly repair: (
    handle: SessionHandle,
  ) => Effect.Effect<RepairResult, SurfaceError | WriteError>;
  /**
   * The ids of the stored sessions, sorted.
   *
   * @returns `Effect<ReadonlyArray<string>, JsonlIoError>`.
   */
  readonly list: () => Effect.Effect<ReadonlyArray<string>, JsonlIoError>;
  /**
   * The size, time and lock state of a stored session.
   *
   * @param id The session id.
   * @returns `Effect<SessionStat, InvalidSessionId | SessionNotFound |
   * JsonlIoError>`.
   */
  readonly stat: (
    id: string,
  ) => Effect.Effect<
    SessionStat,
    InvalidSessionId | SessionNotFound | JsonlIoError
  >;
  /**
   * Closes a handle: releases a writer's lock and file. Idempotent.
   *
   * @param handle A handle.
   * @returns `Effect<void>`.
   */
  readonly close: (handle: SessionHandle) => Effect.Effect<void>;
}

/**
 * The session store service. Provide it with {@link layerJsonlStore}.
 *
 * @example Creating, appending and reopening
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
 *   const writer = yield* store.create({ id: "chat", createdAt: 0, isSeeded: false });
 *   yield* store.append(writer, [{ type: "turn/start", data: { turn: 0 } }]);
 *   yield* store.close(writer);
 *   const reader = yield* store.open("chat");
 *   return reader.report.lines;
 * });
 * const lines = await Effect.runPromise(program.pipe(Effect.provide(layerJsonlStore({ root }))));
 * assert.equal(lines, 2);
 * ```
 */
export const SessionStore: Context.Service<SessionStore, SessionStore> = Context
  .Service<SessionStore>("@palimpsest/session/SessionStore");

/** Options of {@link makeJsonlStore}. */
export interface JsonlStoreOptions {
  /** The folder; created when missing. */
  readonly root: string;
}

interface HandleState {
  session: Session;
  length: number;
  fd: number | undefined;
  lock: HeldLock | undefined;
  closed: boolean;
  readonly semaphore: Semaphore.Semaphore;
}

const EXTENSION = ".jsonl";
const encoder = new TextEncoder();

const fsyncDirectory = (dir: string): void => {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, "r");
    fs.fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a directory; the file itself is synced.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
};

/**
 * The file calls of the append path, replaceable so tests can make a write
 * fail half way.
 * @internal
 */
export interface AppendIo {
  /** `fs.writeSync(fd, bytes, offset, length, position)`. */
  readonly write: (
    fd: number,
    bytes: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ) => number;
  /** `fs.fdatasyncSync(fd)`. */
  readonly sync: (fd: number) => void;
  /** `fs.ftruncateSync(fd, length)`. */
  readonly truncate: (fd: number, length: number) => void;
}

const nodeIo: AppendIo = {
  write: (fd, bytes, offset, length, position) =>
    fs.writeSync(fd, bytes, offset, length, position),
  sync: (fd) => fs.fdatasyncSync(fd),
  truncate: (fd, length) => fs.ftruncateSync(fd, length),
};

const writeAll = (
  io: AppendIo,
  fd: number,
  bytes: Uint8Array,
  position: number,
): void => {
  let done = 0;
  while (done < bytes.length) {
    done += io.write(fd, bytes, done, bytes.length - done, position + done);
  }
};

const closeQuietly = (fd: number | undefined): void => {
  if (fd === undefined) return;
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed.
  }
};

/**
 * Makes a JSONL session store over a folder (created when missing).
 *
 * @param options The root folder.
 * @returns `Effect<SessionStore, JsonlIoError>`.
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
): Effect.Effect<SessionStore, JsonlIoError> {
  const root = nodePath.resolve(options.root);
  return Effect.try({
    try: () => {
      fs.mkdirSync(root, { recursive: true });
      return makeStore(root, nodeIo);
    },
    catch: (cause) => ioError("create the store folder", root, cause),
  });
}

/**
 * The JSONL layer of {@link SessionStore} over a folder.
 *
 * @param options The root folder.
 * @returns `Layer<SessionStore, JsonlIoError>`.
 *
 * @example Providing the store
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
 *   return yield* store.list();
 * });
 * const ids = Effect.runSync(program.pipe(Effect.provide(layerJsonlStore({ root }))));
 * assert.deepEqual(ids, []);
 * ```
 */
export function layerJsonlStore(
  options: JsonlStoreOptions,
): Layer.Layer<SessionStore, JsonlIoError> {
  return Layer.effect(SessionStore, makeJsonlStore(options));
}

/**
 * A JSONL store whose append path goes through `io`; for tests.
 * @internal
 */
export const makeStore = (root: string, io: AppendIo): SessionStore => {
  const states = new WeakMap<SessionHandle, HandleState>();

  const pathOf = (
    id: string,
  ): Result.Result<string, InvalidSessionId> =>
    Result.map(
      encodeSessionId(id),
      (stem) => nodePath.join(root, `${stem}${EXTENSION}`),
    );

  const makeHandle = (
    id: string,
    mode: OpenMode,
    path: string,
    report: ReadReport,
    state: HandleState,
  ): SessionHandle => {
    const handle: SessionHandle = {
      id,
      mode,
      path,
      report,
      get session(): Session {
        return state.session;
      },
    };
    states.set(handle, state);
    return handle;
  };

  const release = (state: HandleState): void => {
    closeQuietly(state.fd);
    state.fd = undefined;
    if (state.lock !== undefined) releaseLock(state.lock);
    state.lock = undefined;
    state.closed = true;
  };

  const create: SessionStore["create"] = (header, options) =>
    Effect.suspend((): ReturnType<SessionStore["create"]> => {
      const located = pathOf(header.id);
      if (Result.isFailure(located)) return Effect.fail(located.failure);
      const path = located.success;
      const locked = acquireLock(`${path}.lock`, header.id);
      if (Result.isFailure(locked)) return Effect.fail(locked.failure);
      const lock = locked.success;
      const fail = <E>(error: E): Effect.Effect<never, E> => {
        releaseLock(lock);
        return Effect.fail(error);
      };
      if (fs.existsSync(path)) {
        return fail(new SessionAlreadyExists({ id: header.id }));
      }
      const text = encodeHeaderLine(header);
      const temp = nodePath.join(root, `.${randomUUID()}.tmp`);
      let fd: number | undefined;
      try {
        fd = fs.openSync(temp, "wx");
        writeAll(nodeIo, fd, encoder.encode(text), 0);
        fs.fsyncSync(fd);
        fs.closeSync(fd);
        fd = undefined;
      } catch (cause) {
        closeQuietly(fd);
        try {
          fs.unlinkSync(temp);
        } catch {
          // Never created.
        }
        return fail(ioError("write", temp, cause));
      }
      try {
        fs.linkSync(temp, path);
      } catch (cause) {
        fs.rmSync(temp, { force: true });
        return errorCode(cause) === "EEXIST"
          ? fail(new SessionAlreadyExists({ id: header.id }))
          : fail(ioError("publish", path, cause));
      }
      fs.rmSync(temp, { force: true });
      fsyncDirectory(root);
      let writeFd: number;
      try {
        writeFd = fs.openSync(path, "r+");
      } catch (cause) {
        return fail(ioError("open", path, cause));
      }
      const bytes = encoder.encode(text).length;
      const state: HandleState = {
        session: Session.make(
          header,
          options?.vocabulary === undefined
            ? undefined
            : { vocabulary: options.vocabulary },
        ),
        length: bytes,
        fd: writeFd,
        lock,
        closed: false,
        semaphore: Semaphore.makeUnsafe(1),
      };
      const report: ReadReport = {
        lines: 1,
        bytes,
        tornTail: undefined,
        crlfLines: 0,
        stoppedAt: undefined,
      };
      return Effect.succeed(
        makeHandle(header.id, "write", path, report, state),
      );
    });

  const open = <E = never>(
    id: string,
    options?: OpenOptions<E>,
  ): Effect.Effect<SessionHandle, OpenError | E> =>
    Effect.suspend((): Effect.Effect<SessionHandle, OpenError | E> => {
      const located = pathOf(id);
      if (Result.isFailure(located)) return Effect.fail(located.failure);
      const path = located.success;
      if (!fs.existsSync(path)) return Effect.fail(new SessionNotFound({ id }));
      const mode = options?.mode ?? "read";
      const vocabulary = options?.vocabulary === undefined
        ? {}
        : { vocabulary: options.vocabulary };
      const limits = options?.maxLineBytes === undefined
        ? {}
        : { maxLineBytes: options.maxLineBytes };
      if (mode === "read") {
        const readOptions = {
          ...vocabulary,
          ...limits,
          ...(options?.recover === undefined
            ? {}
            : { recover: options.recover }),
          ...(options?.migrate === undefined
            ? {}
            : { migrate: options.migrate }),
        };
        return Effect.map(
          readSessionFile(path, readOptions),
          (log) =>
            makeHandle(id, "read", path, log.report, {
              session: log.session,
              length: log.report.bytes,
              fd: undefined,
              lock: undefined,
              closed: false,
              semaphore: Semaphore.makeUnsafe(1),
            }),
        );
      }
      const locked = acquireLock(`${path}.lock`, id);
      if (Result.isFailure(locked)) return Effect.fail(locked.failure);
      const lock = locked.success;
      return readSessionFile(path, { ...vocabulary, ...limits }).pipe(
        Effect.flatMap((log): Effect.Effect<SessionHandle, OpenError> => {
          if (log.version !== FORMAT_VERSION) {
            return Effect.fail(
              new FormatTooOld({
                version: log.version,
                supported: FORMAT_VERSION,
              }),
            );
          }
          return Effect.try({
            try: () => {
              const fd = fs.openSync(path, "r+");
              try {
                if (log.report.tornTail !== undefined) {
                  fs.ftruncateSync(fd, log.report.bytes);
                  fs.fsyncSync(fd);
                }
              } catch (cause) {
                closeQuietly(fd);
                throw cause;
              }
              return makeHandle(id, "write", path, log.report, {
                session: log.session,
                length: log.report.bytes,
                fd,
                lock,
                closed: false,
                semaphore: Semaphore.makeUnsafe(1),
              });
            },
            catch: (cause) => ioError("cut the torn tail of", path, cause),
          });
        }),
        Effect.tapError(() => Effect.sync(() => releaseLock(lock))),
      );
    });

  /** Writes the events of `next` past the handle's session, durably. */
  const commit = (
    handle: SessionHandle,
    state: HandleState,
    next: Session,
  ): Effect.Effect<Session, JsonlIoError | HandleClosed> =>
    Effect.suspend((): Effect.Effect<Session, JsonlIoError | HandleClosed> => {
      const fd = state.fd;
      if (state.closed || fd === undefined) {
        return Effect.fail(new HandleClosed({ id: handle.id }));
      }
      const from = state.session.surface.nextSeq;
      const to = next.surface.nextSeq;
      if (from === to) return Effect.succeed(next);
      let text = "";
      const options = next.vocabulary === undefined
        ? undefined
        : { vocabulary: next.vocabulary };
      for (let seq = from; seq < to; seq++) {
        const event = logEvent(next.surface, seq);
        if (event !== undefined) text += encodeEventLine(event, options);
      }
      const bytes = encoder.encode(text);
      try {
        writeAll(io, fd, bytes, state.length);
        io.sync(fd);
      } catch (cause) {
        try {
          io.truncate(fd, state.length);
          io.sync(fd);
        } catch {
          // The file may hold a partial batch: stop writing through it.
          release(state);
        }
        return Effect.fail(ioError("append to", handle.path, cause));
      }
      state.length += bytes.length;
      state.session = next;
      return Effect.succeed(next);
    });

  const writable = (
    handle: SessionHandle,
  ): Result.Result<HandleState, ReadOnlyHandle | HandleClosed> => {
    const state = states.get(handle);
    if (state === undefined || state.closed) {
      return Result.fail(new HandleClosed({ id: handle.id }));
    }
    if (handle.mode !== "write") {
      return Result.fail(new ReadOnlyHandle({ id: handle.id }));
    }
    return Result.succeed(state);
  };

  const append: SessionStore["append"] = (handle, drafts) =>
    Effect.suspend((): ReturnType<SessionStore["append"]> => {
      const checked = writable(handle);
      if (Result.isFailure(checked)) return Effect.fail(checked.failure);
      const state = checked.success;
      const batch = [...drafts];
      return state.semaphore.withPermits(1)(
        Effect.flatMap(
          Effect.suspend(() => Session.appendAll(state.session, batch)),
          (next) => commit(handle, state, next),
        ),
      );
    });

  const appendEvents: SessionStore["appendEvents"] = (handle, events) =>
    Effect.suspend((): ReturnType<SessionStore["appendEvents"]> => {
      const checked = writable(handle);
      if (Result.isFailure(checked)) return Effect.fail(checked.failure);
      const state = checked.success;
      const batch = [...events];
      return state.semaphore.withPermits(1)(
        Effect.flatMap(
          Effect.suspend(() => Session.appendEvents(state.session, batch)),
          (next) => commit(handle, state, next),
        ),
      );
    });

  const repair: SessionStore["repair"] = (handle) =>
    Effect.suspend((): ReturnType<SessionStore["repair"]> => {
      const checked = writable(handle);
      if (Result.isFailure(checked)) return Effect.fail(checked.failure);
      const state = checked.success;
      return state.semaphore.withPermits(1)(
        Effect.suspend((): ReturnType<SessionStore["repair"]> => {
          const closers = interruptedTurnClosers(Session.events(state.session));
          if (closers.length === 0) {
            return Effect.succeed({ session: state.session, closers });
          }
          return Effect.flatMap(
            Effect.flatMap(
              Session.appendEvents(state.session, closers),
              (next) => commit(handle, state, next),
            ),
            (session) => Effect.succeed({ session, closers }),
          );
        }),
      );
    });

  const list: SessionStore["list"] = () =>
    Effect.try({
      try: () => {
        const ids: string[] = [];
        for (const name of fs.readdirSync(root)) {
          if (!name.endsWith(EXTENSION)) continue;
          const id = decodeSessionId(name.slice(0, -EXTENSION.length));
          if (id !== undefined) ids.push(id);
        }
        return ids.sort();
      },
      catch: (cause) => ioError("list", root, cause),
    });

  const stat: SessionStore["stat"] = (id) =>
    Effect.suspend((): ReturnType<SessionStore["stat"]> => {
      const located = pathOf(id);
      if (Result.isFailure(located)) return Effect.fail(located.failure);
      const path = located.success;
      let info: fs.Stats;
      try {
        info = fs.statSync(path);
      } catch (cause) {
        return errorCode(cause) === "ENOENT"
          ? Effect.fail(new SessionNotFound({ id }))
          : Effect.fail(ioError("stat", path, cause));
      }
      return Effect.succeed({
        id,
        path,
        bytes: info.size,
        modifiedAt: info.mtimeMs,
        locked: isLocked(`${path}.lock`),
      });
    });

  const close: SessionStore["close"] = (handle) =>
    Effect.sync(() => {
      const state = states.get(handle);
      if (state !== undefined && !state.closed) release(state);
    });

  return {
    root,
    create,
    open,
    append,
    appendEvents,
    repair,
    list,
    stat,
    close,
  };
};
