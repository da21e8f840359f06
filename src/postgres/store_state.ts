/**
 * What the steps of the PostgreSQL store share: the store's state record
 * ({@link PostgresStoreState}: the pool, the claims, the tuning, the
 * checkpoint policy, the handles, the store's scope), the connection
 * handling that makes it ({@link resolveSettings}, {@link connectPool},
 * {@link connectStore}), and the state behind a handle as a reader or a
 * writer holds it ({@link readerState}, {@link writerState}). The claim
 * itself is `claim.ts`; the operations are `store_write.ts` (create,
 * append), `store_read.ts` (open, list, stat) and `store_handle.ts` (a
 * writer's scope, checkpoints, close); `store.ts` assembles them.
 *
 * @module
 * @internal
 */
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Redacted from "effect/Redacted";
import type * as Scope from "effect/Scope";
import * as Semaphore from "effect/Semaphore";
import * as Reactivity from "effect/reactivity/Reactivity";
import { SqlClient } from "effect/sql/SqlClient";
import { PgClient } from "@effect/sql-pg";
import type { Session } from "../session/session.ts";
import type { StorageError } from "../store/errors.ts";
import { type HandleRegistry, makeHandleRegistry } from "../store/handles.ts";
import {
  type CheckpointMark,
  type ResolvedPolicy,
  resolvePolicy,
} from "../store/checkpoints.ts";
import {
  type Checkpointer,
  makeCheckpointer,
} from "../store/checkpoint_write.ts";
import type { PostgresStoreOptions } from "./service.ts";
import { type Claims, type HandleState, makeClaims } from "./claim.ts";
import { thisWriter } from "./lease.ts";
import type { FollowSource } from "./follow.ts";
import {
  DEFAULT_PAGE,
  displayAddress,
  type Failed,
  failedAt,
  MAX_MESSAGE_BYTES,
} from "./rows.ts";
import { migrateStore } from "./schema.ts";

/** The store's options, resolved: what a store runs with before it connects. */
export interface PostgresSettings {
  /** The connection URL. */
  readonly url: Redacted.Redacted<string>;
  /** The address without secrets, for messages. */
  readonly address: string;
  /** Rows read per query. */
  readonly pageSize: number;
  /** The longest a follower waits between two reads of the head. */
  readonly pollInterval: Duration.Duration;
  /** The writer's lease, in seconds. */
  readonly leaseSeconds: number;
  /** Whether appends notify: as asked, or detected on start. */
  readonly notifyOption: boolean | undefined;
  /** Where followers `LISTEN`: the store's URL, another one, or nowhere. */
  readonly listen: Redacted.Redacted<string> | undefined;
  /** Connections of the shared pool. */
  readonly maxConnections: number;
  /** When checkpoints are written (undefined: never on their own). */
  readonly policy: ResolvedPolicy | undefined;
  /** How a failed SQL call is reported. */
  readonly failed: Failed;
}

/** What one PostgreSQL store holds: everything its steps read besides a handle. */
export interface PostgresStoreState extends PostgresSettings {
  /** The shared pool: readers, list, stat, follow. */
  readonly pool: PgClient.PgClient;
  /** The writers' pool, shared by every writer of the store. */
  readonly writers: PgClient.PgClient;
  /** The writers' leases. */
  readonly claims: Claims;
  /** This process's name as a writer, recorded in its leases. */
  readonly writer: string;
  /** Whether appends signal followers with `pg_notify`. */
  readonly notify: boolean;
  /** How followers `LISTEN`; undefined when they poll only. */
  readonly listener: FollowSource["listener"];
  /** Writes checkpoints under `policy`. */
  readonly checkpointer: Checkpointer;
  /** The store's handles and the state behind each. */
  readonly handles: HandleRegistry<HandleState>;
  /** The store's scope: every writer's scope is a child of it. */
  readonly scope: Scope.Scope;
}

/**
 * The store's options with their defaults applied.
 *
 * @param options The options as given.
 * @returns The settings.
 */
export const resolveSettings = (
  options: PostgresStoreOptions,
): PostgresSettings => {
  const url = typeof options.url === "string"
    ? Redacted.make(options.url)
    : options.url;
  const address = displayAddress(Redacted.value(url));
  return {
    url,
    address,
    pageSize: Math.max(1, options.pageSize ?? DEFAULT_PAGE),
    pollInterval: Duration.fromInputUnsafe(
      options.pollInterval ?? Duration.seconds(1),
    ),
    leaseSeconds: leaseSecondsOf(options),
    notifyOption: options.notify,
    listen: options.listen === false || options.notify === false
      ? undefined
      : options.listen === undefined || options.listen === true
      ? url
      : typeof options.listen === "string"
      ? Redacted.make(options.listen)
      : options.listen,
    maxConnections: options.maxConnections ?? 10,
    policy: resolvePolicy(options.checkpoints),
    failed: failedAt(address),
  };
};

/** The lease of the options, in seconds: 15 by default, at least 1. */
const leaseSecondsOf = (options: PostgresStoreOptions): number => {
  const lease = options.lease ?? options.deadWriterSeconds;
  if (lease === undefined) return 15;
  const seconds = typeof lease === "number"
    ? lease
    : Duration.toMillis(Duration.fromInputUnsafe(lease)) / 1000;
  return Math.max(1, seconds);
};

