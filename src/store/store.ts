/**
 * The session store: an effect service that keeps sessions, whatever holds
 * them. Nothing in its interface names a file, a folder or a table; what is
 * particular to one store (a root folder, a connection) belongs to its
 * layer: `layerJsonlStore({ root })`, `layerMemoryStore()`, and
 * `layerPostgresStore` in `@palimpsest/session/postgres`.
 *
 * Promises every layer keeps (the conformance suite checks each):
 *
 * - **No clobber.** `create` never replaces a stored session
 *   (`SessionAlreadyExists`).
 * - **Honest outcomes.** `create`, `append`, `update` and `repair` store
 *   one batch, all or nothing, and end in one of three ways: success (the
 *   batch is stored, once, durably); a typed failure, which guarantees that
 *   the call stored nothing (`StorageError`, `WriterClaimLost`, ...); or
 *   `AppendOutcomeUnknown`, when the store cannot tell (a failed undo, a
 *   connection cut after `COMMIT` was sent). Never a defect, never "not
 *   stored" for a batch that may be stored. After an unknown outcome the
 *   handle refuses further writes, and `resolveAppend(error)` tells whether
 *   the batch is stored (`"stored"`), is not (`"absent"`: write it again),
 *   or the log holds something else there (`StoredLogDiffers`).
 * - **One writer per session.** A write handle holds the session's writer
 *   claim; a second writer gets `SessionLocked`. A dead writer's claim is
 *   reclaimed. A handle that loses its claim (a PostgreSQL writer whose
 *   connection broke) refuses every later write with `WriterClaimLost`.
 * - **Scoped handles.** `create` and `open` need a `Scope`: the claim and
 *   whatever else the handle holds are released when the scope closes,
 *   whether it closes on success, failure or interruption. An interrupted
 *   `open` releases what it took at once. `withSession` opens, runs and
 *   releases in one call; `close` releases early.
 * - **Committed events only.** Readers and `follow` see whole batches that
 *   were stored, never a torn or undone write.
 * - **Follow options.** `follow` takes a plain non-negative integer as
 *   `fromSeq` (anything else is `InvalidSessionSeq`), can wait for a
 *   session to be created (`waitForSession`), and ends after the event
 *   that meets `until` (a turn's end, a seq, a predicate).
 *
 * History operations (`compact`, `pruneToolResult`, `setSystemPrompt`, ...)
 * are pure functions from a session to a longer one; `update` runs one on
 * the handle's current session and stores exactly the events it appended.
 * A `fork` is a new session: persist it with `create(forked)`, which
 * publishes its header and events at once.
 *
 * A layer implements {@link StoreCore}; {@link makeSessionStore} builds the
 * rest of the service on it, so every layer has the same `append`,
 * `update`, `repair`, `resolveAppend` and `withSession`.
 *
 * @module
 */
import * as Context from "effect/Context";
import type * as Duration from "effect/Duration";
import type * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import type * as Stream from "effect/Stream";
import type { SessionEvent } from "../core/event.ts";
import type { PartialAnswerPolicy } from "../session/repair.ts";
import type { Vocabulary } from "../core/decode.ts";
import type {
  EventsNotHeld,
  InvalidSessionSeq,
  SurfaceError,
} from "../core/errors.ts";
import type {
  AppendError,
  EventDraft,
  Session,
  SessionHeader,
} from "../session/session.ts";
import type {
  CorruptLine,
  FoldFailed,
  LineTooLong,
  LogReadError,
} from "../log/errors.ts";
import type { Migration, TornTail } from "../log/reader.ts";
import type { CheckpointRejected } from "../log/checkpoint.ts";
import type { SessionSeq } from "../core/seq.ts";
import type { ListPage, ListQuery } from "./catalogue.ts";
import type {
  AppendOutcomeUnknown,
  HandleClosed,
  InvalidListQuery,
  InvalidSessionId,
  NotAnAppend,
  ReadOnlyHandle,
  SessionAlreadyExists,
  SessionLocked,
  SessionNotFound,
  StorageError,
  StoredLogDiffers,
  WriterClaimLost,
} from "./errors.ts";

