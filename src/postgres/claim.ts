/**
 * One writer per session, across machines, through transaction poolers
 * and on engines without session advisory locks: the writer's lease in the
 * session's head row (`lease.ts`), claimed by one `UPDATE` that only
 * matches a free or run-out lease, renewed by every append and by a
 * heartbeat while the writer is idle, given back on close. A writer holds
 * no connection of its own: its writes take one of the store's pool for
 * one statement (or, for a large batch, one transaction), so a
 * transaction pooler can carry them, and its fencing token, checked under
 * the row lock by every write, keeps a writer whose lease was taken over
 * (a long pause, a partition) from ever committing again.
 *
 * A write left without an answer is settled on a pool connection that
 * waits for the head row (so for any write in flight), replaces the
 * writer's token (so a late copy of the write can never commit), and
 * compares what is stored; the writer then stops and gives its lease back,
 * so that the next writer starts from what is stored.
 *
 * Each is a step of its own ({@link claimSession}, {@link releaseWriter},
 * {@link renewLease}, {@link settleWrite}, {@link settleUnanswered}) over
 * one {@link ClaimContext}; {@link makeClaims} assembles them into the
 * {@link Claims} a store calls.
 *
 * @module
 * @internal
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Result from "effect/Result";
import * as Scope from "effect/Scope";
import type * as Semaphore from "effect/Semaphore";
import type { SqlClient } from "effect/sql/SqlClient";
import type { SqlError } from "effect/sql/SqlError";
import type { CheckpointMark } from "../store/checkpoints.ts";
import type { StoreCore } from "../store/core.ts";
import type { Session, SessionHeader } from "../session/session.ts";
import type { SessionEvent } from "../core/event.ts";
import {
  AppendOutcomeUnknown,
  SessionLocked,
  SessionNotFound,
  StorageError,
  WriterClaimLost,
} from "../store/errors.ts";
import type { Failed } from "./rows.ts";
import { EVENTS_TABLE } from "./schema.ts";
import { makeWriterEnded } from "./writer_end.ts";
import {
  claimStatement,
  HOLDER_STATEMENT,
  parseWriter,
  PROBE_CREATE_STATEMENT,
  RELEASE_STATEMENT,
  RENEW_STATEMENT,
  ROTATE_STATEMENT,
  SETTLE_HEAD_STATEMENT,
} from "./lease.ts";

/** A claimed session: the writer's token and the head it found. */
export interface Claimed {
  /** The writer's fencing token. */
  readonly token: string;
}

/** A handle's state: its session, and a writer's pool, token and scope. */
export interface HandleState {
  session: Session;
  closed: boolean;
  lostClaim?: WriterClaimLost | undefined;
  /** The pool a writer writes through; undefined for a reader. */
  readonly client: SqlClient | undefined;
  /**
   * The writer's fencing token; replaced after a write left without an
   * answer, so that a late copy of that write cannot commit.
   */
  token: string | undefined;
  /** When this process last renewed the lease (its clock, ms). */
  renewedAt: number;
  readonly scope: Scope.Closeable | undefined;
  readonly semaphore: Semaphore.Semaphore;
  /** The newest checkpoint of the session, as the handle knows it. */
  readonly mark: CheckpointMark;
}

/** A write left without an answer, as {@link settleWrite} checks it. */
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

/** What an `AppendOutcomeUnknown` reports of a write left unsettled. */
export interface UnansweredBatch {
  /** How many events the write holds. */
  readonly events: number;
  /** The events of the write. */
  readonly batch: ReadonlyArray<SessionEvent>;
  /** The header a create wrote, or undefined for an append. */
  readonly header: SessionHeader | undefined;
}

/** How a write left without an answer was settled. */
export interface Settled {
  /** Whether the write is stored. */
  readonly stored: boolean;
  /** The writer's token now; undefined when its lease was taken over. */
  readonly token: string | undefined;
}

