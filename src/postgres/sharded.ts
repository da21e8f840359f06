/**
 * The PostgreSQL store over several servers: each session lives on one
 * server, chosen by rendezvous hashing of its id over the servers' names
 * (`rendezvous.ts`), so that adding a server moves about 1/N of the
 * sessions. It is a {@link SessionStore} like the others (the store
 * conformance suite runs over it), plus what only a sharded store has:
 * where a session is, moving one, rebalancing.
 *
 * - **Routing.** `create` stores a session on its own server, after a look
 *   at the others (in parallel) so that an id stored elsewhere is refused
 *   (`SessionAlreadyExists`). `open`, `stat`, `follow` and `resolveAppend`
 *   try the servers in the session's ranking, its own server first: one
 *   call for a session on its own server, one more per server ranked above
 *   the one that holds it (a session stored before a server was added),
 *   and one per server for a missing id. A handle's writes (`append`,
 *   `update`, `repair`, `checkpoint`, `close`, `events`) go to the server
 *   that opened it. `list` asks every server and merges the ids, sorted; with a query it
 *   merges the servers' pages, and its cursor holds one per server
 *   (`sharded_list.ts`).
 * - **Moving** (`sharded_move.ts`): `moveSession` under the session's writer
 *   claim on both servers, `rebalanceSessions` for every session not on its
 *   own server.
 *
 * What the router does not do: no transaction spans two servers (a move is
 * copy, compare, delete, each step safe to stop after); it never moves a
 * session on its own (adding a server changes only where new sessions go
 * and where lookups start, until a rebalance); a follower keeps reading
 * the server it found the session on (a session moved under it stops
 * getting new events there: follow again); every router of a store must
 * be given the same server names, or they disagree on where a session
 * belongs (a session is still found, at the cost of a look at each server).
 *
 * @module
 */
import * as Context from "effect/Context";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Scope from "effect/Scope";
import * as Semaphore from "effect/Semaphore";
import type { PgClient } from "@effect/sql-pg";
import * as Stream from "effect/Stream";
import type { ListError } from "../store/store.ts";
import type { ListPage, ListQuery } from "../store/catalogue.ts";
import { listShards } from "./sharded_list.ts";
import * as Reactivity from "effect/reactivity/Reactivity";
import type { Session, SessionHeader } from "../session/session.ts";
import {
  type InvalidSessionId,
  SessionAlreadyExists,
  type StorageError,
} from "../store/errors.ts";
import {
  type OpenOptions,
  type SessionHandle,
  SessionStore,
} from "../store/store.ts";
import {
  type PostgresSessionStore,
  PostgresStore,
  type PostgresStoreOptions,
} from "./service.ts";
import { makePostgresStore } from "./store.ts";
import { connectPool, resolveSettings } from "./store_state.ts";
import {
  homeShard,
  locateShard,
  onFirstHolder,
  type Shard,
  type Shards,
} from "./sharded_route.ts";
import {
  type MovedSession,
  type MoveError,
  moveSessionBetween,
  type MoveSessionOptions,
  type RebalanceOptions,
  type RebalanceReport,
  rebalanceShards,
} from "./sharded_move.ts";

/** One server of {@link ShardedPostgresStoreOptions}. */
export interface ShardServer extends PostgresStoreOptions {
  /**
   * The server's name: hashed with each session id to place it, so it must
   * stay the same for as long as the server holds sessions (a URL that
   * changes, a new password, a new host, keeps its name).
   */
  readonly name: string;
}

/** Options of {@link layerShardedPostgresStore}. */
export interface ShardedPostgresStoreOptions {
  /** The servers, each with its name and its store's options; at least one. */
  readonly servers: ReadonlyArray<ShardServer>;
}

/**
 * The sharded PostgreSQL store: the {@link SessionStore} operations, routed,
 * and what only a sharded store has.
 */
export interface ShardedSessionStore extends PostgresSessionStore {
  /** The servers' names, as given. */
  readonly servers: ReadonlyArray<string>;
  /**
   * The server a session belongs to: where `create` puts it, and where a
   * rebalance moves it.
   *
   * @param id The session id.
   * @returns The server's name.
   */
  readonly serverOf: (id: string) => string;
  /**
   * The server that holds a session now, found as `open` finds it, or
   * undefined when none does.
   *
   * @param id The session id.
   * @returns `Effect<string | undefined, InvalidSessionId | StorageError>`.
   */
  readonly locateSession: (
    id: string,
  ) => Effect.Effect<string | undefined, InvalidSessionId | StorageError>;
  /**
   * Moves a session to server `to` under its writer claim: copy, compare,
   * then delete from the source. Fails `SessionLocked` while a writer
   * holds it.
   *
   * @param id The session id.
   * @param to The target server's name.
   * @param options The source (found by default), the vocabulary.
   * @returns `Effect<MovedSession, MoveError>`.
   */
  readonly moveSession: (
    id: string,
    to: string,
    options?: MoveSessionOptions,
  ) => Effect.Effect<MovedSession, MoveError>;
  /**
   * Moves every session that is not on its own server there (after a
   * server was added), and removes the stale copies a stopped move left.
   * Sessions whose writer is live are skipped and reported.
   *
   * @param options How many at once, the vocabulary.
   * @returns `Effect<RebalanceReport, StorageError>`.
   */
  readonly rebalanceSessions: (
    options?: RebalanceOptions,
  ) => Effect.Effect<RebalanceReport, StorageError>;
}

