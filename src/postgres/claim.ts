/**
 * One writer per session, across machines: the writer's dedicated
 * connection (with TCP keepalive, so a vanished machine loses its claim
 * within about `deadWriterSeconds`), the session-level advisory lock it
 * holds for its whole life, its release, and the check on a fresh
 * connection that settles a `COMMIT` left without an answer. The claim
 * records its server process (`pg_backend_pid()`), which an
 * `AppendOutcomeUnknown` carries so that `resolveAppend` can wait for it
 * (`writer_end.ts`); a refused claim names the holder's.
 *
 * Each is a step of its own ({@link claimSession}, {@link releaseWriter},
 * {@link settleWrite}, {@link settleUnanswered}, and the connections
 * {@link writerConnection} and {@link checkConnection}) over one
 * {@link ClaimContext}; {@link makeClaims} assembles them into the
 * {@link Claims} a store calls, so another kind of claim replaces these
 * steps without touching the store's.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import type * as Redacted from "effect/Redacted";
import * as Scope from "effect/Scope";
import type * as Semaphore from "effect/Semaphore";
import * as Reactivity from "effect/reactivity/Reactivity";
import type { CheckpointMark } from "../store/checkpoints.ts";
import type { StoreCore } from "../store/core.ts";
import type { SqlClient } from "effect/sql/SqlClient";
import type { SqlError } from "effect/sql/SqlError";
import { PgClient } from "@effect/sql-pg";
import type { Session, SessionHeader } from "../session/session.ts";
import * as Result from "effect/Result";
import type { SessionEvent } from "../core/event.ts";
import {
  AppendOutcomeUnknown,
  SessionLocked,
  StorageError,
  WriterClaimLost,
} from "../store/errors.ts";
import { type Failed, MAX_MESSAGE_BYTES } from "./rows.ts";
import { EVENTS_TABLE, SESSIONS_TABLE } from "./schema.ts";
import { makeWriterEnded } from "./writer_end.ts";
import {
  CLAIM_KEY,
  CLAIM_LOCKS,
  WRITE_KEY,
  type WriterBackend,
} from "./locks.ts";

/** A writer's connection, with the claim, and its server process. */
export interface Claimed {
  readonly client: SqlClient;
  readonly backend: WriterBackend;
}

/** A handle's state: its session, and a writer's connection and scope. */
export interface HandleState {
  session: Session;
  closed: boolean;
  lostClaim?: WriterClaimLost | undefined;
  readonly client: SqlClient | undefined;
  /** The server process of the writer's connection. */
  readonly backend?: WriterBackend | undefined;
  readonly scope: Scope.Closeable | undefined;
  readonly semaphore: Semaphore.Semaphore;
  /** The newest checkpoint of the session, as the handle knows it. */
  readonly mark: CheckpointMark;
}

/** A write whose `COMMIT` went unanswered, as {@link Claims.settle} checks it. */
export interface UnsettledWrite {
  /** The header line a create wrote, or undefined for an append. */
  readonly header: string | undefined;
  /** The first seq written. */
  readonly from: number;
  /** The seq after the last one written. */
  readonly to: number;
  /** The lines written, without `\n`. */
  readonly lines: ReadonlyArray<string>;
}

/** The claims of one store. */
export interface Claims {
  /**
   * A writer's connection with the session's claim, and its server
   * process; or `SessionLocked`, naming the holder's.
   */
  readonly claim: (
    id: string,
    scope: Scope.Scope,
  ) => Effect.Effect<Claimed, SessionLocked | StorageError>;
  /** Gives the claim back and closes the writer's connection. */
  readonly release: (state: HandleState) => Effect.Effect<void>;
  /** Whether a write whose `COMMIT` went unanswered is stored. */
  readonly settle: (
    id: string,
    batch: UnsettledWrite,
  ) => Effect.Effect<boolean, StorageError>;
  /**
   * After a `COMMIT` left without an answer (`cause`): the claim went with
   * the connection, so the writer stops (`state.lostClaim`). Settles
   * whether `write` is stored; when that cannot be told, fails with
   * `AppendOutcomeUnknown` over `batch` (its events and header).
   */
  readonly settleUnanswered: (
    state: HandleState,
    id: string,
    cause: unknown,
    write: UnsettledWrite,
    batch: UnansweredBatch,
  ) => Effect.Effect<
    { readonly stored: boolean; readonly lost: WriterClaimLost },
    AppendOutcomeUnknown
  >;
  /**
   * For `resolveAppend`: succeeds once the server process of the failed
   * writer (`error.writer`) has ended, or no longer holds the claim nor a
   * transaction, waiting up to `options.writerWait` and then, when
   * `options.terminateWriter` allows, ending it; else fails with the
   * outcome still unknown.
   */
  readonly writerEnded: NonNullable<StoreCore["writerEnded"]>;
}

