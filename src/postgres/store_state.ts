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
import {
  type Claimed,
  type Claims,
  type HandleState,
  makeClaims,
} from "./claim.ts";
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
  /** How long a follower waits for a notification before it polls. */
  readonly pollInterval: Duration.Duration;
  /** Seconds until the server drops a vanished writer's claim. */
  readonly dead: number;
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
  /** The writers' claims and their connections. */
  readonly claims: Claims;
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
    dead: Math.max(3, Math.round(options.deadWriterSeconds ?? 15)),
    maxConnections: options.maxConnections ?? 10,
    policy: resolvePolicy(options.checkpoints),
    failed: failedAt(address),
  };
};

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
    const pool = yield* PgClient.make({
      url: settings.url,
      maxConnections: settings.maxConnections,
      applicationName: "palimpsest",
      maxMessageSize: MAX_MESSAGE_BYTES,
    }).pipe(
      Effect.provideService(Reactivity.Reactivity, reactivity),
      Effect.mapError(settings.failed("connect to")),
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
    const claims = makeClaims({
      url: settings.url,
      address: settings.address,
      dead: settings.dead,
      reactivity,
      failed: settings.failed,
    });
    return {
      ...settings,
      pool,
      claims,
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
  scope: undefined,
  semaphore: Semaphore.makeUnsafe(1),
  mark,
});

/**
 * The state behind a write handle: the writer's connection with its claim,
 * and the scope that closes it.
 *
 * @param claimed The connection and its server process.
 * @param scope The writer's scope.
 * @param session The session as written.
 * @param mark The newest checkpoint of the session.
 * @returns The state.
 */
export const writerState = (
  claimed: Claimed,
  scope: Scope.Closeable,
  session: Session,
  mark: CheckpointMark,
): HandleState => ({
  session,
  closed: false,
  client: claimed.client,
  backend: claimed.backend,
  scope,
  semaphore: Semaphore.makeUnsafe(1),
  mark,
});
