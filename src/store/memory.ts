/**
 * The in-memory layer of the session store, for users' own tests: the same
 * promises as the JSONL store, in one process, with nothing on disk.
 *
 * Each session is held as the bytes the JSONL store would write (the
 * header line, then one chunk per stored batch), and opening reads them
 * back with the JSONL reader: a value that would not survive the file does
 * not survive here either, and `recover`, `migrate` and `maxLineBytes`
 * behave the same. The writer claim is a token on the session: a second
 * writer gets `SessionLocked` (with no pid) until the first handle's scope
 * closes. There are no other processes, so no claim is ever left by a dead
 * one. `follow` wakes on each stored batch, with no polling, and a follow
 * waiting for a session (`waitForSession`) wakes when it is created.
 *
 * @module
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Result from "effect/Result";
import * as Semaphore from "effect/Semaphore";
import type { SessionEvent } from "../core/event.ts";
import { knownEvents, Session } from "../session/session.ts";
import * as Catalogue from "./catalogue.ts";
import { checkSessionId } from "./ids.ts";
import { readSessionBytes, readSessionBytesFrom } from "../log/reader.ts";
import * as Checkpoints from "./checkpoints.ts";
import * as CheckpointWrite from "./checkpoint_write.ts";
import {
  type InvalidSessionId,
  SessionAlreadyExists,
  SessionLocked,
  SessionNotFound,
} from "./errors.ts";
import { type FollowError, type OpenOptions, SessionStore } from "./store.ts";
import { makeSessionStore, type StoreCore } from "./core.ts";
import { acquireScoped } from "./scoped.ts";
import { makeHandleRegistry, writeNewEvents } from "./handles.ts";
import { createdFrom, openWith, wholeReport } from "./open.ts";
import { encodeBatch, encodeLog, followLines } from "./lines.ts";
import { scanByteRange } from "./history.ts";

interface Stored {
  readonly chunks: Uint8Array[];
  /** What the catalogue tells of it. */
  entry: Catalogue.CatalogueEntry;
  /** The newest checkpoint's text. */
  checkpoint: string | undefined;
  bytes: number;
  modifiedAt: number;
  writer: HandleState | undefined;
  readonly waiters: Set<() => void>;
}

interface HandleState {
  session: Session;
  readonly stored: Stored;
  readonly mark: Checkpoints.CheckpointMark;
  closed: boolean;
  readonly semaphore: Semaphore.Semaphore;
}

/** A memory store and its internals. */
export interface MemoryStore {
  /** The store. */
  readonly store: SessionStore;
  /** The layer's own operations (see `makeSessionStore`). */
  readonly core: StoreCore;
  /**
   * The stored checkpoint text of a session, read or replaced (tests use
   * it to damage one).
   */
  readonly checkpoints: {
    /** The text, if any. */
    readonly get: (id: string) => string | undefined;
    /** Replaces (or, with undefined, removes) the text. */
    readonly set: (id: string, text: string | undefined) => void;
  };
}

/** Options of {@link makeMemoryStore} and {@link layerMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * When to write checkpoints (every 10,000 events and on close after
   * 1,000 by default); `false` for none.
   */
  readonly checkpoints?: Checkpoints.CheckpointOptions;
}

/** Reads `length` bytes from `offset` of the concatenation of `chunks`. */
const chunksRange =
  (chunks: ReadonlyArray<Uint8Array>) =>
  (offset: number, length: number): Effect.Effect<Uint8Array> =>
    Effect.sync(() => {
      const out = new Uint8Array(length);
      let at = 0;
      let filled = 0;
      for (const chunk of chunks) {
        const end = at + chunk.length;
        if (end > offset && at < offset + length) {
          const from = Math.max(offset - at, 0);
          const to = Math.min(offset + length - at, chunk.length);
          out.set(chunk.subarray(from, to), at + from - offset);
          filled = Math.max(filled, at + to - offset);
        }
        at = end;
      }
      return out.subarray(0, filled);
    });

/**
 * Makes an empty in-memory store.
 *
 * @param options The checkpoint policy.
 * @returns `Effect<MemoryStore>`: the store and its core.
 *
 * @example Two stores share nothing
 * ```ts
 * import { makeMemoryStore } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const { store } = Effect.runSync(makeMemoryStore());
 * assert.deepEqual(Effect.runSync(store.list()), []);
 * ```
 */
export function makeMemoryStore(
  options?: MemoryStoreOptions,
): Effect.Effect<MemoryStore> {
  return Effect.sync(() => {
    const sessions = new Map<string, Stored>();
    const core = makeCore(
      sessions,
      Checkpoints.resolvePolicy(options?.checkpoints),
    );
    return {
      store: makeSessionStore(core),
      core,
      checkpoints: {
        get: (id) => sessions.get(id)?.checkpoint,
        set: (id, text) => {
          const stored = sessions.get(id);
          if (stored !== undefined) stored.checkpoint = text;
        },
      },
    };
  });
}

