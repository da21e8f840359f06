/**
 * The PostgreSQL layer of the session store, over `effect/sql` with
 * `@effect/sql-pg`: the same promises as the JSONL store, for sessions
 * shared by many machines.
 *
 * - **Same bytes.** Each event is stored as the canonical line the JSONL
 *   codec writes (`encodeEventLine`, without `\n`) and the head row keeps
 *   the header line, so a session copied between stores keeps its bytes.
 * - **Durable, all-or-nothing appends.** An append is one transaction: it
 *   locks the session's head row (`SELECT … FOR UPDATE`), checks that the
 *   row's `next_seq` is the seq the writer expects, inserts the batch,
 *   moves `next_seq` and sends `NOTIFY`. It resolves once `COMMIT` has
 *   returned. The `(session_id, seq)` key is the backstop: a duplicate seq
 *   is a conflict, never a second copy.
 * - **Honest outcomes.** The transaction is run by hand, never as a defect:
 *   a failure before `COMMIT` is sent stored nothing (`StorageError`, or
 *   `WriterClaimLost` when the connection broke); a `COMMIT` left without
 *   an answer (or with an error) is settled on a fresh connection that
 *   waits for the writer's transaction to end and compares what is stored,
 *   and only a check that fails too makes the outcome
 *   `AppendOutcomeUnknown`. `create` works the same way.
 * - **One writer per session, across machines.** A writer holds a
 *   session-level advisory lock (`pg_try_advisory_lock`) on its own
 *   dedicated connection, and appends through that same connection. The
 *   claim lives exactly as long as the connection: closing the handle (or
 *   its scope) ends it; a writer process that dies has its socket closed
 *   by the kernel and the server drops the lock at once; a machine that
 *   vanishes (power, network) is detected by TCP keepalive, which the
 *   writer's connection asks the server to run every few seconds
 *   (`tcp_keepalives_*`, `tcp_user_timeout`), so its claim is gone within
 *   about {@link PostgresStoreOptions.deadWriterSeconds} seconds. A writer
 *   whose connection broke cannot append anymore (the lock went with the
 *   connection, which never reconnects): its handle refuses every later
 *   write with `WriterClaimLost`, so a stale writer never writes after a
 *   takeover.
 * - **Readers see only committed events**, as of one snapshot: a reader
 *   reads `next_seq` and then the rows below it, in pages by seq (a
 *   million-event session is never one array of rows), through the same
 *   streaming reader as a file ({@link readSessionStream}).
 * - **Follow**: `LISTEN` on one channel (the append's `NOTIFY` is
 *   delivered only when its transaction commits), shared by every follower
 *   of the store, with polling as the fallback when no notification comes
 *   (or `LISTEN` is not available, as behind a transaction pooler). A
 *   follow with `waitForSession` looks for a missing session's head row at
 *   each wake. A read whose connection broke (a server restart) is tried
 *   again every poll interval from the same cursor.
 *
 * @module
 */
import * as Arr from "effect/Array";
import * as Context from "effect/Context";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Layer from "effect/Layer";
import * as Option from "effect/Option";
import * as PubSub from "effect/PubSub";
import * as Queue from "effect/Queue";
import * as RcRef from "effect/RcRef";
import * as Redacted from "effect/Redacted";
import * as Result from "effect/Result";
import * as Schedule from "effect/Schedule";
import * as Scope from "effect/Scope";
import * as Semaphore from "effect/Semaphore";
import * as Stream from "effect/Stream";
import * as Reactivity from "effect/reactivity/Reactivity";
import { SqlClient } from "effect/sql/SqlClient";
import { isSqlError, type SqlError } from "effect/sql/SqlError";
import type { MigrationError } from "effect/sql/Migrator";
import { PgClient } from "@effect/sql-pg";
import { makeHandleRegistry, writeNewEvents } from "../store/handles.ts";
import { redactAddress } from "../store/redact.ts";
import {
  createdFrom,
  openWith,
  readOptionsOf,
  reportOf,
  wholeReport,
  writableLog,
} from "../store/open.ts";
import { FORMAT_VERSION, type SessionEvent } from "../event.ts";
import { Session } from "../session.ts";
import { encodeEventLine, encodeHeaderLine } from "../log/codec.ts";
import type { CorruptLine } from "../log/errors.ts";
import { corrupt, decodeLine, makeRunBudget } from "../log/line.ts";
import { checkSessionId } from "../store/ids.ts";
import { errorCode } from "../fs/io.ts";
import { readSessionStream } from "../log/reader.ts";
import {
  AppendOutcomeUnknown,
  type InvalidSessionId,
  SessionAlreadyExists,
  SessionLocked,
  SessionNotFound,
  StorageError,
  WriterClaimLost,
} from "../store/errors.ts";
import { SessionSeq } from "../seq.ts";
import type { LogReadError } from "../log/errors.ts";
import type { LoadedLog, ReadOptions } from "../log/reader.ts";
import {
  type FollowError,
  type FollowOptions,
  makeSessionStore,
  type OpenOptions,
  type SessionHandle,
  SessionStore,
  type StoreCore,
  type WriteError,
} from "../store/store.ts";
import {
  EVENTS_CHANNEL,
  EVENTS_TABLE,
  migrateStore,
  SESSIONS_TABLE,
} from "./schema.ts";