/** What an `AppendOutcomeUnknown` reports of a write left unsettled. */
export interface UnansweredBatch {
  /** How many events the write holds. */
  readonly events: number;
  /** The events of the write. */
  readonly batch: ReadonlyArray<SessionEvent>;
  /** The header a create wrote, or undefined for an append. */
  readonly header: SessionHeader | undefined;
}

/** What {@link makeClaims} needs of its store. */
export interface ClaimOptions {
  /** The connection URL. */
  readonly url: Redacted.Redacted<string>;
  /** The address without secrets, for messages. */
  readonly address: string;
  /** Seconds until the server drops a vanished writer's claim. */
  readonly dead: number;
  /** The store's reactivity service, for its connections. */
  readonly reactivity: Reactivity.Reactivity;
  /** How a failed SQL call is reported. */
  readonly failed: Failed;
}

/** What the claim steps of one store share: its connections and its reporting. */
export interface ClaimContext {
  /** The address without secrets, for messages. */
  readonly address: string;
  /** How a failed SQL call is reported. */
  readonly failed: Failed;
  /** Opens a writer's dedicated connection, closed with the scope. */
  readonly writerConnection: Effect.Effect<SqlClient, SqlError, Scope.Scope>;
  /** Opens the connection that settles an unanswered `COMMIT`. */
  readonly checkConnection: Effect.Effect<SqlClient, SqlError, Scope.Scope>;
  /** How long, in ms, that check waits for the writer's transaction. */
  readonly settleWait: number;
}

/**
 * A writer's dedicated connection: keepalive settings the server applies
 * to it, so that a vanished writer machine loses its claim within `dead`
 * seconds.
 *
 * @param options The URL, the dead-writer delay and the reactivity.
 * @returns Opens the connection, closed with the scope.
 */
export const writerConnection = (
  options: ClaimOptions,
): Effect.Effect<SqlClient, SqlError, Scope.Scope> => {
  const { url, dead, reactivity } = options;
  const idle = Math.max(1, Math.floor(dead / 3));
  const interval = Math.max(1, Math.floor(dead / 6));
  return PgClient.makeClient({
    url,
    applicationName: "palimpsest writer",
    maxMessageSize: MAX_MESSAGE_BYTES,
    startupParameters: {
      tcp_keepalives_idle: String(idle),
      tcp_keepalives_interval: String(interval),
      tcp_keepalives_count: "3",
      tcp_user_timeout: String(dead * 1000),
    },
  }).pipe(Effect.provideService(Reactivity.Reactivity, reactivity));
};

/**
 * How long, in ms, a check waits for a writer's transaction to end: the
 * time the server takes to drop a vanished writer, and a margin.
 */
const settleWaitOf = (dead: number): number => (dead + 5) * 1000;

/**
 * The connection that settles an unanswered `COMMIT`: it waits, up to the
 * time the server takes to drop a vanished writer, for the transaction to
 * end, then reads what it left.
 *
 * @param options The URL, the dead-writer delay and the reactivity.
 * @returns Opens the connection, closed with the scope.
 */
export const checkConnection = (
  options: ClaimOptions,
): Effect.Effect<SqlClient, SqlError, Scope.Scope> => {
  const settleWait = settleWaitOf(options.dead);
  return PgClient.makeClient({
    url: options.url,
    applicationName: "palimpsest check",
    maxMessageSize: MAX_MESSAGE_BYTES,
    startupParameters: {
      lock_timeout: String(settleWait),
      statement_timeout: String(settleWait + 1000),
    },
  }).pipe(Effect.provideService(Reactivity.Reactivity, options.reactivity));
};

/**
 * Whether the batch whose COMMIT went unanswered is stored: on a fresh
 * connection, waits for the transaction that sent it to end (it holds the
 * head row, or for a create the write lock), then compares the stored head
 * and lines with the batch's. The writer's connection must be closed
 * first, so that the server ends that transaction.
 *
 * @param context The store's claim context.
 * @param id The session.
 * @param batch The write left unanswered.
 * @returns Whether it is stored.
 */