/** How a session is opened. */
export type OpenMode = "read" | "write";

/** What the store saw when a session was opened. */
export interface OpenReport {
  /** The events served. */
  readonly events: number;
  /**
   * An incomplete final write found at open (offset and length in bytes of
   * the stored form): a reader leaves it out, a writer cuts it.
   */
  readonly tornTail: TornTail | undefined;
  /** With `recover`: the error of the first bad record, where reading stopped. */
  readonly stoppedAt: CorruptLine | FoldFailed | LineTooLong | undefined;
  /**
   * The seq of the checkpoint the open started from (it read only the log
   * after it: `events` counts those), or undefined for a whole replay.
   */
  readonly checkpoint?: SessionSeq | undefined;
  /** A checkpoint the open found and did not use, and why. */
  readonly checkpointRejected?: CheckpointRejected | undefined;
}

/** An open session. */
export interface SessionHandle {
  /** The session id. */
  readonly id: string;
  /** How it was opened. */
  readonly mode: OpenMode;
  /** The session as of the last stored batch (or as read, for a reader). */
  readonly session: Session;
  /** What the store saw at open. */
  readonly report: OpenReport;
}

/** Options of {@link SessionStore} `open`. */
export interface OpenOptions<E = never> {
  /** `read` (the default of `open`) or `write` (the default of `withSession`). */
  readonly mode?: OpenMode;
  /** Extra log-only types the session's events may have. */
  readonly vocabulary?: Vocabulary;
  /** The longest stored line accepted, in bytes; 256 MiB by default. */
  readonly maxLineBytes?: number;
  /** Read handles only: serve the valid prefix before a bad line. */
  readonly recover?: boolean;
  /** Read handles only: migrates an older log in memory. */
  readonly migrate?: Migration<E>;
  /**
   * Replay the whole log, never from a checkpoint, and hold every event of
   * it. By default an open starts from the session's newest checkpoint that
   * matches the log, and a session of more than 10,000 events holds its
   * surface, the events of work still open and the events after its
   * checkpoint (see `Session.heldFrom`; `store.events` reads the rest).
   */
  readonly wholeLog?: boolean;
}

/** Options of {@link SessionStore} `events`. */
export interface EventsOptions {
  /** The first seq, a plain non-negative integer; 0 by default. */
  readonly fromSeq?: number;
  /** The seq after the last one; the handle's next seq by default. */
  readonly toSeq?: number;
}

/** Options of {@link SessionStore} `create`. */
export interface CreateOptions {
  /** Extra log-only types the session's events may have. */
  readonly vocabulary?: Vocabulary;
}

/**
 * Where a `follow` stream ends: after serving the first event that meets
 * it.
 *
 * - `"turnEnd"`: a `turn/end` (the end of the turn in progress, when
 *   following from the session's next seq);
 * - `{ turnEnd: n }`: the `turn/end` of turn `n`;
 * - `{ seq: n }`: the event of seq `n` (a plain non-negative integer); the
 *   stream is empty when `fromSeq` is past it;
 * - a predicate on an event.
 */
export type FollowUntil =
  | "turnEnd"
  | { readonly turnEnd: number }
  | { readonly seq: number }
  | ((event: SessionEvent) => boolean);

/** Options of {@link SessionStore} `follow`. */
export interface FollowOptions {
  /**
   * The first seq to serve, a plain non-negative integer; 0 by default.
   * Anything else fails `InvalidSessionSeq`.
   */
  readonly fromSeq?: number;
  /** Extra log-only types the session's events may have. */
  readonly vocabulary?: Vocabulary;
  /**
   * When the session does not exist yet, wait for it to be created (and
   * serve it from its first event) instead of failing `SessionNotFound`.
   */
  readonly waitForSession?: boolean;
  /** End the stream after serving the first event that meets this. */
  readonly until?: FollowUntil;
}

