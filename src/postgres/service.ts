/**
 * The PostgreSQL store as a service: its options, the {@link PostgresStore}
 * tag a program asks for when it uses PostgreSQL beside another store, and
 * {@link layerPostgresStore}. The store itself is `store.ts`.
 *
 * @module
 */
import * as Context from "effect/Context";
import type * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import type * as Redacted from "effect/Redacted";
import type { CheckpointOptions } from "../store/checkpoints.ts";
import type { StorageError } from "../store/errors.ts";
import { type FollowOptions, SessionStore } from "../store/store.ts";
import { makePostgresStore } from "./store.ts";

/** Options of {@link layerPostgresStore}. */
export interface PostgresStoreOptions {
  /** The connection URL, `postgres://user:password@host:port/database`. */
  readonly url: string | Redacted.Redacted<string>;
  /**
   * Rows read per query when following (and when opening a session of an
   * older version, which goes through the file reader); 1000 by default.
   * An open of a current session streams its rows through one query.
   */
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
  /**
   * When to write checkpoints (a row of `palimpsest_checkpoints` per
   * session): once a log passes `holdLogUpTo` (10,000) events, every
   * 10,000 events and on close after 1,000, by default; `false` for none
   * (then opens never read one either).
   */
  readonly checkpoints?: CheckpointOptions;
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
