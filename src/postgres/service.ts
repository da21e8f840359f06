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
import type {
  InvalidSessionId,
  SessionNotFound,
  StorageError,
} from "../store/errors.ts";
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
  /**
   * The longest `follow` waits between two reads of a session's head when
   * no notification comes; 1 s. Without notifications (`listen: false`,
   * or an engine without `pg_notify`) a follower polls adaptively: every
   * 50 ms after a change, backing off to at most the smaller of this and
   * 400 ms.
   */
  readonly pollInterval?: Duration.Input;
  /** Connections of the shared pool (writers, readers, list, stat); 10. */
  readonly maxConnections?: number;
  /**
   * The writer's lease: how long a writer holds its session without
   * renewing it (each append renews it, and a heartbeat while idle); 15
   * seconds by default. A writer that dies without closing holds its
   * session until the lease runs out.
   */
  readonly lease?: Duration.Input;
  /** Deprecated: the lease in seconds; `lease` replaces it. */
  readonly deadWriterSeconds?: number;
  /**
   * Whether appends signal followers with `pg_notify`: by default, when
   * the server has it (detected on start; engines such as CockroachDB do
   * not).
   */
  readonly notify?: boolean;
  /**
   * Where followers `LISTEN`: `true` (the default) on the store's URL;
   * another URL, for a store behind a transaction pooler (which cannot
   * carry `LISTEN`) that can reach the server directly; `false` for
   * never (followers poll).
   */
  readonly listen?: boolean | string | Redacted.Redacted<string>;
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
 * included, as every store has it), and {@link PostgresSessionStore.breakLease}.
 */
export interface PostgresSessionStore extends SessionStore {
  /**
   * Gives up the lease of session `id`, live or not, for a caller who
   * knows its writer is gone (its machine is down): the next writer
   * claims it at once. A writer that lives after all is fenced: none of
   * its writes commits again. Succeeds with whether the lease was live.
   */
  readonly breakLease: (
    id: string,
  ) => Effect.Effect<
    boolean,
    InvalidSessionId | SessionNotFound | StorageError
  >;
}

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
 * {@link PostgresStore}, which adds `breakLease`): a pool shared by
 * readers and writers, the migrations run on start, a lease per writer.
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
