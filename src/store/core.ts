/**
 * What a store layer implements ({@link StoreCore}: create, open, commit,
 * follow, list, stat, close) and {@link makeSessionStore}, which derives
 * the rest of the {@link SessionStore} service from it once, for every
 * layer: `append`, `appendEvents`, `update` (a batch must extend the
 * session), `repair`, `resolveAppend`, `withSession`, `follow`'s
 * `until`, and `events` and `withHistory` (`history.ts`). The service's types are `store.ts`.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import type { SessionEvent } from "../core/event.ts";
import { knownEvents, Session } from "../session/session.ts";
import { heldEvents } from "../session/prior.ts";
import { logEvent } from "../surface/mod.ts";
import { encodeEventLine, encodeHeaderLine } from "../log/codec.ts";
import { SessionSeq } from "../core/seq.ts";
import { EventsNotHeld, type InvalidSessionSeq } from "../core/errors.ts";
import { interruptedTurnClosers } from "../session/repair.ts";
import { followWithOptions } from "./follow.ts";
import { makeHistoryReads } from "./history.ts";
import { liveWork } from "./live.ts";
import { readOptionsOf } from "./open.ts";
import {
  type AppendOutcomeUnknown,
  NotAnAppend,
  type StorageError,
  StoredLogDiffers,
} from "./errors.ts";
import {
  type ListPage,
  type ListQuery,
  type ResolvedQuery,
  resolveQuery,
} from "./catalogue.ts";
import * as Result from "effect/Result";
import type { Vocabulary } from "../core/decode.ts";
import type { LineIndex } from "../log/range.ts";
import type {
  AppendResolution,
  AppendResult,
  HistoryOperation,
  HistoryReadError,
  ListError,
  OpenError,
  ResolveOptions,
  SessionHandle,
  SessionStore,
  UpdateResult,
  UpdateValue,
  WriteError,
} from "./store.ts";

/** A session has a surface; a result holding one has it in `session`. */
const isSessionValue = (value: UpdateValue): value is Session =>
  "surface" in value;

/**
 * What a layer implements; {@link makeSessionStore} derives the rest.
 */
export interface StoreCore {
  /** See {@link SessionStore} `create`. */
  readonly create: SessionStore["create"];
  /** See {@link SessionStore} `open`. */
  readonly open: SessionStore["open"];
  /**
   * Under the handle's write permit, runs `next` on the handle's current
   * session and stores the events of its result past the current next seq,
   * as one batch; the handle's session becomes the result. The result is
   * known to extend the current session.
   */
  readonly commit: <E, R>(
    handle: SessionHandle,
    next: HistoryOperation<E, R>,
  ) => Effect.Effect<Session, E | WriteError, R>;
  /**
   * See {@link SessionStore} `follow`: the layer serves from `fromSeq`
   * (already checked) and honours `waitForSession`; `until` is applied
   * around it by {@link makeSessionStore}.
   */
  readonly follow: SessionStore["follow"];
  /**
   * The stored events of seqs `[from, to)` of a session (fewer when the log
   * is shorter), decoded as the reader decodes them, without reading the
   * rest of the log or folding it; a log of an older format fails
   * `FormatTooOld` (the caller then reads it whole). A layer that reads
   * bytes starts from the nearest line `index` knows and adds to it.
   */
  readonly readRange: (
    id: string,
    from: number,
    to: number,
    vocabulary: Vocabulary | undefined,
    index: LineIndex,
  ) => Effect.Effect<ReadonlyArray<SessionEvent>, OpenError>;
  /** See {@link SessionStore} `list`, without a query. */
  readonly list: () => Effect.Effect<ReadonlyArray<string>, StorageError>;
  /** See {@link SessionStore} `list`, with a query (already resolved). */
  readonly catalogue: (
    query: ResolvedQuery,
  ) => Effect.Effect<ListPage, ListError>;
  /** See {@link SessionStore} `remove`. */
  readonly remove: SessionStore["remove"];
  /** See {@link SessionStore} `stat`. */
  readonly stat: SessionStore["stat"];
  /** See {@link SessionStore} `close`. */
  readonly close: SessionStore["close"];
  /** See {@link SessionStore} `checkpoint`. */
  readonly checkpoint: SessionStore["checkpoint"];
  /**
   * Before `resolveAppend` reads: succeeds once the write of `error` can
   * no longer commit, else fails with `AppendOutcomeUnknown` (a layer
   * whose claim can outlive a failed writer's transaction: PostgreSQL,
   * whose server process can still commit after the client gave up).
   * Absent: the claim's release says the write is over.
   */
  readonly writerEnded?: (
    error: AppendOutcomeUnknown,
    options: ResolveOptions | undefined,
  ) => Effect.Effect<void, AppendOutcomeUnknown>;
}

