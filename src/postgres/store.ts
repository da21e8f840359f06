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
 *   `AppendOutcomeUnknown`, which `resolveAppend` answers only once the
 *   writer's server process has ended. `create` works the same way.
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
 *   reads `next_seq` and then the rows below it, streamed by one statement
 *   (the driver pauses the socket when the reader falls behind, so a
 *   million-event session is never one array of rows), each row's line
 *   decoded once and each chunk folded as one batch, with the errors,
 *   `recover` and reports of the streaming reader of a file
 *   ({@link readSessionStream}), which still reads a session of an older
 *   version (`read.ts`).
 * - **Follow**: `LISTEN` on one channel (the append's `NOTIFY` is
 *   delivered only when its transaction commits), shared by every follower
 *   of the store, with polling as the fallback when no notification comes
 *   (or `LISTEN` is not available, as behind a transaction pooler). A
 *   follow with `waitForSession` looks for a missing session's head row at
 *   each wake. A read whose connection broke (a server restart) is tried
 *   again every poll interval from the same cursor.
 * - **Checkpoints** (`checkpoint.ts`): one row per session in
 *   `palimpsest_checkpoints`, replaced by the writer in one statement
 *   every `everyEvents` events, on close and on `store.checkpoint`; an
 *   open reads it with the event row before its seq, checks and restores
 *   it, and streams only the rows after it, or reports it and replays the
 *   whole log when anything does not match.
 *
 * This module assembles the store; the parts sit beside it as the JSONL
 * store's do: `rows.ts` (the rows, pages and the write transaction),
 * `claim.ts` (the writer's connection and its claim, the check of an
 * unanswered `COMMIT`), `locks.ts` (the lock keys), `writer_end.ts` (the
 * wait of `resolveAppend` for a failed writer's server process), `follow.ts` (the shared `LISTEN` and the follow
 * loop), `read.ts` (the rows of an open to a session), `checkpoint.ts`
 * (the checkpoint row, written and opened from), `load.ts` (one session in
 * or out without a store), `schema.ts` (the tables and their migrations).
 *
 * @module
 */
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Redacted from "effect/Redacted";
import * as Result from "effect/Result";
import * as Scope from "effect/Scope";
import * as Semaphore from "effect/Semaphore";
import * as Reactivity from "effect/reactivity/Reactivity";
import { SqlClient } from "effect/sql/SqlClient";
import { PgClient } from "@effect/sql-pg";
import { makeHandleRegistry, writeNewEvents } from "../store/handles.ts";
import {
  createdFrom,
  openWith,
  wholeReport,
  writableLog,
} from "../store/open.ts";
import { FORMAT_VERSION } from "../event.ts";
import { knownEvents, type Session } from "../session.ts";
import { encodeHeaderLine } from "../log/codec.ts";
import { checkSessionId } from "../store/ids.ts";
import {
  SessionAlreadyExists,
  SessionNotFound,
  StorageError,
  WriterClaimLost,
} from "../store/errors.ts";
import { SessionSeq } from "../seq.ts";
import type { OpenOptions, SessionHandle, WriteError } from "../store/store.ts";
import { makeSessionStore, type StoreCore } from "../store/core.ts";
import type { PostgresSessionStore, PostgresStoreOptions } from "./service.ts";
import { type HandleState, makeClaims } from "./claim.ts";
import { CLAIM_LOCKS, WRITE_KEY } from "./locks.ts";
import { makeFollow } from "./follow.ts";
import { readEventRange } from "./read.ts";
import {
  appendRows,
  brokeConnection,
  byteLength,
  DEFAULT_PAGE,
  displayAddress,
  failedAt,
  insertRows,
  MAX_MESSAGE_BYTES,
  readEventPage,
  readHeadRow,
  rowsOf,
  sqlState,
  transact,
} from "./rows.ts";
import { loadStored, putCheckpoint } from "./checkpoint.ts";
import { resolvePolicy } from "../store/checkpoints.ts";
import {
  makeCheckpointer,
  writeCheckpoint,
} from "../store/checkpoint_write.ts";
import { migrateStore, SESSIONS_TABLE } from "./schema.ts";

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
    const policy = resolvePolicy(options.checkpoints);
    const checkpointer = makeCheckpointer(policy);
    const failed = failedAt(address);
    const readHead = (client: SqlClient, id: string) =>
      readHeadRow(client, id, failed);
    const storeScope = yield* Effect.scope;
    const reactivity = yield* Reactivity.make;
    const pool = yield* PgClient.make({
      url,
      maxConnections: options.maxConnections ?? 10,
      applicationName: "palimpsest",
      maxMessageSize: MAX_MESSAGE_BYTES,
    }).pipe(
      Effect.provideService(Reactivity.Reactivity, reactivity),
      Effect.mapError(failed("connect to")),
    );
    yield* migrateStore.pipe(
      Effect.provideService(SqlClient, pool),
      Effect.mapError(failed("migrate")),
    );

    const { claim, release, settleUnanswered, writerEnded } = makeClaims({
      url,
      address,
      dead,
      reactivity,
      failed,
    });

    const handles = makeHandleRegistry<HandleState>();

    const makeHandle = handles.make;

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
        const total = byteLength(text) + 1 + bytes;
        const next = session.surface.nextSeq;
        return scoped(withHandleScope((scope) =>
          Effect.gen(function* () {
            const { client, backend } = yield* claim(header.id, scope);
            const state: HandleState = {
              session,
              closed: false,
              client,
              backend,
              scope,
              semaphore: Semaphore.makeUnsafe(1),
              mark: { seq: 0, since: undefined },
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
                const { stored } = yield* settleUnanswered(
                  state,
                  header.id,
                  ended.error,
                  {
                    header: text,
                    from: 0,
                    to: next,
                    lines: rows.map((row) => row.line),
                  },
                  {
                    events: rows.length,
                    batch: knownEvents(session, SessionSeq.make(0)),
                    header,
                  },
                );
                // Stored: the session exists, but the handle cannot write.
                if (stored) return handle;
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
        return yield* loadStored(
          client,
          id,
          head,
          pageSize,
          failed,
          policy,
          openOptions,
          strict,
        );
      });

    const open: StoreCore["open"] = openWith(
      checkSessionId,
      (id, _, openOptions) =>
        Effect.map(
          read(pool, id, openOptions, false),
          (loaded) =>
            makeHandle(id, "read", loaded.report, {
              session: loaded.log.session,
              closed: false,
              client: undefined,
              scope: undefined,
              semaphore: Semaphore.makeUnsafe(1),
              mark: loaded.mark,
            }),
        ),
      (id, _, openOptions) =>
        scoped(withHandleScope((scope) =>
          Effect.gen(function* () {
            const { client, backend } = yield* claim(id, scope);
            const loaded = yield* read(client, id, openOptions, true);
            const log = yield* writableLog(loaded.log);
            return makeHandle(id, "write", loaded.report, {
              session: log.session,
              closed: false,
              client,
              backend,
              scope,
              semaphore: Semaphore.makeUnsafe(1),
              mark: loaded.mark,
            });
          })
        )),
    );

    /** Writes the events of `next` past the handle's session: one transaction. */
    const commit: StoreCore["commit"] = handles.commit((handle, state, next) =>
      Effect.tap(
        writeNewEvents(
          handle,
          state,
          next,
          state.client,
          (client, from, to): Effect.Effect<void, WriteError> => {
            const { rows, bytes } = rowsOf(next, from);
            const transaction = appendRows(client, {
              id: handle.id,
              from,
              to,
              rows,
              bytes,
              address,
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
                  const { stored, lost } = yield* settleUnanswered(
                    state,
                    handle.id,
                    ended.error,
                    {
                      header: undefined,
                      from,
                      to,
                      lines: rows.map((row) => row.line),
                    },
                    {
                      events: to - from,
                      batch: knownEvents(next, from),
                      header: undefined,
                    },
                  );
                  // Stored: the append succeeded; later writes are refused.
                  if (stored) return;
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
        ),
        () =>
          // Derived data, once the batch is durable and the handle's session
          // is `next` (an interruption here cannot make a stored batch look
          // unstored): a failed checkpoint write costs the next open a longer
          // replay only.
          state.client === undefined || state.lostClaim !== undefined
            ? Effect.void
            : checkpointer.afterBatch(next, undefined, {
              mark: state.mark,
              put: put(state.client, next),
              lineAt: lineAt(state.client, next),
            }),
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
               EXISTS (SELECT 1 FROM pg_locks l WHERE ${CLAIM_LOCKS}) AS locked
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

    /** Stores a checkpoint of `session` through the writer's connection. */
    const put = (client: SqlClient, session: Session) => (text: string) =>
      putCheckpoint(
        client,
        session.header.id,
        session.surface.nextSeq,
        text,
      ).pipe(
        Effect.asVoid,
        Effect.mapError(failed("write the checkpoint of", session.header.id)),
      );

    /** Reads the stored line of one event of `session` through `client`. */
    const lineAt = (client: SqlClient, session: Session) => (seq: number) =>
      Effect.map(
        readEventPage(client, session.header.id, seq, seq + 1, 1, failed),
        (rows) => rows[0]?.line,
      );

    /**
     * Writes the checkpoint a closing writer owes by the policy's
     * `onClose`, if any, as the checkpointer's `onClose` judges it (which
     * writes synchronously; a row is written over the network). Derived
     * data: a failure, or a connection that does not answer in 5 s, costs
     * the next open a longer replay only.
     */
    const checkpointOnClose = (state: HandleState): Effect.Effect<void> =>
      Effect.suspend(() => {
        const client = state.client;
        const since = state.session.surface.nextSeq - state.mark.seq;
        if (
          state.closed || client === undefined ||
          state.lostClaim !== undefined || policy?.onClose === undefined ||
          state.session.surface.nextSeq <= policy.holdLogUpTo || since <= 0 ||
          since < policy.onClose
        ) return Effect.void;
        return Effect.ignore(
          Effect.timeoutOption(
            writeCheckpoint(state.session, undefined, {
              mark: state.mark,
              put: put(client, state.session),
              lineAt: lineAt(client, state.session),
            }),
            "5 seconds",
          ),
        );
      });

    const close: StoreCore["close"] = handles.close((state) =>
      Effect.andThen(checkpointOnClose(state), release(state))
    );

    const checkpoint: StoreCore["checkpoint"] = checkpointer.now(
      handles,
      (state) => ({
        bytes: undefined,
        target: {
          mark: state.mark,
          // A write handle always has its connection.
          put: state.client === undefined
            ? () =>
              Effect.fail(
                new StorageError({
                  operation:
                    `write the checkpoint (no connection) in ${address}`,
                  id: state.session.header.id,
                  code: "connection",
                  cause: undefined,
                }),
              )
            : put(state.client, state.session),
          lineAt: state.client === undefined
            ? undefined
            : lineAt(state.client, state.session),
        },
      }),
    );

    const follow = yield* makeFollow({ pool, pollInterval, pageSize, failed });
    const readRange: StoreCore["readRange"] = (id, from, to, vocabulary) =>
      readEventRange(pool, id, [from, to], vocabulary, pageSize, failed);

    const store: PostgresSessionStore = makeSessionStore({
      create,
      open,
      commit,
      follow,
      readRange,
      list,
      stat,
      close,
      checkpoint,
      writerEnded,
    });
    return store;
  });
}