/** The claims of one store. */
export interface Claims {
  /**
   * Claims session `id` for a new writer with `token` (a free or run-out
   * lease); `SessionLocked` naming the holder, or `SessionNotFound`.
   */
  readonly claim: (
    id: string,
    token: string,
  ) => Effect.Effect<Claimed, SessionLocked | SessionNotFound | StorageError>;
  /** Keeps the lease of a writer alive while its scope is open. */
  readonly keepAlive: (
    id: string,
    state: HandleState,
    scope: Scope.Scope,
  ) => Effect.Effect<void>;
  /**
   * Gives the lease of `token` (or of the writer's state, once there is
   * one) back when `scope` closes, unless the writer was released: so a
   * claim interrupted at any point leaves nothing held. Register it before
   * the statement that claims.
   */
  readonly guard: (
    id: string,
    token: string,
    state: () => HandleState | undefined,
    scope: Scope.Scope,
  ) => Effect.Effect<void>;
  /** Why session `id` cannot be claimed: who holds it, or that it is missing. */
  readonly refusal: (
    id: string,
  ) => Effect.Effect<SessionLocked | SessionNotFound, StorageError>;
  /** Gives the lease back and closes the writer's scope. Idempotent. */
  readonly release: (id: string, state: HandleState) => Effect.Effect<void>;
  /**
   * After a write left without an answer (`cause`): settles whether
   * `write` is stored and fences any late copy of it; the writer stops and
   * gives its lease back. When that cannot be told, fails with
   * `AppendOutcomeUnknown` over `batch`.
   */
  readonly settleUnanswered: (
    state: HandleState,
    id: string,
    cause: unknown,
    write: UnsettledWrite,
    batch: UnansweredBatch,
  ) => Effect.Effect<Settled, AppendOutcomeUnknown>;
  /**
   * For `resolveAppend`: succeeds once no write of the failed writer can
   * be in flight (the head row is free) and its lease is revoked.
   */
  readonly writerEnded: NonNullable<StoreCore["writerEnded"]>;
  /** The lease, in seconds. */
  readonly leaseSeconds: number;
}

/** What {@link makeClaims} needs of its store. */
export interface ClaimOptions {
  /** The writers' pool: claims, renewals, writes, releases. */
  readonly pool: SqlClient;
  /**
   * Opens a connection of its own for a check: the settling of a write
   * left without an answer, and `resolveAppend`'s wait (never one of the
   * writers', which may be what broke), closed with the scope.
   */
  readonly checks: Effect.Effect<SqlClient, SqlError, Scope.Scope>;
  /** The address without secrets, for messages. */
  readonly address: string;
  /** The lease, in seconds. */
  readonly leaseSeconds: number;
  /** This process's name as a writer (`lease.ts`'s `thisWriter`). */
  readonly writer: string;
  /** How a failed SQL call is reported. */
  readonly failed: Failed;
}

/** What the claim steps of one store share. */
export interface ClaimContext extends ClaimOptions {
  /** How long, in ms, a check waits for a write in flight. */
  readonly settleWait: number;
}

/**
 * How long, in ms, a check waits for a write in flight: a lease, and a
 * margin (a write cannot outlive its writer's lease by more than the
 * server takes to see a vanished client).
 */
const settleWaitOf = (leaseSeconds: number): number =>
  (leaseSeconds + 5) * 1000;

/** A new fencing token. */
export const newToken = (): string => crypto.randomUUID();

/** The claim of a free or run-out lease. */
const CLAIM_STATEMENT = claimStatement(false);

/**
 * `SessionLocked` for session `id`, naming the lease's holder; or
 * `SessionNotFound` when it has no head row.
 *
 * @param context The store's claim context.
 * @param id The session.
 * @returns The refusal.
 */
export const refusalOf = (
  context: ClaimContext,
  id: string,
): Effect.Effect<SessionLocked | SessionNotFound, StorageError> =>
  Effect.map(
    context.pool.unsafe<
      { writer: string | null; until: number | null; live: boolean }
    >(HOLDER_STATEMENT, [id]),
    (rows): SessionLocked | SessionNotFound => {
      const row = rows[0];
      if (row === undefined) return new SessionNotFound({ id });
      const holder = parseWriter(row.writer);
      return new SessionLocked({
        id,
        pid: holder.pid,
        application: holder.application,
        client: holder.host,
        leaseUntil: row.until === null ? undefined : Number(row.until),
      });
    },
  ).pipe(Effect.mapError(context.failed("read the writer of", id)));

/**
 * Claims session `id` for a new writer: one `UPDATE` that sets its token
 * and lease when the lease is free or has run out.
 *
 * @param context The store's claim context.
 * @param id The session.
 * @param token The new writer's token.
 * @returns The writer's token; or who holds the session.
 */