export const settleWrite = (
  context: ClaimContext,
  id: string,
  batch: UnsettledWrite,
): Effect.Effect<boolean, StorageError> =>
  Effect.scoped(Effect.gen(function* () {
    const client = yield* context.checkConnection;
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
    Effect.timeout(context.settleWait + 5000),
    Effect.mapError((error) =>
      error._tag === "SqlError"
        ? context.failed("check the outcome of a write in", id)(error)
        : new StorageError({
          operation: `check the outcome of a write in ${context.address}`,
          id,
          code: "timeout",
          cause: error,
        })
    ),
  );

/**
 * Gives the claim back on the connection before it closes, so that it is
 * free when `close` returns (the server would otherwise drop it a moment
 * later, when it reads the closed socket), then closes the writer's
 * scope. A broken connection has lost the claim already. Idempotent.
 *
 * @param state The handle's state.
 * @returns Never fails.
 */
export const releaseWriter = (state: HandleState): Effect.Effect<void> =>
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

/**
 * Who holds the claim on `id`, read on the refused writer's `client`.
 *
 * @param client The refused writer's connection.
 * @param id The session.
 * @returns `SessionLocked`, naming the holder when the server says.
 */
export const holderOf = (
  client: SqlClient,
  id: string,
): Effect.Effect<SessionLocked> =>
  client.unsafe<
    {
      pid: number;
      application: string | null;
      host: string | null;
      port: number | null;
    }
  >(
    `SELECT l.pid, a.application_name AS application,
       host(a.client_addr) AS host, a.client_port AS port
     FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE ${CLAIM_LOCKS} LIMIT 1`,
    [id],
  ).pipe(
    Effect.map((rows): SessionLocked => {
      const row = rows[0];
      const client = row === undefined || row.port === null
        ? undefined
        : row.port < 0 || row.host === null
        ? "local"
        : row.host.includes(":")
        ? `[${row.host}]:${row.port}`
        : `${row.host}:${row.port}`;
      return new SessionLocked({
        id,
        pid: row?.pid,
        application: row?.application || undefined,
        client,
      });
    }),
    // The holder may be gone already, or the server may not say.
    Effect.orElseSucceed(() => new SessionLocked({ id, pid: undefined })),
  );

/**
 * A writer's connection, opened in `scope`, with the session's claim and
 * its server process; or `SessionLocked` naming the holder's.
 *
 * @param context The store's claim context.
 * @param id The session.
 * @param scope The writer's scope: the claim lives as long as it.
 * @returns The connection and its server process.
 */
export const claimSession = (
  context: ClaimContext,
  id: string,
  scope: Scope.Scope,
): Effect.Effect<Claimed, SessionLocked | StorageError> =>
  Effect.gen(function* () {
    const client = yield* Scope.provide(context.writerConnection, scope).pipe(
      Effect.mapError(context.failed("connect a writer to")),
    );
    const rows = yield* client.unsafe<
      { ok: boolean; pid: number; started: string | null }
    >(
      `SELECT pg_try_advisory_lock(${CLAIM_KEY}) AS ok, pg_backend_pid() AS pid,
         (SELECT extract(epoch FROM backend_start)::text FROM pg_stat_activity
          WHERE pid = pg_backend_pid()) AS started`,
      [id],
    ).pipe(Effect.mapError(context.failed("claim a session in")));
    const row = rows[0];
    if (row?.ok !== true) {
      const locked = yield* holderOf(client, id);
      return yield* locked;
    }
    return {
      client,
      backend: { pid: row.pid, startedAt: row.started ?? undefined },
    };
  });

/**
 * After a `COMMIT` left without an answer (`cause`): the claim went with
 * the connection, so the writer stops (`state.lostClaim`). Settles whether
 * `write` is stored; when that cannot be told, fails with
 * `AppendOutcomeUnknown` over `batch` (its events and header).
 *
 * @param context The store's claim context.
 * @param state The writer's state.
 * @param id The session.
 * @param cause Why the `COMMIT` is unsettled.
 * @param write The write, as stored rows.
 * @param batch The write, as events.
 * @returns Whether it is stored, and the claim lost.
 */
export const settleUnanswered = (
  context: ClaimContext,
  state: HandleState,
  id: string,
  cause: unknown,
  write: UnsettledWrite,
  batch: UnansweredBatch,
): Effect.Effect<
  { readonly stored: boolean; readonly lost: WriterClaimLost },
  AppendOutcomeUnknown
> =>
  Effect.gen(function* () {
    yield* releaseWriter(state);
    const lost = new WriterClaimLost({ id, cause });
    state.lostClaim = lost;
    const stored = yield* Effect.result(settleWrite(context, id, write));
    if (Result.isFailure(stored)) {
      return yield* new AppendOutcomeUnknown({
        id,
        fromSeq: write.from,
        ...batch,
        cause,
        undo: stored.failure,
        writer: state.backend,
      });
    }
    return { stored: stored.success, lost };
  });

/**
 * The claims of a store over `options.url`: the steps above over one
 * context.
 *
 * @param options The URL, the dead-writer delay and the reporting.
 * @returns The claim, its release and the check of an unanswered commit.
 */
export const makeClaims = (options: ClaimOptions): Claims => {
  const context: ClaimContext = {
    address: options.address,
    failed: options.failed,
    writerConnection: writerConnection(options),
    checkConnection: checkConnection(options),
    settleWait: settleWaitOf(options.dead),
  };
  return {
    claim: (id, scope) => claimSession(context, id, scope),
    release: releaseWriter,
    settle: (id, batch) => settleWrite(context, id, batch),
    settleUnanswered: (state, id, cause, write, batch) =>
      settleUnanswered(context, state, id, cause, write, batch),
    writerEnded: makeWriterEnded(
      context.checkConnection,
      context.settleWait,
      context.failed,
      context.address,
    ),
  };
};