/**
 * Whether `pg_notify` can be called: it is missing on some engines that
 * speak PostgreSQL's protocol (CockroachDB, YugabyteDB).
 */
const canNotify = (
  pool: SqlClient,
): Effect.Effect<boolean> =>
  Effect.match(pool.unsafe(`SELECT pg_notify('palimpsest_probe', '')`), {
    onFailure: () => false,
    onSuccess: () => true,
  });

/**
 * A pool of the store's: no prepared statements and no startup parameters,
 * since a transaction pooler hands each transaction to any server
 * connection; its `application_name` tells its part (readers, writers,
 * checks) in `pg_stat_activity`.
 *
 * @param settings The store's settings.
 * @param reactivity The store's reactivity service.
 * @param name The pool's `application_name`.
 * @param connections Its most connections.
 * @returns The pool, closed with the scope.
 */
export const poolOf = (
  settings: PostgresSettings,
  reactivity: Reactivity.Reactivity,
  name: string,
  connections: number,
): Effect.Effect<PgClient.PgClient, StorageError, Scope.Scope> =>
  PgClient.make({
    url: settings.url,
    maxConnections: connections,
    applicationName: name,
    maxMessageSize: MAX_MESSAGE_BYTES,
    prepare: false,
  }).pipe(
    Effect.provideService(Reactivity.Reactivity, reactivity),
    Effect.mapError(settings.failed("connect to")),
  );

/**
 * Connects the shared pool and runs the migrations on it.
 *
 * @param settings The store's settings.
 * @param reactivity The store's reactivity service, for its connections.
 * @returns The pool, closed with the scope.
 */
export const connectPool = (
  settings: PostgresSettings,
  reactivity: Reactivity.Reactivity,
): Effect.Effect<PgClient.PgClient, StorageError, Scope.Scope> =>
  Effect.gen(function* () {
    const pool = yield* poolOf(
      settings,
      reactivity,
      "palimpsest",
      settings.maxConnections,
    );
    yield* migrateStore.pipe(
      Effect.provideService(SqlClient, pool),
      Effect.mapError(settings.failed("migrate")),
    );
    return pool;
  });

/**
 * The state record of a store: its settings, the pool (migrated), the
 * claims over the same URL, and no handle yet. Everything closes with the
 * scope.
 *
 * @param options The options as given.
 * @returns The store's state.
 */
export const connectStore = (
  options: PostgresStoreOptions,
): Effect.Effect<PostgresStoreState, StorageError, Scope.Scope> =>
  Effect.gen(function* () {
    const settings = resolveSettings(options);
    const scope = yield* Effect.scope;
    const reactivity = yield* Reactivity.make;
    const pool = yield* connectPool(settings, reactivity);
    const writers = yield* poolOf(
      settings,
      reactivity,
      "palimpsest writer",
      settings.maxConnections,
    );
    const checks = PgClient.makeClient({
      url: settings.url,
      applicationName: "palimpsest check",
      maxMessageSize: MAX_MESSAGE_BYTES,
      prepare: false,
    }).pipe(Effect.provideService(Reactivity.Reactivity, reactivity));
    const writer = thisWriter("palimpsest");
    const claims = makeClaims({
      pool: writers,
      checks,
      address: settings.address,
      leaseSeconds: settings.leaseSeconds,
      writer,
      failed: settings.failed,
    });
    const notify = settings.notifyOption ?? (yield* canNotify(pool));
    const listen = notify ? settings.listen : undefined;
    return {
      ...settings,
      listen,
      listener: listen === undefined
        ? undefined
        : listen === settings.url
        ? (channel) => pool.listen(channel)
        : (channel) =>
          Effect.flatMap(
            PgClient.makeClient({
              url: listen,
              applicationName: "palimpsest follow",
            }).pipe(Effect.provideService(Reactivity.Reactivity, reactivity)),
            (client) => client.listen(channel),
          ),
      pool,
      writers,
      claims,
      writer,
      notify,
      checkpointer: makeCheckpointer(settings.policy),
      handles: makeHandleRegistry<HandleState>(),
      scope,
    };
  });

/**
 * The state behind a read handle: a snapshot, with no connection.
 *
 * @param session The session read.
 * @param mark The checkpoint it was read from.
 * @returns The state.
 */
export const readerState = (
  session: Session,
  mark: CheckpointMark,
): HandleState => ({
  session,
  closed: false,
  client: undefined,
  token: undefined,
  renewedAt: 0,
  scope: undefined,
  semaphore: Semaphore.makeUnsafe(1),
  mark,
});

/**
 * The state behind a write handle: the pool it writes through, its lease's
 * token, and the scope that ends it.
 *
 * @param store The store.
 * @param token The writer's fencing token.
 * @param scope The writer's scope.
 * @param session The session as written.
 * @param mark The newest checkpoint of the session.
 * @returns The state.
 */
export const writerState = (
  store: PostgresStoreState,
  token: string,
  scope: Scope.Closeable,
  session: Session,
  mark: CheckpointMark,
): HandleState => ({
  session,
  closed: false,
  client: store.writers,
  token,
  renewedAt: 0,
  scope,
  semaphore: Semaphore.makeUnsafe(1),
  mark,
});
