/**
 * The opening and reading steps of the PostgreSQL store:
 * {@link readStored} (a session's head row and its rows, from its
 * checkpoint when one fits), {@link openForRead} (on the pool),
 * {@link openForWrite} (on a writer's connection, under its claim),
 * {@link listSessions} and {@link statSession}. Each takes the store's
 * state record (`store_state.ts`).
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import type * as Scope from "effect/Scope";
import type { SqlClient } from "effect/sql/SqlClient";
import { BREAK_STATEMENT } from "./lease.ts";
import { type HandleState, newToken } from "./claim.ts";
import { writableLog } from "../store/open.ts";
import { checkSessionId } from "../store/ids.ts";
import {
  type InvalidSessionId,
  SessionNotFound,
  type StorageError,
} from "../store/errors.ts";
import type { LoadedFrom } from "../store/checkpoints.ts";
import type { OpenError, OpenOptions, SessionHandle } from "../store/store.ts";
import type { StoreCore } from "../store/core.ts";
import { readHeadRow } from "./rows.ts";
import { loadStored } from "./checkpoint.ts";
import { SESSIONS_TABLE } from "./schema.ts";
import {
  type PostgresStoreState,
  readerState,
  writerState,
} from "./store_state.ts";
import { scopedHandle, withHandleScope } from "./store_handle.ts";

/**
 * Reads session `id` through `client`: its head row, then its rows (from
 * its checkpoint when the policy reads one and it fits); `strict` for a
 * writer (no `recover`, no `migrate`).
 *
 * @param store The store.
 * @param client The connection to read through.
 * @param id The session.
 * @param options The open's options.
 * @param strict Whether a write handle is being opened.
 * @returns The session's log, the open's report and the checkpoint mark.
 */
export const readStored = <E>(
  store: PostgresStoreState,
  client: SqlClient,
  id: string,
  options: OpenOptions<E>,
  strict: boolean,
): Effect.Effect<LoadedFrom, OpenError | E> =>
  Effect.gen(function* () {
    const head = yield* readHeadRow(client, id, store.failed);
    if (head === undefined) return yield* new SessionNotFound({ id });
    return yield* loadStored(
      client,
      id,
      head,
      store.pageSize,
      store.failed,
      store.policy,
      options,
      strict,
    );
  });

/**
 * The read half of the store's `open`: a snapshot read on the pool,
 * holding no connection.
 *
 * @param store The store.
 * @param id The session.
 * @param options The open's options.
 * @returns A read handle.
 */
export const openForRead = <E>(
  store: PostgresStoreState,
  id: string,
  options: OpenOptions<E>,
): Effect.Effect<SessionHandle, OpenError | E> =>
  Effect.map(
    readStored(store, store.pool, id, options, false),
    (loaded) =>
      store.handles.make(
        id,
        "read",
        loaded.report,
        readerState(loaded.log.session, loaded.mark),
      ),
  );

/**
 * The write half of the store's `open`: claims the session's lease, then
 * reads it strictly; the lease is renewed while the handle lives.
 *
 * @param store The store.
 * @param id The session.
 * @param options The open's options.
 * @returns A write handle held by the caller's scope.
 */
export const openForWrite = <E>(
  store: PostgresStoreState,
  id: string,
  options: OpenOptions<E>,
): Effect.Effect<SessionHandle, OpenError | E, Scope.Scope> =>
  scopedHandle(
    store,
    withHandleScope(store, (scope) =>
      Effect.gen(function* () {
        const token = newToken();
        const held: { state?: HandleState } = {};
        yield* store.claims.guard(id, token, () => held.state, scope);
        yield* store.claims.claim(id, token);
        const loaded = yield* readStored(
          store,
          store.pool,
          id,
          options,
          true,
        );
        const log = yield* writableLog(loaded.log);
        const writer = writerState(
          store,
          token,
          scope,
          log.session,
          loaded.mark,
        );
        held.state = writer;
        yield* store.claims.keepAlive(id, writer, scope);
        return store.handles.make(id, "write", loaded.report, writer);
      })),
  );

/**
 * The store's `list`: the ids of the head rows, sorted.
 *
 * @param store The store.
 * @returns The ids.
 */
export const listSessions = (
  store: PostgresStoreState,
): ReturnType<StoreCore["list"]> =>
  Effect.map(
    store.pool.unsafe<{ id: string }>(`SELECT id FROM ${SESSIONS_TABLE}`),
    (rows) => rows.map((row) => row.id).sort(),
  ).pipe(Effect.mapError(store.failed("list the sessions of")));

/**
 * The store's `stat`: the head row's bytes and time, and whether a
 * writer's lease is live.
 *
 * @param store The store.
 * @param id The session.
 * @returns What the store knows of the session without reading it.
 */
export const statSession = (
  store: PostgresStoreState,
  id: string,
): ReturnType<StoreCore["stat"]> =>
  Effect.suspend((): ReturnType<StoreCore["stat"]> => {
    const checked = checkSessionId(id);
    if (Result.isFailure(checked)) return Effect.fail(checked.failure);
    return Effect.flatMap(
      store.pool.unsafe<
        { bytes: bigint | number; modified: number; locked: boolean }
      >(
        `SELECT s.bytes, (extract(epoch FROM s.updated_at) * 1000)::float8 AS modified,
           (s.lease_until IS NOT NULL AND s.lease_until >= now()) AS locked
         FROM ${SESSIONS_TABLE} s WHERE s.id = $1`,
        [id],
      ).pipe(Effect.mapError(store.failed("stat a session in"))),
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

/**
 * The store's `breakLease`: gives up session `id`'s lease, live or not.
 *
 * @param store The store.
 * @param id The session.
 * @returns Whether the lease was live.
 */
export const breakLease = (
  store: PostgresStoreState,
  id: string,
): Effect.Effect<
  boolean,
  InvalidSessionId | SessionNotFound | StorageError
> =>
  Effect.suspend((): Effect.Effect<
    boolean,
    InvalidSessionId | SessionNotFound | StorageError
  > => {
    const checked = checkSessionId(id);
    if (Result.isFailure(checked)) return Effect.fail(checked.failure);
    return Effect.flatMap(
      store.pool.unsafe<{ live: boolean }>(BREAK_STATEMENT, [id]).pipe(
        Effect.mapError(store.failed("break the lease of a session in", id)),
      ),
      (rows) => {
        const row = rows[0];
        return row === undefined
          ? Effect.fail(new SessionNotFound({ id }))
          : Effect.succeed(row.live);
      },
    );
  });