/** Options of {@link layerPostgresStore}. */
export interface PostgresStoreOptions {
  /** The connection URL, `postgres://user:password@host:port/database`. */
  readonly url: string | Redacted.Redacted<string>;
  /** Rows read per query when loading or following; 1000 by default. */
  readonly pageSize?: number;
  /** How long `follow` waits for a notification before it polls; 1 s. */
  readonly pollInterval?: Duration.Input;
  /** Connections of the shared pool (readers, list, stat); 10. */
  readonly maxConnections?: number;
  /**
   * About how long, in seconds, the server takes to drop the claim of a
   * writer whose machine vanished (TCP keepalive on the writer's
   * connection); 15 by default.
   */
  readonly deadWriterSeconds?: number;
}

/** Options of `follow` (the store's own). */
export type { FollowOptions };

/**
 * The PostgreSQL store: the {@link SessionStore} operations (`follow`
 * included, as every store has it).
 */
export type PostgresSessionStore = SessionStore;

/**
 * The requirement {@link PostgresStore} stands for: a brand of its own, not
 * the store's shape, so that no other store's layer satisfies it (a program
 * that asks for `PostgresStore` under `layerMemoryStore()` does not
 * type-check).
 */
export interface PostgresStore {
  /** The brand. */
  readonly "~palimpsest/PostgresStore": "PostgresStore";
}

/**
 * The session store service under a name of its own, for a program that
 * uses PostgreSQL and another store side by side. Provided by
 * {@link layerPostgresStore}, which also provides {@link SessionStore}.
 */
export const PostgresStore: Context.Service<
  PostgresStore,
  PostgresSessionStore
> = Context.Service<PostgresStore, PostgresSessionStore>(
  "@palimpsest/session/PostgresStore",
);

interface HandleState {
  session: Session;
  closed: boolean;
  lostClaim?: WriterClaimLost | undefined;
  readonly client: SqlClient | undefined;
  readonly scope: Scope.Closeable | undefined;
  readonly semaphore: Semaphore.Semaphore;
}

interface HeadRow {
  readonly header: string;
  readonly version: number;
  readonly nextSeq: number;
}

const encoder = new TextEncoder();
const DEFAULT_PAGE = 1000;
const INSERT_CHUNK = 1000;

/** The URL without its secrets, for messages and handles. */
const displayAddress = (url: string): string => redactAddress(url);

const UNDEFINED_TABLE = "42P01";

/** The SQL state the driver gave a failed call (`42P01`, `23505`, ...). */
const sqlState = (error: SqlError): string | undefined =>
  errorCode(error.reason.cause);

/** The SQL behind the claim: a session-level lock on a key of the id. */
const CLAIM_KEY = "hashtextextended('palimpsest:' || $1, 0)";

/**
 * A transaction-level lock a `create` holds until it ends, so that a check
 * of its outcome can wait for it (an append holds the head row instead).
 */
const WRITE_KEY = "hashtextextended('palimpsest-write:' || $1, 0)";

/**
 * Whether a failed call shows the connection gone: the driver lost it, or
 * the server ended the session (class 08, `57P0x` such as
 * `pg_terminate_backend`'s `57P01`, `25P03` an idle transaction's timeout).
 * A connection that is gone took the writer's claim with it.
 */
const brokeConnection = (error: SqlError): boolean =>
  error.reason._tag === "ConnectionError" ||
  /^(08|57P0|25P03)/.test(sqlState(error) ?? "");

/** How a write transaction ended. */
type Transacted<A, E> =
  /** `COMMIT` answered: the batch is stored. */
  | { readonly _tag: "Committed"; readonly value: A }
  /** It failed before `COMMIT` was sent: nothing is stored. */
  | { readonly _tag: "NotCommitted"; readonly error: E | SqlError }
  /** `COMMIT` was sent and no answer settles it (`error` why). */
  | { readonly _tag: "CommitUnsettled"; readonly error: unknown };

/** The command tag a raw result of the driver carries. */
const commandOf = (raw: unknown): unknown =>
  typeof raw === "object" && raw !== null && "command" in raw
    ? raw.command
    : undefined;

/**
 * Runs `body` in a transaction on `client`, by hand rather than with
 * `withTransaction`, whose rollback on a broken connection is a defect and
 * which cannot tell a `COMMIT` that failed from one whose answer was lost.
 * Interruption is not caught: the caller closes the connection, and the
 * server rolls back what it did not commit.
 */
const transact = <A, E>(
  client: SqlClient,
  body: Effect.Effect<A, E | SqlError>,
): Effect.Effect<Transacted<A, E>> =>
  Effect.gen(function* () {
    const begun = yield* Effect.result(client.unsafe("BEGIN"));
    if (Result.isFailure(begun)) {
      return { _tag: "NotCommitted", error: begun.failure } as const;
    }
    const ran = yield* Effect.result(body);
    if (Result.isFailure(ran)) {
      // A live connection rolls back here; a broken one already has: a
      // transaction never outlives its connection.
      yield* Effect.ignore(client.unsafe("ROLLBACK"));
      return { _tag: "NotCommitted", error: ran.failure } as const;
    }
    const committed = yield* Effect.result(client.unsafe("COMMIT").raw);
    if (Result.isFailure(committed)) {
      // Even an error answer may come after the commit is durable (a
      // backend terminated while it waits for a synchronous standby).
      return { _tag: "CommitUnsettled", error: committed.failure } as const;
    }
    const command = commandOf(committed.success);
    return command === "COMMIT"
      ? { _tag: "Committed", value: ran.success } as const
      : { _tag: "CommitUnsettled", error: command } as const;
  });