/** Whether `next` is `current` with events appended. */
const extendsSession = (
  current: Session,
  next: Session,
): "header" | "log" | undefined => {
  if (next.header !== current.header) return "header";
  const from = current.surface.nextSeq;
  if (next.surface.baseSeq !== current.surface.baseSeq) return "log";
  if (next.surface.nextSeq < from) return "log";
  if (from > current.surface.baseSeq) {
    const last = SessionSeq.make(from - 1);
    const mine = logEvent(current.surface, last);
    if (mine !== undefined || last >= current.surface.heldFrom) {
      return logEvent(next.surface, last) === mine ? undefined : "log";
    }
    // A session that holds only its surface, and an operation that read
    // the log through the store (a rewind): the events it read are copies,
    // so its newest node's event, where both hold it, is compared by
    // content.
    const tail = current.surface.tail;
    const held = tail === undefined
      ? undefined
      : logEvent(current.surface, tail);
    const read = tail === undefined ? undefined : logEvent(next.surface, tail);
    if (
      held !== undefined && read !== undefined && read !== held &&
      encodeEventLine(read) !== encodeEventLine(held)
    ) {
      return "log";
    }
  }
  return undefined;
};

const appended = (before: SessionSeq, session: Session): AppendResult => ({
  session,
  events: session.surface.nextSeq === before
    ? []
    : knownEvents(session, before),
});

/**
 * Where `session` (undefined: no such session) and the batch of `error`
 * stand: the whole batch stored, none of it, or a difference.
 */
const resolutionOf = (
  error: AppendOutcomeUnknown,
  session: Session | undefined,
): Effect.Effect<AppendResolution, StoredLogDiffers> => {
  const { id, fromSeq } = error;
  const differs = (seq: number, difference: StoredLogDiffers["difference"]) =>
    Effect.fail(new StoredLogDiffers({ id, fromSeq, seq, difference }));
  if (session === undefined) return Effect.succeed("absent");
  if (
    error.header !== undefined &&
    encodeHeaderLine(session.header) !== encodeHeaderLine(error.header)
  ) {
    return differs(0, "header");
  }
  const next = session.surface.nextSeq;
  if (next < fromSeq) return differs(next, "shorter");
  if (next === fromSeq && error.batch.length > 0) {
    return Effect.succeed("absent");
  }
  const options = session.vocabulary === undefined
    ? undefined
    : { vocabulary: session.vocabulary };
  for (const event of error.batch) {
    if (event.seq >= next) return differs(event.seq, "part");
    const stored = logEvent(session.surface, event.seq);
    if (
      stored === undefined ||
      encodeEventLine(stored, options) !== encodeEventLine(event, options)
    ) {
      return differs(event.seq, "event");
    }
  }
  return Effect.succeed("stored");
};

/**
 * Builds a {@link SessionStore} on a layer's {@link StoreCore}: `append`,
 * `appendEvents`, `update` and `repair` as commits, `withSession` as a
 * scoped open, `resolveAppend` as an open and a comparison.
 *
 * @param core The layer's operations.
 * @returns The store.
 *
 * @example Wrapping a store's core
 * ```ts
 * import { makeMemoryStore } from "@palimpsest/session";
 * import { makeSessionStore } from "@palimpsest/session/internal";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const store = makeSessionStore(Effect.runSync(makeMemoryStore()).core);
 * assert.deepEqual(Effect.runSync(store.list()), []);
 * ```
 */
