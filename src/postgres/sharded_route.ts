/**
 * Where the sharded PostgreSQL store finds a session: its servers (each a
 * PostgreSQL store and a small pool of its own, connected on first use, for
 * the rows a move checks and removes), ranked for an id by rendezvous hashing (`rendezvous.ts`),
 * and the search that tries them in that order. A session lives on the
 * first server of its ranking that holds it: its own server, unless it was
 * stored before a server was added and not moved since.
 *
 * @module
 * @internal
 */
import type { PostgresSessionStore } from "./service.ts";
import * as Effect from "effect/Effect";
import type { PgClient } from "@effect/sql-pg";
import type { SessionHandle, SessionStore } from "../store/store.ts";
import type { SessionNotFound, StorageError } from "../store/errors.ts";
import type { Failed } from "./rows.ts";
import { rankServers } from "./rendezvous.ts";

/** One server of a sharded store. */
export interface Shard {
  /** Its name, hashed with session ids. */
  readonly name: string;
  /** The PostgreSQL store on it. */
  readonly store: PostgresSessionStore;
  /**
   * A small pool for the rows a move compares and removes, connected on
   * first use.
   */
  readonly admin: Effect.Effect<PgClient.PgClient, StorageError>;
  /** How a failed SQL call on it is reported. */
  readonly failed: Failed;
}

/** The servers of a sharded store and what routes to them. */
export interface Shards {
  /** The names, in the order given. */
  readonly names: ReadonlyArray<string>;
  /** The server of a name. */
  readonly byName: ReadonlyMap<string, Shard>;
  /** The server each open handle was opened on. */
  readonly owners: WeakMap<SessionHandle, Shard>;
}

/**
 * The servers ranked for a session: the one it belongs to first.
 *
 * @param shards The servers.
 * @param id The session id.
 * @returns The servers, ranked.
 */
export const rankedShards = (
  shards: Shards,
  id: string,
): ReadonlyArray<Shard> =>
  rankServers(id, shards.names).flatMap((name) => {
    const shard = shards.byName.get(name);
    return shard === undefined ? [] : [shard];
  });

/**
 * The server a session belongs to (where `create` puts it).
 *
 * @param shards The servers; at least one.
 * @param id The session id.
 * @returns Its server.
 */
export const homeShard = (shards: Shards, id: string): Shard => {
  const home = rankedShards(shards, id)[0];
  if (home === undefined) throw new Error("Expected at least one server");
  return home;
};

const isNotFound = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "_tag" in error &&
  error._tag === "SessionNotFound";

/**
 * Runs `f` on each server of the session's ranking in turn until one does
 * not fail `SessionNotFound`: a session on its own server costs one call, one
 * stored before a server was added costs a call per server ranked above it,
 * a missing one a call per server (ending with the last `SessionNotFound`).
 *
 * @param shards The servers.
 * @param id The session id.
 * @param f The call on one server.
 * @returns The first answer that is not `SessionNotFound`.
 */
export const onFirstHolder = <A, E, R>(
  shards: Shards,
  id: string,
  f: (shard: Shard) => Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const ranked = rankedShards(shards, id);
    const at = (i: number): Effect.Effect<A, E, R> => {
      const shard = ranked[i];
      if (shard === undefined) return Effect.die("no server to try");
      return i === ranked.length - 1
        ? f(shard)
        : Effect.catchIf(f(shard), isNotFound, () => at(i + 1));
    };
    return at(0);
  });

/**
 * The server that holds a session, found by `stat` in ranking order, or
 * undefined when none does.
 *
 * @param shards The servers.
 * @param id The session id.
 * @returns Its server.
 */
export const locateShard = (
  shards: Shards,
  id: string,
): Effect.Effect<
  Shard | undefined,
  Exclude<Effect.Error<ReturnType<SessionStore["stat"]>>, SessionNotFound>
> =>
  onFirstHolder(
    shards,
    id,
    (shard) =>
      Effect.as(shard.store.stat(id), shard).pipe(
        Effect.map((found): Shard | undefined => found),
      ),
  ).pipe(Effect.catchTag("SessionNotFound", () => Effect.succeed(undefined)));

/**
 * The servers that hold a session, in ranking order: more than one only
 * after a move stopped between its copy and its removal.
 *
 * @param shards The servers.
 * @param id The session id.
 * @returns The holders.
 */
export const holdersOf = (
  shards: Shards,
  id: string,
): Effect.Effect<
  ReadonlyArray<Shard>,
  Exclude<Effect.Error<ReturnType<SessionStore["stat"]>>, SessionNotFound>
> =>
  Effect.map(
    Effect.forEach(
      rankedShards(shards, id),
      (shard) =>
        shard.store.stat(id).pipe(
          Effect.as([shard]),
          Effect.catchTag(
            "SessionNotFound",
            () => Effect.succeed<ReadonlyArray<Shard>>([]),
          ),
        ),
      { concurrency: "unbounded" },
    ),
    (found) => found.flat(),
  );