/**
 * How a failed SQL call is reported, for a store at `address`: a
 * `StorageError` whose code is the SQL state (or the Migrator's kind) and
 * whose cause is the SqlError itself.
 */
type Failed = (
  operation: string,
  id?: string,
) => (error: SqlError | MigrationError) => StorageError;

const failedAt = (address: string): Failed => (operation, id) => (error) =>
  new StorageError({
    operation: `${operation} ${address}`,
    id,
    code: "_tag" in error && error._tag === "SqlError"
      ? sqlState(error) ?? error.reason._tag
      : error.kind,
    cause: error,
  });

/** The head row of a session, or undefined (no row, or no table yet). */
const readHeadRow = (
  client: SqlClient,
  id: string,
  failed: Failed,
): Effect.Effect<HeadRow | undefined, StorageError> =>
  Effect.map(
    client.unsafe<
      { header: string; version: number; next_seq: bigint | number }
    >(
      `SELECT header, version, next_seq FROM ${SESSIONS_TABLE} WHERE id = $1`,
      [id],
    ),
    (rows): HeadRow | undefined => {
      const row = rows[0];
      return row === undefined ? undefined : {
        header: row.header,
        version: row.version,
        nextSeq: Number(row.next_seq),
      };
    },
  ).pipe(
    Effect.catchIf(
      (error) => sqlState(error) === UNDEFINED_TABLE,
      () => Effect.succeed(undefined),
    ),
    Effect.mapError(failed("read the head of")),
  );

/** One page of event lines, `[from, end)`, at most `limit` rows. */
const readEventPage = (
  client: SqlClient,
  id: string,
  from: number,
  end: number | undefined,
  limit: number,
  failed: Failed,
): Effect.Effect<
  ReadonlyArray<{ readonly seq: number; readonly line: string }>,
  StorageError
