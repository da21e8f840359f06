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
 * one. `follow` wakes on each stored batch, with no polling.
 *
 * @module
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Option from "effect/Option";
import * as Result from "effect/Result";
import type * as Scope from "effect/Scope";
import * as Semaphore from "effect/Semaphore";
import * as Stream from "effect/Stream";
import type { SessionEvent } from "../event.ts";
import { Session, type SessionHeader } from "../session.ts";
import { encodeEventLine, encodeHeaderLine } from "../jsonl/codec.ts";
import { encodeSessionId } from "../jsonl/ids.ts";
import { readSessionBytes } from "../jsonl/reader.ts";
import { makeLineFollower } from "../jsonl/follow.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../jsonl/reader.ts";
import {
  HandleClosed,
  type InvalidSessionId,
  ReadOnlyHandle,
  SessionAlreadyExists,
  SessionLocked,
  SessionNotFound,
} from "./errors.ts";
import {
  type FollowError,
  makeSessionStore,
  type OpenError,
  type OpenOptions,
  type SessionHandle,
  SessionStore,
  type StoreCore,
  type WriteError,
} from "./store.ts";
import { acquireScoped } from "./scoped.ts";
import { makeHandleRegistry } from "./handles.ts";

interface Stored {
  readonly chunks: Uint8Array[];
  bytes: number;
  modifiedAt: number;
  writer: HandleState | undefined;
  readonly waiters: Set<() => void>;
}

interface HandleState {
  session: Session;
  readonly stored: Stored;
  closed: boolean;
  readonly semaphore: Semaphore.Semaphore;
}

/** A memory store and its internals. */
export interface MemoryStore {
  /** The store. */
  readonly store: SessionStore;
  /** The layer's own operations (see `makeSessionStore`). */
  readonly core: StoreCore;
}

const encoder = new TextEncoder();

const isSession = (init: SessionHeader | Session): init is Session =>
  "surface" in init && "header" in init;

