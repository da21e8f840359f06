/**
 * `list` with a query over the servers of a sharded store: each server
 * pages its own sessions, and the router merges their pages.
 *
 * Each server keys its cursor in its own terms (PostgreSQL keeps update
 * times in microseconds), so the router's cursor holds one cursor per
 * server: where that server's next page starts, or that it has no more.
 * A page is the first `limit` of a merge of the servers' pages, each
 * already in the query's order; what it takes of a server is a prefix of
 * that server's page, so the server's next cursor is its page's cursor
 * when the whole page was taken, its old cursor when none was, and else
 * the cursor after the prefix, which one more query of that server (its
 * `limit` the prefix's length) gives.
 *
 * A session stored on two servers (a move stopped between its copy and
 * its delete) is listed once on a page: the first copy in the merge.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import {
  type CatalogueEntry,
  decodeOpaque,
  encodeOpaque,
  entryOrder,
  type ListPage,
  type ListQuery,
  resolveQuery,
} from "../store/catalogue.ts";
import { InvalidListQuery } from "../store/errors.ts";
import type { ListError } from "../store/store.ts";
import type { Shard } from "./sharded_route.ts";

/**
 * Where each server's next page starts: its cursor, `null` when it has no
 * more, absent when it starts from its first session.
 */
type ServerCursors = Readonly<Record<string, string | null>>;

const decodeServerCursors = (cursor: string): ServerCursors | undefined => {
  const value = decodeOpaque(cursor);
  if (typeof value !== "object" || value === null || !("servers" in value)) {
    return undefined;
  }
  const servers: unknown = value.servers;
  if (
    typeof servers !== "object" || servers === null || Array.isArray(servers)
  ) return undefined;
  const read: Record<string, string | null> = {};
  for (const [name, at] of Object.entries(servers)) {
    if (at !== null && typeof at !== "string") return undefined;
    read[name] = at;
  }
  return read;
};

/**
 * One page of a query over the servers.
 *
 * @param shards The servers.
 * @param query The query; its cursor is one this function gave.
 * @returns The page.
 */
export const listShards = (
  shards: ReadonlyArray<Shard>,
  query: ListQuery,
): Effect.Effect<ListPage, ListError> =>
  Effect.suspend(() => {
    const { cursor, ...uncursored } = query;
    const resolved = resolveQuery(uncursored);
    if (Result.isFailure(resolved)) return Effect.fail(resolved.failure);
    const limit = resolved.success.limit;
    const order = entryOrder(resolved.success);
    let from: ServerCursors = {};
    if (cursor !== undefined) {
      const decoded = decodeServerCursors(cursor);
      if (decoded === undefined) {
        return Effect.fail(
          new InvalidListQuery({ field: "cursor", value: cursor }),
        );
      }
      from = decoded;
    }
    const pageOf = (shard: Shard, at: string | undefined, size: number) =>
      shard.store.list(
        at === undefined
          ? { ...uncursored, limit: size }
          : { ...uncursored, cursor: at, limit: size },
      );
    return Effect.gen(function* () {
      const pages = yield* Effect.forEach(
        shards,
        (shard) =>
          from[shard.name] === null
            ? Effect.succeed(undefined)
            : pageOf(shard, from[shard.name] ?? undefined, limit),
        { concurrency: "unbounded" },
      );
      // The merge: the smallest head of the servers' pages, until the page
      // is full or every server's page is taken.
      const taken = pages.map(() => 0);
      const headOf = (i: number) => pages[i]?.sessions[taken[i] ?? 0];
      const sessions: Array<CatalogueEntry> = [];
      const listed = new Set<string>();
      while (sessions.length < limit) {
        let next = -1;
        let best: CatalogueEntry | undefined;
        for (let i = 0; i < pages.length; i++) {
          const head = headOf(i);
          if (head === undefined) continue;
          if (best === undefined || order(head, best) < 0) {
            next = i;
            best = head;
          }
        }
        if (best === undefined) break;
        taken[next] = (taken[next] ?? 0) + 1;
        if (listed.has(best.id)) continue;
        listed.add(best.id);
        sessions.push(best);
      }
      const after = yield* Effect.forEach(
        shards,
        (shard, i): Effect.Effect<string | null | undefined, ListError> => {
          const page = pages[i];
          const at = from[shard.name];
          const count = taken[i] ?? 0;
          if (page === undefined) return Effect.succeed(null);
          if (count === page.sessions.length) {
            return Effect.succeed(page.cursor ?? null);
          }
          if (count === 0) return Effect.succeed(at);
          return Effect.map(
            pageOf(shard, at ?? undefined, count),
            (prefix) => prefix.cursor ?? null,
          );
        },
        { concurrency: "unbounded" },
      );
      const servers: Record<string, string | null> = {};
      shards.forEach((shard, i) => {
        const at = after[i];
        if (at !== undefined) servers[shard.name] = at;
      });
      const more = shards.some((shard) => servers[shard.name] !== null);
      return {
        sessions,
        cursor: more ? encodeOpaque({ servers }) : undefined,
      };
    });
  });
