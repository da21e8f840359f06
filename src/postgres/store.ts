/**
 * The PostgreSQL layer of the session store, over `effect/sql` with
 * `@effect/sql-pg`: the same promises as the JSONL store, for sessions
 * shared by many machines.
 *
 * - **Same bytes.** Each event is stored as the canonical line the JSONL
 *   codec writes (`encodeEventLine`, without `\n`) and the head row keeps
 *   the header line, so a session copied between stores keeps its bytes.
 * - **Durable, all-or-nothing appends.** An append is one statement (its
 *   own transaction; a batch of more than 1,000 rows is one transaction):
 *   it moves the head row only when the head is at the writer's seq and
 *   the writer's token holds the lease, renews the lease, inserts the
 *   batch and sends `NOTIFY` (where the server has `pg_notify`). The
 *   `(session_id, seq)` key is the backstop: a duplicate seq is a
 *   conflict, never a second copy.
 * - **Honest outcomes.** A failure the server answered stored nothing
 *   (`StorageError`, or `WriterClaimLost` when the lease was taken over);
 *   a write left without an answer is settled on a connection of its own
 *   that waits for the head row, replaces the writer's token (so a late
 *   copy of the write can never commit) and compares what is stored; only
 *   a check that fails too makes the outcome `AppendOutcomeUnknown`,
 *   which `resolveAppend` answers once no write is in flight and the
 *   writer's lease is revoked. `create` works the same way.
 * - **One writer per session, across machines, through poolers.** A
 *   writer holds a lease in the session's head row (`lease.ts`): a
 *   fencing token and a time it runs out, claimed by one `UPDATE`,
 *   renewed by every append and by a heartbeat, given back on close. A
 *   writer that dies holds its session until the lease runs out
 *   ({@link PostgresStoreOptions.lease}, 15 s), or `breakLease`. No
 *   connection holds state across transactions, so a transaction pooler
 *   can carry every connection, and writers share the store's writers'
 *   pool.
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
 * This module assembles the store from named steps over one state record;
 * the parts sit beside it as the JSONL store's do: `store_state.ts` (the
 * record, the options resolved, the pool, a handle's state),
 * `store_write.ts` (create and append, each a transaction and the reading
 * of how it ended), `store_read.ts` (open, list, stat), `store_handle.ts`
 * (a writer's scope, its checkpoints, close), `rows.ts` (the rows, pages
 * and the write runner), `claim.ts` (the writer's lease: claim, heartbeat,
 * release, the check of a write left unanswered), `lease.ts` (its SQL),
 * `catalogue.ts` (`list` with a query, `remove`),
 * `writer_end.ts` (the wait of `resolveAppend` for a failed writer's
 * server process), `follow.ts` (the shared `LISTEN` and the follow loop),
 * `read.ts` (the rows of an open to a session), `checkpoint.ts` (the
 * checkpoint row, written and opened from), `load.ts` (one session in or
 * out without a store), `schema.ts` (the tables and their migrations).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import { checkSessionId } from "../store/ids.ts";
import type { StorageError } from "../store/errors.ts";
import { openWith } from "../store/open.ts";
import { makeSessionStore } from "../store/core.ts";
import type { PostgresSessionStore, PostgresStoreOptions } from "./service.ts";
import { makeFollow } from "./follow.ts";
import { readEventRange } from "./read.ts";
import { connectStore } from "./store_state.ts";
import { appendEvents, createSession } from "./store_write.ts";
import {
  breakLease,
  listSessions,
  openForRead,
  openForWrite,
  statSession,
} from "./store_read.ts";
import { checkpointNow, closeHandle } from "./store_handle.ts";
import { queryCatalogue, removeSession } from "./catalogue.ts";

/**
 * Makes the PostgreSQL store: connects its pools, runs the migrations, and
 * returns the store. Writers share the writers' pool. Everything closes
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
    const store = yield* connectStore(options);
    const { pool, pageSize, failed } = store;
    const follow = yield* makeFollow(store);
    const core = makeSessionStore({
      create: (init, createOptions) =>
        createSession(store, init, createOptions),
      open: openWith(
        checkSessionId,
        (id, _, openOptions) => openForRead(store, id, openOptions),
        (id, _, openOptions) => openForWrite(store, id, openOptions),
      ),
      commit: store.handles.commit((handle, state, next) =>
        appendEvents(store, handle, state, next)
      ),
      follow,
      readRange: (id, from, to, vocabulary) =>
        readEventRange(pool, id, [from, to], vocabulary, pageSize, failed),
      list: () => listSessions(store),
      catalogue: (query) => queryCatalogue(store, query),
      remove: (id) => removeSession(store, id),
      stat: (id) => statSession(store, id),
      close: closeHandle(store),
      checkpoint: checkpointNow(store),
      writerEnded: store.claims.writerEnded,
    });
    return { ...core, breakLease: (id) => breakLease(store, id) };
  });
}