export const claimSession = (
  context: ClaimContext,
  id: string,
  token: string,
): Effect.Effect<Claimed, SessionLocked | SessionNotFound | StorageError> =>
  Effect.gen(function* () {
    const rows = yield* context.pool.unsafe<{ next_seq: bigint | number }>(
      CLAIM_STATEMENT,
      [id, token, context.writer, context.leaseSeconds],
    ).pipe(Effect.mapError(context.failed("claim a session in", id)));
    if (rows.length === 0) return yield* yield* refusalOf(context, id);
    return { token };
  });

/**
 * Renews the writer's lease when it was not renewed for a third of it;
 * a lease found taken over stops the writer (`state.lostClaim`). A failed
 * renewal is tried again at the next beat.
 *
 * @param context The store's claim context.
 * @param id The session.
 * @param state The writer's state.
 * @returns Whether the writer still holds its lease.
 */
export const renewLease = (
  context: ClaimContext,
  id: string,
  state: HandleState,
): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    const token = state.token;
    if (state.closed || token === undefined || state.lostClaim !== undefined) {
      return false;
    }
    const now = yield* Clock.currentTimeMillis;
    if (now - state.renewedAt < (context.leaseSeconds * 1000) / 3) return true;
    const renewed = yield* Effect.result(
      context.pool.unsafe<{ ok: number }>(RENEW_STATEMENT, [
        id,
        token,
        context.leaseSeconds,
      ]),
    );
    if (Result.isFailure(renewed)) return true;
    if (renewed.success.length === 0 && state.token === token) {
      state.lostClaim = new WriterClaimLost({
        id,
        cause: "its lease was taken over by another writer",
      });
      return false;
    }
    state.renewedAt = now;
    return true;
  });

/**
 * The writer's heartbeat: renews its lease every sixth of it while the
 * scope is open (a renewal skips when an append renewed it lately).
 *
 * @param context The store's claim context.
 * @param id The session.
 * @param state The writer's state.
 * @param scope The writer's scope: the beat stops with it.
 * @returns Starts the beat.
 */
export const keepLeaseAlive = (
  context: ClaimContext,
  id: string,
  state: HandleState,
  scope: Scope.Scope,
): Effect.Effect<void> => {
  const beat = Math.max(50, Math.floor((context.leaseSeconds * 1000) / 6));
  const loop: Effect.Effect<void> = Effect.flatMap(
    Effect.andThen(Effect.sleep(beat), renewLease(context, id, state)),
    (holds) => holds ? loop : Effect.void,
  );
  return Effect.asVoid(Effect.forkIn(loop, scope));
};

/**
 * Gives the lease back (so that it is free when `close` returns), then
 * closes the writer's scope. A lease taken over is left to its holder.
 * Idempotent.
 *
 * @param context The store's claim context.
 * @param id The session.
 * @param state The handle's state.
 * @returns Never fails.
 */
export const releaseWriter = (
  context: ClaimContext,
  id: string,
  state: HandleState,
): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (state.closed) return Effect.void;
    state.closed = true;
    const scope = state.scope;
    if (scope === undefined) return Effect.void;
    const token = state.token;
    const release = token === undefined ? Effect.void : Effect.ignore(
      context.pool.unsafe(RELEASE_STATEMENT, [id, token]),
    );
    return Effect.andThen(
      Effect.timeoutOption(release, "2 seconds"),
      Scope.close(scope, Exit.void),
    );
  });

/**
 * Whether a write left without an answer is stored. On one pool
 * connection, in a transaction bounded by `lock_timeout`: waits for any
 * write of the session in flight (it holds the head row; for a create,
 * its key), replaces the writer's token by a new one (so that a late copy
 * of the write can never commit), and compares the stored head and lines
 * with the write's.
 *
 * @param context The store's claim context.
 * @param id The session.
 * @param write The write left unanswered.
 * @param token The writer's token.
 * @returns Whether it is stored, and the writer's new token (undefined
 * when its lease was taken over).
 */
