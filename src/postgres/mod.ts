/**
 * `@palimpsest/session/postgres`: the session store in PostgreSQL, for
 * sessions shared by many machines. Kept out of the main entry point so that
 * a program using the JSONL store never loads the PostgreSQL driver.
 *
 * - {@link layerPostgresStore} provides the `SessionStore` (and
 *   {@link PostgresStore}, which adds `follow`) over a server URL: a pool,
 *   the tables created by `effect/sql`'s `Migrator`, one dedicated
 *   connection per writer holding the session's claim.
 * - {@link layerShardedPostgresStore} provides the same store over several
 *   servers: each session on the server that rendezvous hashing of its id
 *   picks ({@link serverOfSession}), `list` over all of them, and
 *   {@link ShardedPostgresStore} with `moveSession` and `rebalanceSessions`.
 * - {@link parseSessionAddress} reads `postgres://…?session=ID` addresses,
 *   as the command line takes them.
 *
 * See `docs/postgres.md` for the schema, the writer claim, follow, sizes
 * and backups.
 *
 * @example Writing a session and following it
 * ```ts
 * import { layerPostgresStore, PostgresStore } from "@palimpsest/session/postgres";
 * import { Effect, Stream } from "effect";
 * import assert from "node:assert/strict";
 *
 * const url = Deno.env.get("PALIMPSEST_PG_URL"); // e.g. postgres://postgres@localhost/postgres
 * if (url !== undefined) {
 *   const id = `doc-${crypto.randomUUID()}`;
 *   const program = Effect.gen(function* () {
 *     const store = yield* PostgresStore;
 *     yield* Effect.scoped(Effect.gen(function* () {
 *       const writer = yield* store.create({ id, createdAt: 0, isSeeded: false });
 *       yield* store.append(writer, [{ type: "turn/start", data: { turn: 0 } }]);
 *     }));
 *     return yield* Stream.runCollect(Stream.take(store.follow(id), 1));
 *   });
 *   const events = await Effect.runPromise(program.pipe(Effect.provide(layerPostgresStore({ url }))));
 *   assert.equal(events[0]?.type, "turn/start");
 * }
 * ```
 *
 * @module
 */
export { makePostgresStore } from "./store.ts";
export {
  type FollowOptions,
  layerPostgresStore,
  type PostgresSessionStore,
  PostgresStore,
  type PostgresStoreOptions,
} from "./service.ts";
export {
  type LoadPostgresOptions,
  loadPostgresSession,
  savePostgresSession,
} from "./load.ts";
export {
  type AddressProblem,
  InvalidAddress,
  isAddressError,
  type JsonlAddress,
  parseSessionAddress,
  type PostgresAddress,
  type SessionAddress,
} from "./address.ts";
export { redactAddress } from "../store/redact.ts";
export {
  EVENTS_CHANNEL,
  EVENTS_TABLE,
  migrateStore,
  MIGRATIONS_TABLE,
  SESSIONS_TABLE,
} from "./schema.ts";
export {
  layerShardedPostgresStore,
  makeShardedPostgresStore,
  ShardedPostgresStore,
  type ShardedPostgresStoreOptions,
  type ShardedSessionStore,
  type ShardServer,
} from "./sharded.ts";
export {
  type MovedSession,
  type MoveError,
  type MoveProblem,
  type MoveSessionOptions,
  type RebalanceOptions,
  type RebalanceReport,
  SessionMoveFailed,
} from "./sharded_move.ts";
export {
  rankServers,
  rendezvousWeight,
  serverOfSession,
} from "./rendezvous.ts";