/** What `stat` tells about a stored session. */
export interface SessionStat {
  /** The session id. */
  readonly id: string;
  /** The stored size in bytes. */
  readonly bytes: number;
  /** The last change, epoch milliseconds. */
  readonly modifiedAt: number;
  /** Whether a live writer holds the session. */
  readonly locked: boolean;
}

/** What a stored batch did. */
export interface AppendResult {
  /** The session after the batch. */
  readonly session: Session;
  /** The events stored, with their seqs and times; empty for an empty batch. */
  readonly events: ReadonlyArray<SessionEvent>;
}

/** Options of `repair`. */
export interface RepairOptions {
  /**
   * What becomes of an answer a crash cut while it streamed: `"keep"` (the
   * default) leaves its `assistant/partial` batches for people, out of the
   * model's requests; `"append"` also appends its text and reasoning as an
   * interrupted `assistant/message`.
   */
  readonly partialAnswer?: PartialAnswerPolicy;
}

/** What `repair` did. */
export interface RepairResult {
  /** The session after the closers. */
  readonly session: Session;
  /** The closers appended; empty when nothing was open. */
  readonly closers: ReadonlyArray<SessionEvent>;
}

/** Errors of creating a session. */
export type CreateError =
  | InvalidSessionId
  | EventsNotHeld
  | SessionAlreadyExists
  | SessionLocked
  | StorageError
  | AppendOutcomeUnknown;

/** Errors of opening a session. */
export type OpenError =
  | InvalidSessionId
  | SessionNotFound
  | SessionLocked
  | LogReadError
  | StorageError;

/**
 * What reading older events can fail with in `update`: only for an
 * operation whose errors include `EventsNotHeld` (one that reads the log,
 * such as `rewind`), else nothing.
 */
export type HistoryReadError<E> = [Extract<E, EventsNotHeld>] extends [never]
  ? never
  : OpenError | InvalidSessionSeq;

/** Errors of writing through a handle. */
export type WriteError =
  | ReadOnlyHandle
  | HandleClosed
  | WriterClaimLost
  | StorageError
  | AppendOutcomeUnknown;

/**
 * What `resolveAppend` found: the whole batch is stored, or none of it is
 * and the log ends where it would start (write it again).
 */
export type AppendResolution = "stored" | "absent";

/** Options of {@link SessionStore} `resolveAppend`. */
export interface ResolveOptions {
  /** Extra log-only types the session's events may have. */
  readonly vocabulary?: Vocabulary;
  /** The longest stored line accepted, in bytes; 256 MiB by default. */
  readonly maxLineBytes?: number;
  /**
   * PostgreSQL: how long to wait for the failed writer's server process
   * to end while its transaction can still commit; by default as long as
   * the append's own check waits (`deadWriterSeconds` + 5 s). Other stores
   * ignore it: their claim ends with the write.
   */
  readonly writerWait?: Duration.Input;
  /**
   * PostgreSQL: when the failed writer's server process still runs after
   * `writerWait`, end it (`pg_terminate_backend`, which needs the same role
   * or `pg_signal_backend`), which rolls its transaction back unless its
   * `COMMIT` is already under way, and then answer. False by default: the
   * answer is then `AppendOutcomeUnknown` again. Only for a writer known to
   * be given up (its process gone or stopped).
   */
  readonly terminateWriter?: boolean;
}

/**
 * Errors of resolving an unknown outcome: `AppendOutcomeUnknown` again when
 * the write can still commit (PostgreSQL: the failed writer's server
 * process still runs; see {@link ResolveOptions}).
 */
export type ResolveError =
  | OpenError
  | StoredLogDiffers
  | AppendOutcomeUnknown;

/** Errors of a catalogue query. */
export type ListError = InvalidListQuery | StorageError;

/** Errors of removing a session. */
export type RemoveError =
  | InvalidSessionId
  | SessionNotFound
  | SessionLocked
  | StorageError;