> =>
  Effect.map(
    end === undefined
      ? client.unsafe<{ seq: bigint | number; line: string }>(
        `SELECT seq, line FROM ${EVENTS_TABLE} WHERE session_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
        [id, from, limit],
      )
      : client.unsafe<{ seq: bigint | number; line: string }>(
        `SELECT seq, line FROM ${EVENTS_TABLE} WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq LIMIT $4`,
        [id, from, end, limit],
      ),
    (rows) => rows.map((row) => ({ seq: Number(row.seq), line: row.line })),
  ).pipe(Effect.mapError(failed("read the events of")));

/** The stored log as JSONL bytes: the header line, then pages of lines. */
const storedLogBytes = (
  client: SqlClient,
  id: string,
  head: HeadRow,
  pageSize: number,
  failed: Failed,
): Stream.Stream<Uint8Array, StorageError> =>
  Stream.concat(
    Stream.make(encoder.encode(`${head.header}\n`)),
    Stream.paginate(0, (from: number) =>
      Effect.map(
        from >= head.nextSeq
          ? Effect.succeed([])
          : readEventPage(client, id, from, head.nextSeq, pageSize, failed),
        (rows) => {
          const last = rows[rows.length - 1];
          const text = rows.map((row) => `${row.line}\n`).join("");
          return [
            text.length === 0 ? [] : [encoder.encode(text)],
            last === undefined || rows.length < pageSize
              ? Option.none()
              : Option.some(last.seq + 1),
          ] as const;
        },
      )),
  );

/** Options of {@link loadPostgresSession}. */
export interface LoadPostgresOptions<E = never> extends ReadOptions<E> {
  /** Rows read per query; 1000 by default. */
  readonly pageSize?: number;
}

/**
 * Reads one session from a PostgreSQL store over a connection of its own,
 * as {@link readSessionStream} reads a file: decode, fold, `recover`,
 * `migrate`. For tools that read one session and leave (the command line);
 * a program that keeps a store open uses the store's `open`.
 *
 * @param url The connection URL.
 * @param id The session id.
 * @param options The reader's options and the page size.
 * @returns `Effect<LoadedLog, InvalidSessionId | SessionNotFound |
 * LogReadError | StorageError | E>`.
 *
 * @example Reading a session the store wrote
 * ```ts
 * import { layerPostgresStore, loadPostgresSession, PostgresStore } from "@palimpsest/session/postgres";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const url = Deno.env.get("PALIMPSEST_PG_URL"); // e.g. postgres://postgres@localhost/postgres
 * if (url !== undefined) {
 *   const id = `doc-${crypto.randomUUID()}`;
 *   await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
 *     const store = yield* PostgresStore;
 *     const writer = yield* store.create({ id, createdAt: 0, isSeeded: false });
 *     yield* store.append(writer, [{ type: "turn/start", data: { turn: 0 } }]);
 *   })).pipe(Effect.provide(layerPostgresStore({ url }))));
 *   const log = await Effect.runPromise(loadPostgresSession(url, id));
 *   assert.equal(log.events.length, 1);
 * }
 * ```
 */
export function loadPostgresSession<E = never>(
  url: string | Redacted.Redacted<string>,
  id: string,
  options: LoadPostgresOptions<E> = {},
): Effect.Effect<
  LoadedLog,
  InvalidSessionId | SessionNotFound | LogReadError | StorageError | E
> {
  return Effect.suspend((): Effect.Effect<
    LoadedLog,
    InvalidSessionId | SessionNotFound | LogReadError | StorageError | E
  > => {
    const checked = checkSessionId(id);
    if (Result.isFailure(checked)) return Effect.fail(checked.failure);
    const redacted = typeof url === "string" ? Redacted.make(url) : url;
    const failed = failedAt(displayAddress(Redacted.value(redacted)));
    const pageSize = Math.max(1, options.pageSize ?? DEFAULT_PAGE);
    return Effect.scoped(Effect.gen(function* () {
      const client = yield* PgClient.makeClient({
        url: redacted,
        applicationName: "palimpsest reader",
      }).pipe(
        Effect.provide(Reactivity.layer),
        Effect.mapError(failed("connect to")),
      );
      const head = yield* readHeadRow(client, id, failed);
      if (head === undefined) return yield* new SessionNotFound({ id });
      return yield* readSessionStream(
        storedLogBytes(client, id, head, pageSize, failed),
        options,
      );
    }));
  });
}

/**
 * Stores a whole session in a PostgreSQL store (creating its tables when
 * needed), never replacing a stored session (`SessionAlreadyExists`). With
 * the session read from a file, the rows hold the file's lines byte for
 * byte.
 *
 * @param url The connection URL.
 * @param session The session to store.
 * @returns `Effect<void, InvalidSessionId | SessionAlreadyExists |
 * SessionLocked | StorageError | AppendOutcomeUnknown>`:
 * `AppendOutcomeUnknown` when the connection broke after `COMMIT` was sent
 * and the store could not tell whether it committed.
 *
 * @example Storing a session built in memory
 * ```ts
 * import { loadPostgresSession, savePostgresSession } from "@palimpsest/session/postgres";
 * import { Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const url = Deno.env.get("PALIMPSEST_PG_URL"); // e.g. postgres://postgres@localhost/postgres
 * if (url !== undefined) {
 *   const id = `doc-${crypto.randomUUID()}`;
 *   const session = await Effect.runPromise(Session.append(
 *     Session.make({ id, createdAt: 0, isSeeded: false }),
 *     { type: "turn/start", data: { turn: 0 } },
 *   ));
 *   await Effect.runPromise(savePostgresSession(url, session));
 *   const log = await Effect.runPromise(loadPostgresSession(url, id));
 *   assert.equal(log.events.length, 1);
 * }
 * ```
 */
export function savePostgresSession(
  url: string | Redacted.Redacted<string>,
  session: Session,
): Effect.Effect<
  void,
  | InvalidSessionId
  | SessionAlreadyExists
  | SessionLocked
  | StorageError
  | AppendOutcomeUnknown
> {
  // `create` from a whole session stores its header and events in one
  // transaction: the session is whole or absent.
  return Effect.scoped(Effect.gen(function* () {
    const store = yield* makePostgresStore({ url, maxConnections: 1 });
    yield* store.create(session);
  }));
}

/**
 * Makes the PostgreSQL store: connects a pool, runs the migrations, and
 * returns the store. Writers open their own connections. Everything closes
 * with the scope.
 *
 * @param options The connection URL and tuning.
 * @returns `Effect<PostgresSessionStore, StorageError, Scope>`.
 *
 * @example Listing the sessions of a database
 * ```ts
 * import { makePostgresStore } from "@palimpsest/session/postgres";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const url = Deno.env.get("PALIMPSEST_PG_URL"); // e.g. postgres://postgres@localhost/postgres
 * if (url !== undefined) {
 *   const ids = await Effect.runPromise(Effect.scoped(Effect.flatMap(
 *     makePostgresStore({ url }),
 *     (store) => store.list(),
 *   )));
 *   assert.ok(Array.isArray(ids));
 * }
 * ```
 */
export function makePostgresStore(
  options: PostgresStoreOptions,
): Effect.Effect<PostgresSessionStore, StorageError, Scope.Scope> {
  return Effect.gen(function* () {
    const url = typeof options.url === "string"
      ? Redacted.make(options.url)
      : options.url;
    const address = displayAddress(Redacted.value(url));
    const pageSize = Math.max(1, options.pageSize ?? DEFAULT_PAGE);
    const pollInterval = Duration.fromInputUnsafe(
      options.pollInterval ?? Duration.seconds(1),
    );
    const dead = Math.max(3, Math.round(options.deadWriterSeconds ?? 15));
    const failed = failedAt(address);
    const readHead = (client: SqlClient, id: string) =>
      readHeadRow(client, id, failed);
    const readPage = (
      client: SqlClient,
      id: string,
      from: number,
      end: number | undefined,
    ) => readEventPage(client, id, from, end, pageSize, failed);
    const logBytes = (client: SqlClient, id: string, head: HeadRow) =>
      storedLogBytes(client, id, head, pageSize, failed);
    const storeScope = yield* Effect.scope;
    const reactivity = yield* Reactivity.make;
    const pool = yield* PgClient.make({
      url,
      maxConnections: options.maxConnections ?? 10,
      applicationName: "palimpsest",
    }).pipe(
      Effect.provideService(Reactivity.Reactivity, reactivity),
      Effect.mapError(failed("connect to")),
    );
    yield* migrateStore.pipe(
      Effect.provideService(SqlClient, pool),
      Effect.mapError(failed("migrate")),
    );

    // Keepalive settings the server applies to the writer's connection, so
    // that a vanished writer machine loses its claim within `dead` seconds.
    const idle = Math.max(1, Math.floor(dead / 3));
    const interval = Math.max(1, Math.floor(dead / 6));
    const writerConnection: Effect.Effect<SqlClient, SqlError, Scope.Scope> =
      PgClient.makeClient({
        url,
        applicationName: "palimpsest writer",
        startupParameters: {
          tcp_keepalives_idle: String(idle),
          tcp_keepalives_interval: String(interval),
          tcp_keepalives_count: "3",
          tcp_user_timeout: String(dead * 1000),
        },
      }).pipe(Effect.provideService(Reactivity.Reactivity, reactivity));

    // The connection that settles an unanswered COMMIT: it waits, up to the
    // time the server takes to drop a vanished writer, for the transaction
    // to end, then reads what it left.
    const settleWait = (dead + 5) * 1000;
    const checkConnection: Effect.Effect<SqlClient, SqlError, Scope.Scope> =
      PgClient.makeClient({
        url,
        applicationName: "palimpsest check",
        startupParameters: {
          lock_timeout: String(settleWait),
          statement_timeout: String(settleWait + 1000),
        },
      }).pipe(Effect.provideService(Reactivity.Reactivity, reactivity));

    /**
     * Whether the batch whose COMMIT went unanswered is stored: on a fresh
     * connection, waits for the transaction that sent it to end (it holds
     * the head row, or for a create the write lock), then compares the
     * stored head and lines with the batch's. The writer's connection must
     * be closed first, so that the server ends that transaction.
     */
    const settle = (
      id: string,
      batch: {
        readonly header: string | undefined;
        readonly from: number;
        readonly to: number;
        readonly lines: ReadonlyArray<string>;
      },
    ): Effect.Effect<boolean, StorageError> =>
      Effect.scoped(Effect.gen(function* () {
        const client = yield* checkConnection;
        yield* client.unsafe("BEGIN");
        yield* client.unsafe(
          `SELECT count(*) AS n FROM (SELECT pg_advisory_xact_lock(${WRITE_KEY})) AS l`,
          [id],
        );
        const head = yield* client.unsafe<
          { header: string; next_seq: bigint | number }
        >(
          `SELECT header, next_seq FROM ${SESSIONS_TABLE} WHERE id = $1 FOR SHARE`,
          [id],
        );
        const row = head[0];
        if (row === undefined || Number(row.next_seq) < batch.to) return false;
        if (batch.header !== undefined && row.header !== batch.header) {
          return false;
        }
        const stored = yield* client.unsafe<{ line: string }>(
          `SELECT line FROM ${EVENTS_TABLE} WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
          [id, batch.from, batch.to],
        );
        yield* Effect.ignore(client.unsafe("ROLLBACK"));
        return stored.length === batch.lines.length &&
          stored.every((r, i) => r.line === batch.lines[i]);
      })).pipe(
        Effect.timeout(settleWait + 5000),
        Effect.mapError((error) =>
          error._tag === "SqlError"
            ? failed("check the outcome of a write in", id)(error)
            : new StorageError({
              operation: `check the outcome of a write in ${address}`,
              id,
              code: "timeout",
              cause: error,
            })
        ),
      );

    const handles = makeHandleRegistry<HandleState>();

    const makeHandle = handles.make;

    // The claim is given back on the connection before it closes, so that
    // it is free when `close` returns (the server would otherwise drop it a
    // moment later, when it reads the closed socket). A broken connection
    // has lost the claim already.
    const release = (state: HandleState): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (state.closed) return Effect.void;
        state.closed = true;
        const scope = state.scope;
        if (scope === undefined) return Effect.void;
        const unlock = state.client === undefined ? Effect.void : Effect.ignore(
          state.client.unsafe("SELECT pg_advisory_unlock_all()"),
        );
        return Effect.andThen(
          Effect.timeoutOption(unlock, "2 seconds"),
          Scope.close(scope, Exit.void),
        );
      });

    /** A writer's connection with the session's claim, or SessionLocked. */
    const claim = (
      id: string,
      scope: Scope.Scope,
    ): Effect.Effect<SqlClient, SessionLocked | StorageError> =>
      Effect.gen(function* () {
        const client = yield* Scope.provide(writerConnection, scope).pipe(
          Effect.mapError(failed("connect a writer to")),
        );
        const rows = yield* client.unsafe<{ ok: boolean }>(
          `SELECT pg_try_advisory_lock(${CLAIM_KEY}) AS ok`,
          [id],
        ).pipe(Effect.mapError(failed("claim a session in")));
        if (rows[0]?.ok !== true) {
          return yield* new SessionLocked({ id, pid: undefined });
        }
        return client;
      });

    /**
     * Runs `f` with a fresh scope, closed unless `f` succeeds; a child of the
     * store's scope, so closing the store closes every writer.
     */
    const withHandleScope = <A, E>(
      f: (scope: Scope.Closeable) => Effect.Effect<A, E>,
    ): Effect.Effect<A, E> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(
          Scope.fork(storeScope),
          (scope) =>
            restore(f(scope)).pipe(
              Effect.onExit((exit) =>
                Exit.isSuccess(exit) ? Effect.void : Scope.close(scope, exit)
              ),
            ),
        )
      );

    /** Event rows of `session` from seq `from` on, and their bytes. */
    const rowsOf = (session: Session, from: number) => {
      const encodeOptions = session.vocabulary === undefined
        ? undefined
        : { vocabulary: session.vocabulary };
      const rows: Array<{ session_id: string; seq: number; line: string }> = [];
      let bytes = 0;
      const id = session.header.id;
      for (const event of Session.events(session)) {
        if (event.seq < from) continue;
        const line = encodeEventLine(event, encodeOptions);
        bytes += encoder.encode(line).length;
        rows.push({ session_id: id, seq: event.seq, line: line.slice(0, -1) });
      }
      return { rows, bytes };
    };

    const insertRows = (
      client: SqlClient,
      rows: ReadonlyArray<{ session_id: string; seq: number; line: string }>,
    ): Effect.Effect<void, SqlError> =>
      Effect.gen(function* () {
        for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
          const chunk = rows.slice(i, i + INSERT_CHUNK);
          if (!Arr.isArrayNonEmpty(chunk)) continue;
          yield* client`INSERT INTO ${client(EVENTS_TABLE)} ${
            client.insert(chunk)
          }`;
        }
      });

    /**
     * Registers the handle's release with the caller's scope; an interrupted
     * or failed acquisition has already closed its own scope.
     */
    const scoped = <E>(
      acquire: Effect.Effect<SessionHandle, E>,
    ): Effect.Effect<SessionHandle, E, Scope.Scope> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.tap(
          restore(acquire),
          (handle) => Effect.addFinalizer(() => close(handle)),
        )
      );

    const create: StoreCore["create"] = (init, createOptions) =>
      Effect.suspend((): ReturnType<StoreCore["create"]> => {
        const { header, session } = createdFrom(init, createOptions);
        const checked = checkSessionId(header.id);
        if (Result.isFailure(checked)) return Effect.fail(checked.failure);
        const text = encodeHeaderLine(header).slice(0, -1);
        const { rows, bytes } = rowsOf(session, 0);
        const total = encoder.encode(text).length + 1 + bytes;
        const next = session.surface.nextSeq;
        return scoped(withHandleScope((scope) =>
          Effect.gen(function* () {
            const client = yield* claim(header.id, scope);
            const state: HandleState = {
              session,
              closed: false,
              client,
              scope,
              semaphore: Semaphore.makeUnsafe(1),
            };
            const handle = makeHandle(
              header.id,
              "write",
              wholeReport(rows.length),
              state,
            );
            // The head row and the events of a whole session in one
            // transaction: a created session is whole or absent.
            const ended = yield* transact(
              client,
              Effect.gen(function* () {
                yield* client.unsafe(
                  `SELECT count(*) AS n FROM (SELECT pg_advisory_xact_lock(${WRITE_KEY})) AS l`,
                  [header.id],
                );
                const made = yield* client.unsafe<{ id: string }>(
                  `INSERT INTO ${SESSIONS_TABLE} (id, version, header, next_seq, bytes, created_at)
                   VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING id`,
                  [
                    header.id,
                    FORMAT_VERSION,
                    text,
                    next,
                    total,
                    header.createdAt,
                  ],
                );
                if (made.length === 0) {
                  return yield* new SessionAlreadyExists({ id: header.id });
                }
                yield* insertRows(client, rows);
              }),
            );
            switch (ended._tag) {
              case "Committed":
                return handle;
              case "NotCommitted": {
                const error = ended.error;
                return yield* error._tag === "SqlError"
                  ? failed("create a session in", header.id)(error)
                  : error;
              }
              case "CommitUnsettled": {
                // The claim went with the connection, whatever the outcome.
                yield* release(state);
                const lost = new WriterClaimLost({
                  id: header.id,
                  cause: ended.error,
                });
                state.lostClaim = lost;
                const stored = yield* Effect.result(settle(header.id, {
                  header: text,
                  from: 0,
                  to: next,
                  lines: rows.map((row) => row.line),
                }));
                if (Result.isFailure(stored)) {
                  return yield* new AppendOutcomeUnknown({
                    id: header.id,
                    fromSeq: 0,
                    events: rows.length,
                    batch: Session.events(session, SessionSeq.make(0)),
                    header,
                    cause: ended.error,
                    undo: stored.failure,
                  });
                }
                // Stored: the session exists, but the handle cannot write.
                if (stored.success) return handle;
                return yield* new StorageError({
                  operation:
                    `create a session (the connection broke) in ${address}`,
                  id: header.id,
                  code: "connection",
                  cause: ended.error,
                });
              }
            }
          })
        ));
      });

    const read = <E>(
      client: SqlClient,
      id: string,
      openOptions: OpenOptions<E>,
      strict: boolean,
    ) =>
      Effect.gen(function* () {
        const head = yield* readHead(client, id);
        if (head === undefined) return yield* new SessionNotFound({ id });
        const log = yield* readSessionStream(
          logBytes(client, id, head),
          readOptionsOf(openOptions, strict),
        );
        return log;
      });

    const open: StoreCore["open"] = openWith(
      checkSessionId,
      (id, _, openOptions) =>
        Effect.map(
          read(pool, id, openOptions, false),
          (log) =>
            makeHandle(id, "read", reportOf(log), {
              session: log.session,
              closed: false,
              client: undefined,
              scope: undefined,
              semaphore: Semaphore.makeUnsafe(1),
            }),
        ),
      (id, _, openOptions) =>
        scoped(withHandleScope((scope) =>
          Effect.gen(function* () {
            const client = yield* claim(id, scope);
            const log = yield* writableLog(
              yield* read(client, id, openOptions, true),
            );
            return makeHandle(id, "write", wholeReport(log.events.length), {
              session: log.session,
              closed: false,
              client,
              scope,
              semaphore: Semaphore.makeUnsafe(1),
            });
          })
        )),
    );

    /** Writes the events of `next` past the handle's session: one transaction. */
    const commit: StoreCore["commit"] = handles.commit((handle, state, next) =>
      writeNewEvents(
        handle,
        state,
        next,
        state.client,
        (client, from, to): Effect.Effect<void, WriteError> => {
          const { rows, bytes } = rowsOf(next, from);
          const transaction = Effect.gen(function* () {
            const head = yield* client.unsafe<{ next_seq: bigint | number }>(
              `SELECT next_seq FROM ${SESSIONS_TABLE} WHERE id = $1 FOR UPDATE`,
              [handle.id],
            );
            const actual = head[0] === undefined
              ? undefined
              : Number(head[0].next_seq);
            if (actual !== from) {
              return yield* new StorageError({
                operation:
                  `append at seq ${from} (the head says ${actual}) in ${address}`,
                id: handle.id,
                code: "conflict",
                cause: undefined,
              });
            }
            yield* insertRows(client, rows);
            yield* client.unsafe(
              `UPDATE ${SESSIONS_TABLE} SET next_seq = $2, bytes = bytes + $3, updated_at = now() WHERE id = $1`,
              [handle.id, to, bytes],
            );
            yield* client.unsafe(`SELECT pg_notify($1, $2)`, [
              EVENTS_CHANNEL,
              handle.id,
            ]);
          });
          return Effect.gen(function* () {
            const ended = yield* transact(client, transaction);
            switch (ended._tag) {
              case "Committed":
                return;
              case "NotCommitted": {
                // Nothing is stored. A broken connection took the claim
                // with it: the handle refuses further writes.
                const error = ended.error;
                if (error._tag !== "SqlError") return yield* error;
                if (brokeConnection(error)) {
                  const lost = new WriterClaimLost({
                    id: handle.id,
                    cause: failed("append in", handle.id)(error),
                  });
                  state.lostClaim = lost;
                  return yield* lost;
                }
                return yield* failed(
                  sqlState(error) === "23505"
                    ? "append (a seq is already taken) in"
                    : "append in",
                  handle.id,
                )(error);
              }
              case "CommitUnsettled": {
                yield* release(state);
                const lost = new WriterClaimLost({
                  id: handle.id,
                  cause: ended.error,
                });
                state.lostClaim = lost;
                const stored = yield* Effect.result(settle(handle.id, {
                  header: undefined,
                  from,
                  to,
                  lines: rows.map((row) => row.line),
                }));
                if (Result.isFailure(stored)) {
                  return yield* new AppendOutcomeUnknown({
                    id: handle.id,
                    fromSeq: from,
                    events: to - from,
                    batch: Session.events(next, from),
                    header: undefined,
                    cause: ended.error,
                    undo: stored.failure,
                  });
                }
                // Stored: the append succeeded; later writes are refused.
                if (stored.success) return;
                return yield* lost;
              }
            }
          }).pipe(
            // A writer whose append failed may have lost its claim or its
            // connection: it stops, and the caller opens the session again.
            Effect.onExit((exit) =>
              Exit.isSuccess(exit) ? Effect.void : release(state)
            ),
          );
        },
      )
    );

    const list: StoreCore["list"] = () =>
      Effect.map(
        pool.unsafe<{ id: string }>(`SELECT id FROM ${SESSIONS_TABLE}`),
        (rows) => rows.map((row) => row.id).sort(),
      ).pipe(Effect.mapError(failed("list the sessions of")));

    const stat: StoreCore["stat"] = (id) =>
      Effect.suspend((): ReturnType<StoreCore["stat"]> => {
        const checked = checkSessionId(id);
        if (Result.isFailure(checked)) return Effect.fail(checked.failure);
        return Effect.flatMap(
          pool.unsafe<
            { bytes: bigint | number; modified: number; locked: boolean }
          >(
            `SELECT s.bytes, (extract(epoch FROM s.updated_at) * 1000)::float8 AS modified,
               EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted
                 AND l.objsubid = 1
                 AND l.classid::bigint = ((${CLAIM_KEY}) >> 32) & 4294967295
                 AND l.objid::bigint = (${CLAIM_KEY}) & 4294967295) AS locked
             FROM ${SESSIONS_TABLE} s WHERE s.id = $1`,
            [id],
          ).pipe(Effect.mapError(failed("stat a session in"))),
          (rows) => {
            const row = rows[0];
            if (row === undefined) {
              return Effect.fail(new SessionNotFound({ id }));
            }
            return Effect.succeed({
              id,
              bytes: Number(row.bytes),
              modifiedAt: Math.round(Number(row.modified)),
              locked: row.locked,
            });
          },
        );
      });

    const close: StoreCore["close"] = handles.close(release);

    // One LISTEN connection for every follower of this store, opened with
    // the first follower and closed with the last.
    const notifications = yield* RcRef.make({
      acquire: Effect.gen(function* () {
        const hub = yield* PubSub.unbounded<string>();
        const queue = yield* pool.listen(EVENTS_CHANNEL);
        yield* Effect.forkScoped(
          Effect.forever(
            Effect.flatMap(
              Queue.take(queue),
              (note) => PubSub.publish(hub, note.payload),
            ),
          ),
        );
        return hub;
      }),
    });

    const follow = (
      id: string,
      followOptions?: FollowOptions,
    ): Stream.Stream<SessionEvent, FollowError> =>
      Stream.unwrap(Effect.gen(function* () {
        const checked = checkSessionId(id);
        if (Result.isFailure(checked)) return yield* checked.failure;
        // Subscribe before the first read, so no commit falls between.
        const hub = yield* Effect.option(RcRef.get(notifications));
        const subscription = Option.isSome(hub)
          ? Option.some(yield* PubSub.subscribe(hub.value))
          : Option.none();
        const vocabulary = followOptions?.vocabulary === undefined
          ? undefined
          : { vocabulary: followOptions.vocabulary };
        const runs = makeRunBudget();
        const wake: Effect.Effect<void> = Option.match(subscription, {
          onNone: () => Effect.sleep(pollInterval),
          onSome: (sub) =>
            Effect.raceFirst(
              Effect.asVoid(
                Effect.repeat(PubSub.take(sub), {
                  until: (payload) => payload === id,
                }),
              ),
              Effect.sleep(pollInterval),
            ),
        });
        // A session not created yet is looked for again at each wake (a
        // notification of its first append, or the poll interval).
        while ((yield* readHead(pool, id)) === undefined) {
          if (followOptions?.waitForSession !== true) {
            return yield* new SessionNotFound({ id });
          }
          yield* wake;
        }
        return Stream.paginate(
          { from: Math.max(0, followOptions?.fromSeq ?? 0), wait: false },
          (
            cursor,
          ): Effect.Effect<
            readonly [
              ReadonlyArray<SessionEvent>,
              Option.Option<{ from: number; wait: boolean }>,
            ],
            CorruptLine | StorageError
          > =>
            Effect.gen(function* () {
              if (cursor.wait) yield* wake;
              // A server that restarts (or a connection that breaks) is
              // waited out: the read is tried again every poll interval
              // from the same cursor, so nothing is skipped or served twice.
              const rows = yield* readPage(pool, id, cursor.from, undefined)
                .pipe(Effect.retry({
                  schedule: Schedule.spaced(pollInterval),
                  while: (error) =>
                    isSqlError(error.cause) && brokeConnection(error.cause),
                }));
              const events: SessionEvent[] = [];
              for (const row of rows) {
                // The reader's line decoder and bounds; a row's index is
                // its seq.
                const decoded = decodeLine(row.line, row.seq, runs, vocabulary);
                if (Result.isFailure(decoded)) {
                  return yield* corrupt(row.seq + 2, row.line, decoded.failure);
                }
                events.push(decoded.success);
              }
              const last = rows[rows.length - 1];
              return [
                events,
                Option.some({
                  from: last === undefined ? cursor.from : last.seq + 1,
                  wait: rows.length < pageSize,
                }),
              ] as const;
            }),
        );
      })).pipe(Stream.scoped);

    const store: PostgresSessionStore = makeSessionStore({
      create,
      open,
      commit,
      follow,
      list,
      stat,
      close,
    });
    return store;
  });
}