export function makeSessionStore(core: StoreCore): SessionStore {
  const commit = <E, R>(
    handle: SessionHandle,
    op: HistoryOperation<E, R>,
  ): Effect.Effect<AppendResult, E | WriteError, R> =>
    Effect.suspend(() => {
      let before = SessionSeq.make(0);
      return Effect.map(
        core.commit(handle, (session) => {
          before = session.surface.nextSeq;
          return op(session);
        }),
        (session) => appended(before, session),
      );
    });

  const { events, withHistory, withHistoryOn } = makeHistoryReads(core);

  // Declared narrower than it is written: reads of older events happen
  // only for an operation that fails `EventsNotHeld` (HistoryReadError).
  function update<E, R, A extends UpdateValue = Session>(
    handle: SessionHandle,
    op: HistoryOperation<E, R, A>,
  ): Effect.Effect<
    UpdateResult<A>,
    E | NotAnAppend | WriteError | HistoryReadError<E>,
    R
  >;
  function update<E, R, A extends UpdateValue = Session>(
    handle: SessionHandle,
    op: HistoryOperation<E, R, A>,
  ): Effect.Effect<
    UpdateResult<A>,
    E | NotAnAppend | WriteError | OpenError | InvalidSessionSeq,
    R
  > {
    return Effect.suspend(() => {
      let result: { readonly value: A } | undefined;
      return Effect.flatMap(
        commit<E | NotAnAppend | OpenError | InvalidSessionSeq, R>(
          handle,
          (session) =>
            // An operation that needs events the session does not hold
            // (a rewind on a session opened from a checkpoint) reads them.
            Effect.flatMap(withHistoryOn(handle, session, op), (value) => {
              result = { value };
              const next = isSessionValue(value) ? value : value.session;
              const problem = extendsSession(session, next);
              return problem === undefined
                ? Effect.succeed(next)
                : Effect.fail(new NotAnAppend({ id: handle.id, problem }));
            }),
        ),
        (appended): Effect.Effect<UpdateResult<A>> =>
          result === undefined
            ? Effect.die("update: the operation's result is missing")
            : Effect.succeed({ ...appended, result: result.value }),
      );
    });
  }

  const repair: SessionStore["repair"] = (handle, options) =>
    Effect.suspend(() => {
      let closers: ReadonlyArray<SessionEvent> = [];
      return Effect.map(
        core.commit(handle, (session) => {
          closers = interruptedTurnClosers(heldEvents(session), {
            surface: session.surface,
            live: liveWork(handle),
            ...(options?.partialAnswer === undefined
              ? {}
              : { partialAnswer: options.partialAnswer }),
          });
          return closers.length === 0
            ? Effect.succeed(session)
            : Session.appendEvents(session, closers);
        }),
        (session) => ({ session, closers }),
      );
    });

  const withSession: SessionStore["withSession"] = (id, f, options) =>
    Effect.scoped(
      Effect.flatMap(
        core.open(id, { ...options, mode: options?.mode ?? "write" }),
        f,
      ),
    );

  const resolveAppend: SessionStore["resolveAppend"] = (error, options) =>
    Effect.scoped(Effect.gen(function* () {
      // The batch may be under a checkpoint written since: read it whole.
      const read = {
        ...readOptionsOf<never>(options, true),
        wholeLog: true,
      };
      // A writer's open waits for nothing: it succeeds only once the failed
      // writer's claim is gone, and with it any write still under way. A
      // claim held by another writer was taken after that, so a reader's
      // view is as final. Where the claim can be held by the failed write's
      // own process, still able to commit, the layer waits for its end.
      if (core.writerEnded !== undefined) {
        yield* core.writerEnded(error, options);
      }
      const handle = yield* core.open(error.id, { ...read, mode: "write" })
        .pipe(
          Effect.catchTag(
            "SessionLocked",
            () => core.open(error.id, { ...read, mode: "read" }),
          ),
          Effect.map((handle): SessionHandle | undefined => handle),
          Effect.catchTag(
            "SessionNotFound",
            (notFound) =>
              error.header === undefined
                ? Effect.fail(notFound)
                : Effect.succeed(undefined),
          ),
        );
      return yield* resolutionOf(error, handle?.session);
    }));

  const follow = followWithOptions(core.follow);

  // A session that holds only its surface cannot be stored whole.
  const create: SessionStore["create"] = (init, options) => {
    if ("surface" in init && init.surface.heldFrom > init.surface.baseSeq) {
      return Effect.fail(
        new EventsNotHeld({
          fromSeq: init.surface.baseSeq,
          heldFrom: init.surface.heldFrom,
        }),
      );
    }
    return core.create(init, options);
  };

  function list(): Effect.Effect<ReadonlyArray<string>, StorageError>;
  function list(query: ListQuery): Effect.Effect<ListPage, ListError>;
  function list(
    query?: ListQuery,
  ): Effect.Effect<ReadonlyArray<string> | ListPage, ListError> {
    if (query === undefined) return core.list();
    return Effect.suspend(() => {
      const resolved = resolveQuery(query);
      return Result.isFailure(resolved)
        ? Effect.fail(resolved.failure)
        : core.catalogue(resolved.success);
    });
  }

  return {
    create,
    open: core.open,
    checkpoint: core.checkpoint,
    events,
    withHistory,
    withSession,
    resolveAppend,
    append: (handle, drafts) =>
      Effect.suspend(() => {
        const batch = [...drafts];
        return commit(handle, (session) => Session.appendAll(session, batch));
      }),
    appendEvents: (handle, events) =>
      Effect.suspend(() => {
        const batch = [...events];
        return commit(
          handle,
          (session) => Session.appendEvents(session, batch),
        );
      }),
    update,
    repair,
    follow,
    list,
    remove: core.remove,
    stat: core.stat,
    close: core.close,
  };
}