/**
 * The requirement {@link ShardedPostgresStore} stands for: a brand of its
 * own, so that no other store's layer satisfies it.
 */
export interface ShardedPostgresStore {
  /** The brand. */
  readonly "~palimpsest/ShardedPostgresStore": "ShardedPostgresStore";
}

/**
 * The sharded store under its own name, with `moveSession` and
 * `rebalanceSessions`. Provided by {@link layerShardedPostgresStore}.
 */
export const ShardedPostgresStore: Context.Service<
  ShardedPostgresStore,
  ShardedSessionStore
> = Context.Service<ShardedPostgresStore, ShardedSessionStore>(
  "@palimpsest/session/ShardedPostgresStore",
);

/** The servers, checked: at least one, names unique and non-empty. */
const checkServers = (servers: ReadonlyArray<ShardServer>): void => {
  if (servers.length === 0) {
    throw new Error("Expected at least one server in `servers`");
  }
  const seen = new Set<string>();
  for (const { name } of servers) {
    if (name === "" || seen.has(name)) {
      throw new Error(
        `Expected server names to be unique and non-empty but found "${name}" twice or empty`,
      );
    }
    seen.add(name);
  }
};

/**
 * The pool of two connections a server's moves use, connected on the first
 * move and kept for the store's life: a process that never moves a session
 * (every writer process of an application) never opens it.
 */
const lazyAdmin = (
  server: ShardServer,
  scope: Scope.Scope,
): Effect.Effect<PgClient.PgClient, StorageError> => {
  // The one mutable cell of the store: the pool once it is connected. A
  // failed connection is not kept, so the next move tries again.
  let pool: PgClient.PgClient | undefined;
  const permit = Semaphore.makeUnsafe(1);
  return permit.withPermits(1)(Effect.suspend(() => {
    if (pool !== undefined) return Effect.succeed(pool);
    const settings = resolveSettings({ ...server, maxConnections: 2 });
    return Effect.flatMap(
      Reactivity.make,
      (reactivity) => connectPool(settings, reactivity),
    ).pipe(
      Scope.provide(scope),
      Effect.tap((connected) =>
        Effect.sync(() => {
          pool = connected;
        })
      ),
    );
  }));
};

/** One server: its store, and the pool its moves use. */
const connectShard = (
  server: ShardServer,
): Effect.Effect<Shard, StorageError, Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* makePostgresStore(server);
    return {
      name: server.name,
      store,
      admin: lazyAdmin(server, yield* Effect.scope),
      failed: resolveSettings(server).failed,
    };
  });

const idOf = (init: SessionHeader | Session): string =>
  "surface" in init ? init.header.id : init.id;

/** The store's operations over its servers. */
const routed = (shards: Shards): ShardedSessionStore => {
  const home = (id: string) => homeShard(shards, id);
  const owner = (handle: SessionHandle): SessionStore =>
    (shards.owners.get(handle) ?? home(handle.id)).store;
  const remember = (shard: Shard) => (handle: SessionHandle) =>
    Effect.sync(() => {
      shards.owners.set(handle, shard);
    });
  const holderStore = (id: string) =>
    Effect.map(locateShard(shards, id), (shard) => (shard ?? home(id)).store);

  // Without a query, every server's ids, merged; with one, a merge of the
  // servers' pages under a cursor per server (`sharded_list.ts`).
  function list(): Effect.Effect<ReadonlyArray<string>, StorageError>;
  function list(query: ListQuery): Effect.Effect<ListPage, ListError>;
  function list(
    query?: ListQuery,
  ): Effect.Effect<ReadonlyArray<string> | ListPage, ListError> {
    const all = [...shards.byName.values()];
    if (query === undefined) {
      return Effect.map(
        Effect.forEach(all, (shard) => shard.store.list(), {
          concurrency: "unbounded",
        }),
        (lists) => [...new Set(lists.flat())].sort(),
      );
    }
    return listShards(all, query);
  }

  const open: SessionStore["open"] = <E = never>(
    id: string,
    options?: OpenOptions<E>,
  ) =>
    onFirstHolder(
      shards,
      id,
      (shard) => Effect.tap(shard.store.open(id, options), remember(shard)),
    );

  const create: SessionStore["create"] = (init, options) =>
    Effect.suspend(() => {
      const id = idOf(init);
      const target = home(id);
      const others = [...shards.byName.values()].filter((s) => s !== target);
      return Effect.forEach(
        others,
        (shard) =>
          shard.store.stat(id).pipe(
            Effect.as(true),
            Effect.catchTag("SessionNotFound", () => Effect.succeed(false)),
          ),
        { concurrency: "unbounded" },
      ).pipe(
        Effect.flatMap((found) =>
          found.includes(true)
            ? Effect.fail(new SessionAlreadyExists({ id }))
            : target.store.create(init, options)
        ),
        Effect.tap(remember(target)),
      );
    });

  return {
    servers: shards.names,
    serverOf: (id) => home(id).name,
    locateSession: (id) =>
      Effect.map(locateShard(shards, id), (shard) => shard?.name),
    moveSession: (id, to, options) =>
      moveSessionBetween(shards, id, to, options),
    rebalanceSessions: (options) => rebalanceShards(shards, options),
    create,
    open,
    withSession: (id, f, options) =>
      Effect.scoped(
        Effect.flatMap(
          open(id, { ...options, mode: options?.mode ?? "write" }),
          f,
        ),
      ),
    append: (handle, drafts) => owner(handle).append(handle, drafts),
    appendEvents: (handle, events) =>
      owner(handle).appendEvents(handle, events),
    update: (handle, op) => owner(handle).update(handle, op),
    repair: (handle) => owner(handle).repair(handle),
    checkpoint: (handle) => owner(handle).checkpoint(handle),
    events: (handle, options) => owner(handle).events(handle, options),
    withHistory: (handle, f) => owner(handle).withHistory(handle, f),
    close: (handle) => owner(handle).close(handle),
    resolveAppend: (error, options) =>
      Effect.flatMap(
        holderStore(error.id),
        (store) => store.resolveAppend(error, options),
      ),
    follow: (id, options) =>
      Stream.unwrap(
        Effect.map(holderStore(id), (store) => store.follow(id, options)),
      ),
    stat: (id) => onFirstHolder(shards, id, (shard) => shard.store.stat(id)),
    breakLease: (id) =>
      onFirstHolder(shards, id, (shard) => shard.store.breakLease(id)),
    list,
    remove: (id) =>
      onFirstHolder(shards, id, (shard) => shard.store.remove(id)),
  };
};