/** Errors of following a session. */
export type FollowError =
  | InvalidSessionId
  | InvalidSessionSeq
  | SessionNotFound
  | LogReadError
  | StorageError;

/**
 * A history operation: a pure function from a session to a longer one. It
 * returns the session, or a result that carries it in `session` beside
 * what else it reports (`pruneLargeToolResults` returns `{ session,
 * pruned, savedChars }`).
 */
export type HistoryOperation<E, R, A extends UpdateValue = Session> = (
  session: Session,
) => Effect.Effect<A, E, R>;

/** What a history operation returns: the session, or a result holding it. */
export type UpdateValue = Session | { readonly session: Session };

/** What `update` did: the batch stored, and the operation's own result. */
export interface UpdateResult<A extends UpdateValue = Session>
  extends AppendResult {
  /** What the operation returned (the session, or its result). */
  readonly result: A;
}

/** The operations of a session store. */
export interface SessionStore {
  /**
   * Creates a session and opens it for writing; never replaces a stored
   * one. Given a `Session` (a fork, say), its header and events are stored
   * at once. The handle is released when the scope closes.
   *
   * @param init A header, or a whole session.
   * @param options The vocabulary (a given session's own by default).
   * @returns `Effect<SessionHandle, CreateError, Scope>`.
   */
  readonly create: (
    init: SessionHeader | Session,
    options?: CreateOptions,
  ) => Effect.Effect<SessionHandle, CreateError, Scope.Scope>;
  /**
   * Opens a session. A writer takes the writer claim and cuts a torn tail;
   * a reader sees the stored batches. Writers read strictly and refuse
   * older versions (`FormatTooOld`): migrate first. The handle is released
   * when the scope closes; an interrupted open releases at once.
   *
   * @param id The session id.
   * @param options Mode, vocabulary, limits; `recover` and `migrate` for readers.
   * @returns `Effect<SessionHandle, OpenError | E, Scope>`.
   */
  readonly open: <E = never>(
    id: string,
    options?: OpenOptions<E>,
  ) => Effect.Effect<SessionHandle, OpenError | E, Scope.Scope>;
  /**
   * Opens a session (for writing unless `options.mode` says otherwise), runs
   * `f` with the handle and releases the handle, whatever happens.
   *
   * @param id The session id.
   * @param f What to do with the handle.
   * @param options As for `open`; `mode` defaults to `write`.
   * @returns `Effect<A, E | OpenError | E2, R>`.
   */
  readonly withSession: <A, E, R, E2 = never>(
    id: string,
    f: (handle: SessionHandle) => Effect.Effect<A, E, R>,
    options?: OpenOptions<E2>,
  ) => Effect.Effect<A, E | OpenError | E2, Exclude<R, Scope.Scope>>;
  /**
   * Appends drafts as one stored batch: seqs and the `Clock` time assigned,
   * decoded, folded, stored. All or nothing.
   *
   * @param handle A write handle.
   * @param drafts The events without seq and time.
   * @returns `Effect<AppendResult, AppendError | WriteError>`: the session
   * and the events as stored, so citing one is a field read.
   */
  readonly append: (
    handle: SessionHandle,
    drafts: Iterable<EventDraft>,
  ) => Effect.Effect<AppendResult, AppendError | WriteError>;
  /**
   * Appends decoded events (seqs and times set) as one stored batch.
   *
   * @param handle A write handle.
   * @param events Events continuing the log.
   * @returns `Effect<AppendResult, SurfaceError | WriteError>`.
   */
  readonly appendEvents: (
    handle: SessionHandle,
    events: Iterable<SessionEvent>,
  ) => Effect.Effect<AppendResult, SurfaceError | WriteError>;
  /**
   * Runs a history operation on the handle's current session and stores
   * exactly the events it appended, as one batch. The operation must build
   * on the session it is given (`NotAnAppend` otherwise: a fork is stored
   * with `create`).
   *
   * The operation returns the session or a result carrying it in
   * `session` (`(s) => pruneLargeToolResults(s, options)`); that result is
   * the outcome's `result`.
   *
   * An operation that needs events the session does not hold (a
   * `rewind` on a session opened from a checkpoint, which holds only its
   * surface and latest events) fails `EventsNotHeld`; `update` then reads
   * them from the stored log and runs it again, as `withHistory` does, so
   * it may run more than once. The handle's session then holds them.
   *
   * @param handle A write handle.
   * @param op A pure operation such as `(s) => compact(s, range)`.
   * @returns `Effect<UpdateResult<A>, E | NotAnAppend | WriteError |
   * HistoryReadError<E>, R>` (the last: reading older events, for an
   * operation that can fail `EventsNotHeld`).
   */
  readonly update: <E, R, A extends UpdateValue = Session>(
    handle: SessionHandle,
    op: HistoryOperation<E, R, A>,
  ) => Effect.Effect<
    UpdateResult<A>,
    E | NotAnAppend | WriteError | HistoryReadError<E>,
    R
  >;
  /**
   * Appends the closers of what a crash left open
   * ({@link interruptedTurnClosers}: an abandoned compaction, the open
   * turns, their unanswered calls) as one stored batch. A turn or a
   * compaction that a running `runTurn` or `compactIfNeeded` of this
   * process holds on the same handle is live, not abandoned, and is left
   * open. Repairing a closed log appends nothing.
   *
   * @param handle A write handle.
   * @param options What becomes of a partial answer (`partialAnswer`:
   * kept for people, the default, or also appended as an interrupted
   * message; see `CloserOptions`).
   * @returns `Effect<RepairResult, SurfaceError | WriteError>`.
   */
  readonly repair: (
    handle: SessionHandle,
    options?: RepairOptions,
  ) => Effect.Effect<RepairResult, SurfaceError | WriteError>;
  /**
   * Tells whether the batch of an {@link AppendOutcomeUnknown} is stored,
   * so that a caller writes it again only when it is not. It opens the
   * session for writing (so no write of the batch can still be under way:
   * the failed writer's claim is gone), or, when another writer holds the
   * claim, for reading; then compares the events stored from the batch's
   * first seq with the batch's events, in their stored form. On
   * PostgreSQL it first waits for the failed writer's server process to
   * end (its transaction can commit while it runs, and it may hold the
   * claim itself), up to `options.writerWait`, ending it when
   * `options.terminateWriter` allows; while it runs the answer is
   * `AppendOutcomeUnknown` again.
   *
   * @param error The unknown outcome.
   * @param options The vocabulary and line limit to read the session with,
   * and on PostgreSQL how long to wait for the failed writer.
   * @returns `Effect<AppendResolution, ResolveError>`: `"stored"` when
   * every event of the batch is stored at its seq, `"absent"` when the log
   * ends where the batch starts (for a `create`: no such session);
   * `StoredLogDiffers` when it holds something else there, or a part;
   * `AppendOutcomeUnknown` when the write can still commit.
   */
  readonly resolveAppend: (
    error: AppendOutcomeUnknown,
    options?: ResolveOptions,
  ) => Effect.Effect<AppendResolution, ResolveError>;
  /**
   * The stored events of a session from `fromSeq` on, then each batch as it
   * is stored, live; the stream ends when interrupted, or after the event
   * that meets `until`. Only committed events are served, never a torn
   * write. With `waitForSession`, a session not created yet is waited for.
   *
   * @param id The session id.
   * @param options The first seq, the vocabulary, whether to wait for the
   * session, where to stop.
   * @returns `Stream<SessionEvent, FollowError>`.
   */
  readonly follow: (
    id: string,
    options?: FollowOptions,
  ) => Stream.Stream<SessionEvent, FollowError>;
  /**
   * Without a query, the ids of the stored sessions, sorted. With one, a
   * page of the catalogue: each session's metadata, first user text, event
   * count and times, filtered (tags, labels, working directory, time),
   * searched (title, tags, first user text, ignoring case), sorted (last
   * change, creation or id) and paged (`limit`, and the page's `cursor`
   * for the next one).
   *
   * @example A page of the sessions tagged `ci`
   * ```ts
   * import { layerMemoryStore, SessionStore, tagSession } from "@palimpsest/session";
   * import { Effect } from "effect";
   * import assert from "node:assert/strict";
   *
   * const program = Effect.gen(function* () {
   *   const store = yield* SessionStore;
   *   for (const id of ["a", "b"]) {
   *     const writer = yield* store.create({ id, createdAt: 0, isSeeded: false });
   *     if (id === "b") yield* store.update(writer, (s) => tagSession(s, ["ci"]));
   *   }
   *   return yield* store.list({ filter: { tags: ["ci"] } });
   * });
   * const page = Effect.runSync(Effect.scoped(program).pipe(Effect.provide(layerMemoryStore())));
   * assert.deepEqual(page.sessions.map((entry) => entry.id), ["b"]);
   * ```
   *
   * @param query The filter, search, order, cursor and limit.
   * @returns `Effect<ReadonlyArray<string>, StorageError>`, or with a query
   * `Effect<ListPage, InvalidListQuery | StorageError>`.
   */
  readonly list: {
    (): Effect.Effect<ReadonlyArray<string>, StorageError>;
    (query: ListQuery): Effect.Effect<ListPage, ListError>;
  };
  /**
   * Removes a session: its log, its checkpoint, its catalogue entry and
   * whatever else the store keeps beside it, together. It takes the
   * session's writer claim first, so a session with a live writer is not
   * removed (`SessionLocked`). A removal cut short (a crash, a kill) leaves
   * the session whole or gone, never part of it.
   *
   * @param id The session id.
   * @returns `Effect<void, RemoveError>`.
   */
  readonly remove: (id: string) => Effect.Effect<void, RemoveError>;
  /**
   * The size, time and writer state of a stored session.
   *
   * @param id The session id.
   * @returns `Effect<SessionStat, InvalidSessionId | SessionNotFound |
   * StorageError>`.
   */
  readonly stat: (
    id: string,
  ) => Effect.Effect<
    SessionStat,
    InvalidSessionId | SessionNotFound | StorageError
  >;
  /**
   * Writes a checkpoint of the handle's session now (a write handle): the
   * fold's state at its next seq, by reference into the log, stored beside
   * it, so the next open replays only what comes after. It works on any
   * write handle, however it was opened (a log without a checkpoint, written
   * by an older release, imported, migrated or copied): what the session
   * does not hold is read through the store. Derived data: a failure here
   * loses no event. The store also writes them on its own, as its
   * `checkpoints` option says.
   *
   * @param handle A write handle.
   * @returns `Effect<SessionSeq | undefined, WriteError>`: the seq it covers
   * up to, or undefined for an empty log; a `StorageError` that says to open
   * the session again when the stored log is not the one the handle wrote.
   */
  readonly checkpoint: (
    handle: SessionHandle,
  ) => Effect.Effect<SessionSeq | undefined, WriteError>;
  /**
   * Events of the handle's session, in seq order: from memory when the
   * session holds them, else read from the stored log (a session opened
   * from a checkpoint, or from a long log, holds its surface and the events
   * from `Session.heldFrom` on): the range only, without folding the log or
   * holding the rest of it. Never past the handle's next seq.
   *
   * @param handle A handle.
   * @param options The range; the whole log by default.
   * @returns `Effect<ReadonlyArray<SessionEvent>, OpenError |
   * InvalidSessionSeq>`.
   */
  readonly events: (
    handle: SessionHandle,
    options?: EventsOptions,
  ) => Effect.Effect<
    ReadonlyArray<SessionEvent>,
    OpenError | InvalidSessionSeq
  >;
  /**
   * Runs a history function on the handle's session, reading through the
   * store the older events it asks for: when `f` meets an event the
   * session does not hold (it fails with the {@link EventsNotHeld} that
   * `Session.events`, `Session.eventAt`, the provenance functions, `fork`
   * and the view return, or throws it), the events from there to the first
   * held one are
   * read (at least twice as many as the read before, so a deep chain of
   * replacements costs few reads) and `f` runs again on a session that
   * also holds them. `lineage`, `shadowedBy`, `surfaceAt`, `fork` and the
   * view work on any handle this way; `f` must be pure (it may run more
   * than once), and the session it is given is for reading: it is not the
   * handle's.
   *
   * @example The lineage of a summary, on a session opened from a checkpoint
   * ```ts
   * import { compact, layerMemoryStore, lineage, Session, SessionStore } from "@palimpsest/session";
   * import { Effect } from "effect";
   * import assert from "node:assert/strict";
   *
   * const user = (id: string) => ({
   *   type: "user/message" as const, surfaceOp: "append" as const,
   *   data: { id, role: "user" as const, content: [{ type: "text" as const, text: id }], source: { kind: "user" } },
   * });
   * const program = Effect.gen(function* () {
   *   const store = yield* SessionStore;
   *   yield* Effect.scoped(Effect.gen(function* () {
   *     const writer = yield* store.create({ id: "chat", createdAt: 0, isSeeded: false });
   *     yield* store.append(writer, [user("a"), user("b")]);
   *     yield* store.update(writer, (s) => compact(s, { startSeq: 0, endSeq: 1, summary: "a and b", compactionId: "c1" }));
   *     yield* store.checkpoint(writer);
   *   }));
   *   const reader = yield* store.open("chat");
   *   const tree = yield* store.withHistory(reader, (session) => Effect.fromResult(lineage(session, 4)));
   *   return [Session.heldFrom(reader.session), tree?.sources.map((s) => s.seq)];
   * });
   * const [heldFrom, sources] = Effect.runSync(Effect.scoped(program).pipe(Effect.provide(layerMemoryStore())));
   * assert.equal(heldFrom, 6);
   * assert.deepEqual(sources, [2, 3, 0, 1]);
   * ```
   *
   * @param handle A handle.
   * @param f The history function, as an Effect (`Effect.fromResult`
   * around one that returns a `Result`, `Effect.sync` around another
   * synchronous one).
   * @returns `Effect<A, E | OpenError | InvalidSessionSeq, R>`: `f`'s
   * outcome.
   */
  readonly withHistory: <A, E, R>(
    handle: SessionHandle,
    f: (session: Session) => Effect.Effect<A, E, R>,
  ) => Effect.Effect<A, E | OpenError | InvalidSessionSeq, R>;
  /**
   * Releases a handle before its scope closes. Idempotent.
   *
   * @param handle A handle.
   * @returns `Effect<void>`.
   */
  readonly close: (handle: SessionHandle) => Effect.Effect<void>;
}

/**
 * The session store service. Provide it with `layerJsonlStore({ root })`,
 * `layerMemoryStore()` or `layerPostgresStore` (in
 * `@palimpsest/session/postgres`).
 *
 * @example Creating, appending and reopening
 * ```ts
 * import { layerMemoryStore, SessionStore } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   const { events } = yield* Effect.scoped(Effect.gen(function* () {
 *     const writer = yield* store.create({ id: "chat", createdAt: 0, isSeeded: false });
 *     return yield* store.append(writer, [{ type: "turn/start", data: { turn: 0 } }]);
 *   }));
 *   const reader = yield* Effect.scoped(store.open("chat"));
 *   return [events[0]?.seq, reader.report.events];
 * });
 * const [seq, count] = Effect.runSync(program.pipe(Effect.provide(layerMemoryStore())));
 * assert.deepEqual([seq, count], [0, 1]);
 * ```
 */
export const SessionStore: Context.Service<SessionStore, SessionStore> = Context
  .Service<SessionStore>("@palimpsest/session/SessionStore");