/**
 * The PostgreSQL layer of {@link SessionStore} (and of
 * {@link PostgresStore}, which adds `follow`): a pool, the migrations run
 * on start, one dedicated connection per writer.
 *
 * @param options The connection URL and tuning.
 * @returns `Layer<SessionStore | PostgresStore, StorageError>`.
 *
 * @example Providing the store
 * ```ts
 * import { layerPostgresStore } from "@palimpsest/session/postgres";
 * import { SessionStore } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const url = Deno.env.get("PALIMPSEST_PG_URL"); // e.g. postgres://postgres@localhost/postgres
 * if (url !== undefined) {
 *   const id = `doc-${crypto.randomUUID()}`;
 *   const program = Effect.gen(function* () {
 *     const store = yield* SessionStore;
 *     yield* Effect.scoped(store.create({ id, createdAt: 0, isSeeded: false }));
 *     return yield* store.stat(id);
 *   });
 *   const stat = await Effect.runPromise(program.pipe(Effect.provide(layerPostgresStore({ url }))));
 *   assert.equal(stat.locked, false);
 * }
 * ```
 */
export function layerPostgresStore(
  options: PostgresStoreOptions,
): Layer.Layer<SessionStore | PostgresStore, StorageError> {
  return Layer.effectContext(
    Effect.map(
      makePostgresStore(options),
      (store) =>
        Context.make(SessionStore, store).pipe(
          Context.add(PostgresStore, store),
        ),
    ),
  );
}