export const settleWrite = (
  context: ClaimContext,
  id: string,
  write: UnsettledWrite,
  token: string | undefined,
): Effect.Effect<Settled, StorageError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* context.checks;
      yield* sql.unsafe("BEGIN");
      yield* sql.unsafe(`SET LOCAL lock_timeout = ${context.settleWait}`);
      yield* sql.unsafe(
        `SET LOCAL statement_timeout = ${context.settleWait + 1000}`,
      );
      if (write.header !== undefined) {
        const probed = yield* sql.unsafe<{ id: string }>(
          PROBE_CREATE_STATEMENT,
          [id],
        );
        if (probed.length > 0) {
          yield* sql.unsafe("ROLLBACK");
          return { stored: false, token };
        }
      }
      const head = yield* sql.unsafe<
        {
          header: string;
          next_seq: bigint | number;
          writer_token: string | null;
        }
      >(SETTLE_HEAD_STATEMENT, [id]);
      const row = head[0];
      let next: string | undefined;
      if (
        row !== undefined && token !== undefined && row.writer_token === token
      ) {
        next = newToken();
        yield* sql.unsafe(ROTATE_STATEMENT, [id, token, next]);
      }
      const stored = row !== undefined && Number(row.next_seq) >= write.to &&
        (write.header === undefined || row.header === write.header) &&
        (yield* storedLines(sql, id, write));
      yield* sql.unsafe("COMMIT");
      return { stored, token: next };
    }),
  ).pipe(
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

/** Whether the lines of `write` are the stored ones. */
const storedLines = (
  sql: SqlClient,
  id: string,
  write: UnsettledWrite,
): Effect.Effect<boolean, SqlError> =>
  Effect.map(
    sql.unsafe<{ line: string }>(
      `SELECT line FROM ${EVENTS_TABLE} WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
      [id, write.from, write.to],
    ),
    (stored) =>
      stored.length === write.lines.length &&
      stored.every((r, i) => r.line === write.lines[i]),
  );

/**
 * After a write left without an answer (`cause`): settles whether `write`
 * is stored and fences any late copy of it; the writer stops
 * (`state.lostClaim`: its later writes fail with `WriterClaimLost`) and
 * gives its lease back. When the outcome cannot be told, the error is
 * `AppendOutcomeUnknown` over `batch`, carrying the writer's token for
 * `resolveAppend` to revoke.
 *
 * @param context The store's claim context.
 * @param state The writer's state.
 * @param id The session.
 * @param cause Why the write is unsettled.
 * @param write The write, as stored rows.
 * @param batch The write, as events.
 * @returns Whether it is stored, and the writer's token now.
 */
export const settleUnanswered = (
  context: ClaimContext,
  state: HandleState,
  id: string,
  cause: unknown,
  write: UnsettledWrite,
  batch: UnansweredBatch,
): Effect.Effect<Settled, AppendOutcomeUnknown> =>
  Effect.gen(function* () {
    const token = state.token;
    const settled = yield* Effect.result(
      settleWrite(context, id, write, token),
    );
    if (Result.isFailure(settled)) {
      state.lostClaim = new WriterClaimLost({ id, cause });
      return yield* new AppendOutcomeUnknown({
        id,
        fromSeq: write.from,
        ...batch,
        cause,
        undo: settled.failure,
        writerToken: token,
      });
    }
    // The writer stops, as after any write it could not see through, and
    // gives its lease back (under its new token) for the next writer.
    state.lostClaim = new WriterClaimLost({ id, cause });
    state.token = settled.success.token;
    yield* releaseWriter(context, id, state);
    return settled.success;
  });

/**
 * The claims of a store: the steps above over one context.
 *
 * @param options The pool, the lease and the reporting.
 * @returns The claim, its heartbeat, its release and the checks.
 */
export const makeClaims = (options: ClaimOptions): Claims => {
  const context: ClaimContext = {
    ...options,
    settleWait: settleWaitOf(options.leaseSeconds),
  };
  return {
    claim: (id, token) => claimSession(context, id, token),
    refusal: (id) => refusalOf(context, id),
    guard: (id, token, state, scope) =>
      Scope.addFinalizer(
        scope,
        Effect.suspend(() => {
          const current = state();
          if (current?.closed === true) return Effect.void;
          return Effect.ignore(Effect.timeoutOption(
            context.pool.unsafe(RELEASE_STATEMENT, [
              id,
              current?.token ?? token,
            ]),
            "2 seconds",
          ));
        }),
      ),
    keepAlive: (id, state, scope) => keepLeaseAlive(context, id, state, scope),
    release: (id, state) => releaseWriter(context, id, state),
    settleUnanswered: (state, id, cause, write, batch) =>
      settleUnanswered(context, state, id, cause, write, batch),
    writerEnded: makeWriterEnded(context),
    leaseSeconds: options.leaseSeconds,
  };
};