/**
 * The in-memory layer of `SessionStore`: a fresh, empty store each time
 * the layer is built.
 *
 * @param options The checkpoint policy.
 * @returns `Layer<SessionStore>`.
 *
 * @example A test's store
 * ```ts
 * import { layerMemoryStore, SessionStore } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   yield* Effect.scoped(store.create({ id: "t", createdAt: 0, isSeeded: false }));
 *   const locked = yield* Effect.scoped(Effect.gen(function* () {
 *     yield* store.open("t", { mode: "write" });
 *     return yield* Effect.flip(store.open("t", { mode: "write" }));
 *   }));
 *   return locked._tag;
 * });
 * assert.equal(Effect.runSync(program.pipe(Effect.provide(layerMemoryStore()))), "SessionLocked");
 * ```
 */
export function layerMemoryStore(
  options?: MemoryStoreOptions,
): Layer.Layer<SessionStore> {
  return Layer.effect(
    SessionStore,
    Effect.map(makeMemoryStore(options), (made) => made.store),
  );
}

const makeCore = (
  sessions: Map<string, Stored>,
  policy: Checkpoints.ResolvedPolicy | undefined,
): StoreCore => {
  const handles = makeHandleRegistry<HandleState>();
  // Followers waiting for a session to be created.
  const creations = new Set<() => void>();

  /** The stored session of `id`, or why there is none. */
  const locate = (
    id: string,
  ): Result.Result<Stored, InvalidSessionId | SessionNotFound> => {
    const checked = checkSessionId(id);
    if (Result.isFailure(checked)) return Result.fail(checked.failure);
    const stored = sessions.get(id);
    return stored === undefined
      ? Result.fail(new SessionNotFound({ id }))
      : Result.succeed(stored);
  };

  const checkpointer = CheckpointWrite.makeCheckpointer(policy);
  const target = (
    state: HandleState,
  ): CheckpointWrite.CheckpointTarget<never> => ({
    mark: state.mark,
    put: (text) =>
      Effect.sync(() => {
        state.stored.checkpoint = text;
      }),
    range: (offset, length) => chunksRange(state.stored.chunks)(offset, length),
  });

  const release = (state: HandleState): void => {
    if (!state.closed && state.stored.writer === state) {
      checkpointer.onClose(state.session, state.stored.bytes, target(state));
    }
    state.closed = true;
    if (state.stored.writer === state) state.stored.writer = undefined;
  };

  const notify = (stored: Stored): void => {
    const waiters = [...stored.waiters];
    stored.waiters.clear();
    for (const wake of waiters) wake();
  };

  const makeHandle = handles.make;

  const newState = (stored: Stored, session: Session): HandleState => ({
    session,
    stored,
    mark: { seq: 0, since: undefined },
    closed: false,
    semaphore: Semaphore.makeUnsafe(1),
  });

  const claim = (id: string, state: HandleState) =>
    Effect.suspend(() => {
      if (state.stored.writer !== undefined && !state.stored.writer.closed) {
        return Effect.fail(new SessionLocked({ id, pid: undefined }));
      }
      state.stored.writer = state;
      return Effect.void;
    });

  const create: StoreCore["create"] = (init, options) =>
    Effect.suspend((): ReturnType<StoreCore["create"]> => {
      const { header, vocabulary, session } = createdFrom(init, options);
      const id = header.id;
      const checked = checkSessionId(id);
      if (Result.isFailure(checked)) return Effect.fail(checked.failure);
      if (sessions.has(id)) {
        return Effect.fail(new SessionAlreadyExists({ id }));
      }
      const bytes = encodeLog(header, session, vocabulary);
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const stored: Stored = {
          chunks: [bytes],
          entry: Catalogue.entryOfSession(
            session,
            knownEvents(session, session.surface.baseSeq),
            now,
          ),
          checkpoint: undefined,
          bytes: bytes.length,
          modifiedAt: now,
          writer: undefined,
          waiters: new Set(),
        };
        sessions.set(id, stored);
        const waiting = [...creations];
        creations.clear();
        for (const wake of waiting) wake();
        const state = newState(stored, session);
        return acquireScoped(
          () => release(state),
          Effect.as(
            claim(id, state),
            makeHandle(
              id,
              "write",
              wholeReport(session.surface.nextSeq - session.surface.baseSeq),
              state,
            ),
          ),
        );
      });
    });

  const read = <E>(
    stored: Stored,
    options: OpenOptions<E>,
    strict: boolean,
  ) => {
    const chunks = [...stored.chunks];
    const log: Checkpoints.ByteLog<never> = {
      range: chunksRange(chunks),
      readFrom: (resume, readOptions) =>
        readSessionBytesFrom(chunks, resume, readOptions),
    };
    return Checkpoints.loadWithCheckpoint(
      policy,
      (maxLineBytes) =>
        Effect.sync(() => {
          const text = stored.checkpoint;
          const bound = Checkpoints.checkpointBound(stored.bytes, maxLineBytes);
          return text !== undefined && text.length > bound
            ? { size: text.length, bound }
            : text;
        }),
      log,
      options,
      strict,
      (read) => readSessionBytes(chunks, read),
    );
  };

  const open: StoreCore["open"] = openWith(
    locate,
    (id, stored, options) =>
      Effect.map(read(stored, options, false), (loaded) => {
        const state = newState(stored, loaded.log.session);
        state.mark.seq = loaded.mark.seq;
        state.mark.since = loaded.mark.since;
        return makeHandle(id, "read", loaded.report, state);
      }),
    (id, stored, options) => {
      const state = newState(
        stored,
        Session.make({ id, createdAt: 0, isSeeded: false }),
      );
      return acquireScoped(
        () => release(state),
        Effect.andThen(
          claim(id, state),
          Effect.map(read(stored, options, true), (loaded) => {
            state.session = loaded.log.session;
            state.mark.seq = loaded.mark.seq;
            state.mark.since = loaded.mark.since;
            return makeHandle(
              id,
              "write",
              {
                ...wholeReport(loaded.report.events),
                ...(loaded.report.checkpoint === undefined
                  ? {}
                  : { checkpoint: loaded.report.checkpoint }),
                ...(loaded.report.checkpointRejected === undefined
                  ? {}
                  : { checkpointRejected: loaded.report.checkpointRejected }),
              },
              state,
            );
          }),
        ),
      );
    },
  );

  const commit: StoreCore["commit"] = handles.commit((handle, state, next) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      writeNewEvents(
        handle,
        state,
        next,
        state.stored,
        (stored, from) =>
          Effect.sync(() => {
            const bytes = encodeBatch(next, from);
            stored.chunks.push(bytes);
            stored.bytes += bytes.length;
            stored.modifiedAt = now;
            stored.entry = Catalogue.applyCatalogueChange(
              stored.entry,
              Catalogue.catalogueChange(next, knownEvents(next, from)),
              now,
            );
            notify(stored);
            Effect.runSync(
              checkpointer.afterBatch(next, stored.bytes, target(state)),
            );
          }),
      ))
  );

  const checkpoint = checkpointer.now(handles, (state) => ({
    bytes: state.stored.bytes,
    target: target(state),
  }));

  const follow: StoreCore["follow"] = (id, options) =>
    followLines(
      () => locate(id),
      options,
      (stored, follower) => {
        // Chunks handed to the follower so far.
        let next = 0;
        return {
          read: Effect.suspend((): Effect.Effect<
            ReadonlyArray<SessionEvent>,
            FollowError
          > => {
            const events: SessionEvent[] = [];
            while (next < stored.chunks.length) {
              const chunk = stored.chunks[next];
              next += 1;
              if (chunk === undefined) continue;
              const pushed = follower.push(chunk);
              if (Result.isFailure(pushed)) return Effect.fail(pushed.failure);
              events.push(...pushed.success);
            }
            return Effect.succeed(events);
          }),
          idle: Effect.callback<void>((resume) => {
            if (next < stored.chunks.length) return resume(Effect.void);
            const wake = () => resume(Effect.void);
            stored.waiters.add(wake);
            return Effect.sync(() => {
              stored.waiters.delete(wake);
            });
          }),
        };
      },
      Effect.callback<void>((resume) => {
        if (sessions.has(id)) return resume(Effect.void);
        const wake = () => resume(Effect.void);
        creations.add(wake);
        return Effect.sync(() => {
          creations.delete(wake);
        });
      }),
    );

  const readRange: StoreCore["readRange"] = (id, from, to, vocabulary, index) =>
    Effect.suspend((): ReturnType<StoreCore["readRange"]> => {
      const located = locate(id);
      if (Result.isFailure(located)) return Effect.fail(located.failure);
      const chunks = [...located.success.chunks];
      return scanByteRange(chunksRange(chunks), from, to, vocabulary, index);
    });

  const list: StoreCore["list"] = () =>
    Effect.sync(() => [...sessions.keys()].sort());

  const stat: StoreCore["stat"] = (id) =>
    Effect.suspend((): ReturnType<StoreCore["stat"]> => {
      const located = locate(id);
      if (Result.isFailure(located)) return Effect.fail(located.failure);
      const stored = located.success;
      return Effect.succeed({
        id,
        bytes: stored.bytes,
        modifiedAt: stored.modifiedAt,
        locked: stored.writer !== undefined && !stored.writer.closed,
      });
    });

  const catalogue: StoreCore["catalogue"] = (query) =>
    Effect.sync(() =>
      Catalogue.queryEntries(
        Array.from(sessions.values(), (stored) => stored.entry),
        query,
      )
    );

  // Nothing else can hold a memory session: taking the claim and deleting
  // the entry are one step, so a removal is never seen half done.
  const remove: StoreCore["remove"] = (id) =>
    Effect.suspend((): ReturnType<StoreCore["remove"]> => {
      const located = locate(id);
      if (Result.isFailure(located)) return Effect.fail(located.failure);
      const writer = located.success.writer;
      if (writer !== undefined && !writer.closed) {
        return Effect.fail(new SessionLocked({ id, pid: undefined }));
      }
      sessions.delete(id);
      notify(located.success);
      return Effect.void;
    });

  const close: StoreCore["close"] = handles.close((state) =>
    Effect.sync(() => release(state))
  );

  const reads = { follow, readRange, list, catalogue, remove, stat };
  return { create, open, commit, close, checkpoint, ...reads };
};