/**
 * Makes the sharded store: a PostgreSQL store per server (each runs its
 * migrations), and per server a pool of two connections that its first move
 * opens.
 * Everything closes with the scope. Server names must be unique and
 * non-empty, and there must be at least one (a defect otherwise).
 *
 * @param options The servers.
 * @returns `Effect<ShardedSessionStore, StorageError, Scope>`.
 *
 * @example A store over one server (more are more entries in `servers`)
 * ```ts
 * import { makeShardedPostgresStore } from "@palimpsest/session/postgres";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const url = Deno.env.get("PALIMPSEST_PG_URL"); // e.g. postgres://postgres@localhost/postgres
 * if (url !== undefined) {
 *   const id = `doc-${crypto.randomUUID()}`;
 *   const where = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
 *     const store = yield* makeShardedPostgresStore({
 *       servers: [{ name: "a", url }],
 *     });
 *     yield* Effect.scoped(store.create({ id, createdAt: 0, isSeeded: false }));
 *     return [store.serverOf(id), yield* store.locateSession(id)];
 *   })));
 *   assert.equal(where[0], where[1]);
 * }
 * ```
 */
export function makeShardedPostgresStore(
  options: ShardedPostgresStoreOptions,
): Effect.Effect<ShardedSessionStore, StorageError, Scope.Scope> {
  return Effect.gen(function* () {
    checkServers(options.servers);
    const connected = yield* Effect.forEach(options.servers, connectShard, {
      concurrency: "unbounded",
    });
    return routed({
      names: options.servers.map((server) => server.name),
      byName: new Map(connected.map((shard) => [shard.name, shard])),
      owners: new WeakMap(),
    });
  });
}

/**
 * The sharded PostgreSQL layer of {@link SessionStore}, also provided as
 * {@link PostgresStore} and as {@link ShardedPostgresStore} (which adds
 * `moveSession` and `rebalanceSessions`).
 *
 * @param options The servers.
 * @returns `Layer<SessionStore | PostgresStore | ShardedPostgresStore, StorageError>`.
 *
 * @example Providing the store
 * ```ts
 * import { layerShardedPostgresStore, ShardedPostgresStore } from "@palimpsest/session/postgres";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const url = Deno.env.get("PALIMPSEST_PG_URL"); // e.g. postgres://postgres@localhost/postgres
 * if (url !== undefined) {
 *   const servers = [{ name: "a", url }];
 *   const names = await Effect.runPromise(
 *     Effect.gen(function* () {
 *       const store = yield* ShardedPostgresStore;
 *       return store.servers;
 *     }).pipe(Effect.provide(layerShardedPostgresStore({ servers }))),
 *   );
 *   assert.deepEqual(names, ["a"]);
 * }
 * ```
 */
export function layerShardedPostgresStore(
  options: ShardedPostgresStoreOptions,
): Layer.Layer<
  SessionStore | PostgresStore | ShardedPostgresStore,
  StorageError
> {
  return Layer.effectContext(
    Effect.map(
      makeShardedPostgresStore(options),
      (store) => {
        const plain: PostgresSessionStore = store;
        return Context.make(SessionStore, plain).pipe(
          Context.add(PostgresStore, plain),
          Context.add(ShardedPostgresStore, store),
        );
      },
    ),
  );
}