/**
 * Makes an empty in-memory store.
 *
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
export function makeMemoryStore(): Effect.Effect<MemoryStore> {
  return Effect.sync(() => {
    const core = makeCore();
    return { store: makeSessionStore(core), core };
  });
}

/**
 * The in-memory layer of `SessionStore`: a fresh, empty store each time
 * the layer is built.
 *
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
export function layerMemoryStore(): Layer.Layer<SessionStore> {
  return Layer.effect(
    SessionStore,
    Effect.map(makeMemoryStore(), (made) => made.store),
  );
}

const makeCore = (): StoreCore => {
  const sessions = new Map<string, Stored>();
  const handles = makeHandleRegistry<HandleState>();

  const checkId = (id: string): Result.Result<string, InvalidSessionId> =>
    Result.map(encodeSessionId(id), () => id);

  const release = (state: HandleState): void => {
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
      const header = isSession(init) ? init.header : init;
      const id = header.id;
      const checked = checkId(id);
      if (Result.isFailure(checked)) return Effect.fail(checked.failure);
      if (sessions.has(id)) {
        return Effect.fail(new SessionAlreadyExists({ id }));
      }
      const vocabulary = options?.vocabulary ??
        (isSession(init) ? init.vocabulary : undefined);
      const session = isSession(init) ? init : Session.make(
        header,
        vocabulary === undefined ? undefined : { vocabulary },
      );
      const encodeOptions = vocabulary === undefined
        ? undefined
        : { vocabulary };
      let text = encodeHeaderLine(header);
      for (const event of Session.events(session)) {
        text += encodeEventLine(event, encodeOptions);
      }
      const bytes = encoder.encode(text);
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const stored: Stored = {
          chunks: [bytes],
          bytes: bytes.length,
          modifiedAt: now,
          writer: undefined,
          waiters: new Set(),
        };
        sessions.set(id, stored);
        const state = newState(stored, session);
        return acquireScoped(
          () => release(state),
          Effect.as(
            claim(id, state),
            makeHandle(id, "write", {
              events: session.surface.nextSeq - session.surface.baseSeq,
              tornTail: undefined,
              stoppedAt: undefined,
            }, state),
          ),
        );
      });
    });

  const open = <E = never>(
    id: string,
    options: OpenOptions<E> = {},
  ): Effect.Effect<SessionHandle, OpenError | E, Scope.Scope> =>
    Effect.suspend((): Effect.Effect<
      SessionHandle,
      OpenError | E,
      Scope.Scope
    > => {
      const checked = checkId(id);
      if (Result.isFailure(checked)) return Effect.fail(checked.failure);
      const stored = sessions.get(id);
      if (stored === undefined) {
        return Effect.fail(new SessionNotFound({ id }));
      }
      const mode = options.mode ?? "read";
      const read = readSessionBytes([...stored.chunks], {
        ...(options.vocabulary === undefined
          ? {}
          : { vocabulary: options.vocabulary }),
        ...(options.maxLineBytes === undefined
          ? {}
          : { maxLineBytes: options.maxLineBytes }),
        ...(mode === "read" && options.recover !== undefined
          ? { recover: options.recover }
          : {}),
        ...(mode === "read" && options.migrate !== undefined
          ? { migrate: options.migrate }
          : {}),
      });
      if (mode === "read") {
        return Effect.map(read, (log) =>
          makeHandle(id, "read", {
            events: log.events.length,
            tornTail: log.report.tornTail,
            stoppedAt: log.report.stoppedAt,
          }, newState(stored, log.session)));
      }
      const state = newState(
        stored,
        Session.make({ id, createdAt: 0, isSeeded: false }),
      );
      return acquireScoped(
        () => release(state),
        Effect.andThen(
          claim(id, state),
          Effect.map(read, (log) => {
            state.session = log.session;
            return makeHandle(id, "write", {
              events: log.events.length,
              tornTail: undefined,
              stoppedAt: undefined,
            }, state);
          }),
        ),
      );
    });

  const writable = (
    handle: SessionHandle,
  ): Result.Result<HandleState, ReadOnlyHandle | HandleClosed> => {
    const state = handles.get(handle);
    if (state === undefined || state.closed) {
      return Result.fail(new HandleClosed({ id: handle.id }));
    }
    if (handle.mode !== "write") {
      return Result.fail(new ReadOnlyHandle({ id: handle.id }));
    }
    return Result.succeed(state);
  };

  const write = (
    handle: SessionHandle,
    state: HandleState,
    next: Session,
  ): Effect.Effect<Session, WriteError> =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (now): Effect.Effect<Session, WriteError> => {
        if (state.closed) {
          return Effect.fail(new HandleClosed({ id: handle.id }));
        }
        const from = state.session.surface.nextSeq;
        if (next.surface.nextSeq !== from) {
          const options = next.vocabulary === undefined
            ? undefined
            : { vocabulary: next.vocabulary };
          let text = "";
          for (const event of Session.events(next, from)) {
            text += encodeEventLine(event, options);
          }
          const bytes = encoder.encode(text);
          state.stored.chunks.push(bytes);
          state.stored.bytes += bytes.length;
          state.stored.modifiedAt = now;
          notify(state.stored);
        }
        state.session = next;
        return Effect.succeed(next);
      },
    );

  const commit: StoreCore["commit"] = (handle, next) =>
    Effect.suspend(() => {
      const checked = writable(handle);
      if (Result.isFailure(checked)) return Effect.fail(checked.failure);
      const state = checked.success;
      return state.semaphore.withPermits(1)(
        Effect.flatMap(
          Effect.suspend(() => next(state.session)),
          (session) => write(handle, state, session),
        ),
      );
    });

  const follow: StoreCore["follow"] = (id, options) =>
    Stream.unwrap(Effect.suspend((): Effect.Effect<
      Stream.Stream<SessionEvent, FollowError>,
      FollowError
    > => {
      const checked = checkId(id);
      if (Result.isFailure(checked)) return Effect.fail(checked.failure);
      const stored = sessions.get(id);
      if (stored === undefined) {
        return Effect.fail(new SessionNotFound({ id }));
      }
      const follower = makeLineFollower(
        options?.fromSeq ?? 0,
        options?.vocabulary,
        DEFAULT_MAX_LINE_BYTES,
      );
      let next = 0;
      const waitForBatch = Effect.callback<void>((resume) => {
        if (next < stored.chunks.length) return resume(Effect.void);
        const wake = () => resume(Effect.void);
        stored.waiters.add(wake);
        return Effect.sync(() => {
          stored.waiters.delete(wake);
        });
      });
      const poll = Effect.suspend((): Effect.Effect<
        readonly [ReadonlyArray<SessionEvent>, Option.Option<undefined>],
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
        const result = [events, Option.some(undefined)] as const;
        return events.length > 0
          ? Effect.succeed(result)
          : Effect.as(waitForBatch, result);
      });
      return Effect.succeed(Stream.paginate(undefined, () => poll));
    }));

  const list: StoreCore["list"] = () =>
    Effect.sync(() => [...sessions.keys()].sort());

  const stat: StoreCore["stat"] = (id) =>
    Effect.suspend((): ReturnType<StoreCore["stat"]> => {
      const checked = checkId(id);
      if (Result.isFailure(checked)) return Effect.fail(checked.failure);
      const stored = sessions.get(id);
      if (stored === undefined) {
        return Effect.fail(new SessionNotFound({ id }));
      }
      return Effect.succeed({
        id,
        bytes: stored.bytes,
        modifiedAt: stored.modifiedAt,
        locked: stored.writer !== undefined && !stored.writer.closed,
      });
    });

  const close: StoreCore["close"] = (handle) =>
    Effect.sync(() => {
      const state = handles.get(handle);
      if (state !== undefined) release(state);
    });

  return { create, open, commit, follow, list, stat, close };
};
