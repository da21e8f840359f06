/**
 * The handles of a store layer and the bookkeeping every layer shares
 * around them: a {@link SessionHandle} whose `session` reads the layer's
 * own state for it, the way back from a handle to that state, `commit`
 * (a writable handle, its semaphore, the next session, the write), the
 * start of a write (a closed handle, nothing new) and `close`. What differs between
 * layers, how a batch is stored, is passed in.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Result from "effect/Result";
import type * as Semaphore from "effect/Semaphore";
import type { Session } from "../session/session.ts";
import type { SessionSeq } from "../core/seq.ts";
import {
  HandleClosed,
  ReadOnlyHandle,
  type WriterClaimLost,
} from "./errors.ts";
import type {
  OpenMode,
  OpenReport,
  SessionHandle,
  WriteError,
} from "./store.ts";
import type { StoreCore } from "./core.ts";

/** What every layer keeps behind a handle. */
export interface HandleState {
  /** The handle's current session. */
  session: Session;
  /** Set once the handle is released. */
  closed: boolean;
  /**
   * Set when the handle lost its writer claim: every later write fails
   * with it (rather than `HandleClosed`).
   */
  lostClaim?: WriterClaimLost | undefined;
  /** One commit at a time per handle. */
  readonly semaphore: Semaphore.Semaphore;
}

/**
 * The session as one that keeps its own copy of every draft's data: what
 * a store writes, derives and checkpoints never changes with a caller's
 * objects, and every session derived from a handle's copies too.
 */
const copyingDrafts = (session: Session): Session =>
  session.copiesDrafts === true ? session : { ...session, copiesDrafts: true };

/** A layer's handles and the state behind each. */
export interface HandleRegistry<S extends HandleState> {
  /** A handle whose `session` is `state.session`, remembered with it. */
  readonly make: (
    id: string,
    mode: OpenMode,
    report: OpenReport,
    state: S,
  ) => SessionHandle;
  /** The state behind a handle this registry made, else `undefined`. */
  readonly get: (handle: SessionHandle) => S | undefined;
  /**
   * The state behind an open write handle: `WriterClaimLost` for a handle
   * that lost its claim, `HandleClosed` for a closed or unknown handle,
   * then `ReadOnlyHandle` for a read handle.
   */
  readonly writable: (
    handle: SessionHandle,
  ) => Result.Result<S, ReadOnlyHandle | HandleClosed | WriterClaimLost>;
  /**
   * The layer's `commit`: checks the handle is writable, then, holding its
   * semaphore, runs `next` on its current session and writes the result.
   */
  readonly commit: (
    write: (
      handle: SessionHandle,
      state: S,
      next: Session,
    ) => Effect.Effect<Session, WriteError>,
  ) => StoreCore["commit"];
  /**
   * The layer's `close`: `release` runs on the state behind an open
   * handle; a closed or unknown handle is left as it is.
   */
  readonly close: (
    release: (state: S) => Effect.Effect<void>,
  ) => StoreCore["close"];
}

/**
 * A registry of handles; handles are held weakly.
 *
 * @returns An empty {@link HandleRegistry}.
 */
export const makeHandleRegistry = <
  S extends HandleState,
>(): HandleRegistry<S> => {
  const states = new WeakMap<SessionHandle, S>();
  const writable: HandleRegistry<S>["writable"] = (handle) => {
    const state = states.get(handle);
    if (state?.lostClaim !== undefined) return Result.fail(state.lostClaim);
    if (state === undefined || state.closed) {
      return Result.fail(new HandleClosed({ id: handle.id }));
    }
    if (handle.mode !== "write") {
      return Result.fail(new ReadOnlyHandle({ id: handle.id }));
    }
    return Result.succeed(state);
  };
  return {
    make: (id, mode, report, state) => {
      state.session = copyingDrafts(state.session);
      const handle: SessionHandle = {
        id,
        mode,
        report,
        get session(): Session {
          return state.session;
        },
      };
      states.set(handle, state);
      return handle;
    },
    get: (handle) => states.get(handle),
    writable,
    commit: (write) => (handle, next) =>
      Effect.suspend(() => {
        const checked = writable(handle);
        if (Result.isFailure(checked)) return Effect.fail(checked.failure);
        const state = checked.success;
        return state.semaphore.withPermits(1)(
          Effect.flatMap(
            Effect.suspend(() => next(copyingDrafts(state.session))),
            (session) => write(handle, state, session),
          ),
        );
      }),
    close: (release) => (handle) =>
      Effect.suspend(() => {
        const state = states.get(handle);
        return state === undefined || state.closed
          ? Effect.void
          : release(state);
      }),
  };
};

/**
 * The write every layer shares: a handle that lost its claim fails with
 * that `WriterClaimLost`; a closed handle, or one whose `resource` is gone,
 * fails `HandleClosed`; a `next` with no new events becomes the
 * handle's session as it is; otherwise `append` stores the events of
 * `next` from seq `from` to `to` (excluded), and `next` becomes the
 * handle's session exactly when it succeeds, even if the caller is
 * interrupted as it does.
 *
 * @param handle The handle written through.
 * @param state The state behind it.
 * @param next The session to store.
 * @param resource What the layer writes through (its descriptor, its
 * connection), `undefined` once released.
 * @param append Stores the new events.
 * @returns `Effect<Session, HandleClosed | WriterClaimLost | E>`: `next`.
 */
export const writeNewEvents = <R, E>(
  handle: SessionHandle,
  state: HandleState,
  next: Session,
  resource: R | undefined,
  append: (
    resource: R,
    from: SessionSeq,
    to: SessionSeq,
  ) => Effect.Effect<void, E>,
): Effect.Effect<Session, HandleClosed | WriterClaimLost | E> =>
  Effect.suspend((): Effect.Effect<
    Session,
    HandleClosed | WriterClaimLost | E
  > => {
    if (state.lostClaim !== undefined) return Effect.fail(state.lostClaim);
    if (state.closed || resource === undefined) {
      return Effect.fail(new HandleClosed({ id: handle.id }));
    }
    const from = state.session.surface.nextSeq;
    const to = next.surface.nextSeq;
    if (from === to) {
      state.session = next;
      return Effect.succeed(next);
    }
    return Effect.as(
      Effect.onExit(append(resource, from, to), (exit) =>
        Effect.sync(() => {
          if (Exit.isSuccess(exit)) state.session = next;
        })),
      next,
    );
  });
