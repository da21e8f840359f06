/**
 * The sharded PostgreSQL store on real clusters: the one
 * `PALIMPSEST_PG_URL` names and three more this file starts
 * (`tests/_helpers/postgres_clusters.ts`), each test on fresh databases.
 * The store conformance suite runs over three servers; 30 writers append
 * over 300 sessions and every acknowledged event is found once, on its
 * session's server, by reading each server's rows; a fourth server takes
 * about a quarter of the sessions on a rebalance and every session stays
 * readable; a stopped move's copy is routed around and removed.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Effect, Layer, Redacted, Result } from "effect";
import * as Reactivity from "effect/reactivity/Reactivity";
import { PgClient } from "@effect/sql-pg";
import { Draft, SessionStore } from "@palimpsest/session";
import type { ListPage } from "@palimpsest/session";
import {
  layerPostgresStore,
  layerShardedPostgresStore,
  makeShardedPostgresStore,
  serverOfSession,
  type ShardedSessionStore,
} from "@palimpsest/session/postgres";
import { spawnDenoWriter, storeConformance } from "@palimpsest/session/testing";
import { databaseUrl, postgresUrl } from "../_helpers/postgres.ts";
import { type Cluster, extraClusters } from "../_helpers/postgres_clusters.ts";

const writer = new URL("../store/sharded_writer.ts", import.meta.url)
  .pathname;

/** Runs raw SQL on the database at `url`. */
const sql = <A extends object>(
  url: string,
  text: string,
  params: ReadonlyArray<unknown> = [],
): Promise<ReadonlyArray<A>> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(
    PgClient.makeClient({ url: Redacted.make(url) }).pipe(
      Effect.provide(Reactivity.layer),
    ),
    (client) => client.unsafe<A>(text, [...params]),
  )));

let started: Promise<Cluster[]> | undefined;
/** The four servers' superuser URLs: the given one and three started. */
const servers = async (): Promise<string[]> => {
  if (postgresUrl === undefined) {
    throw new Error("PALIMPSEST_PG_URL is not set");
  }
  started ??= extraClusters(3);
  return [postgresUrl, ...(await started).map((cluster) => cluster.url)];
};

/** A fresh database on each of the first `n` servers. */
const databases = async (n: number): Promise<string[]> => {
  const name = `palimpsest_shard_${crypto.randomUUID().replaceAll("-", "")}`;
  const urls = (await servers()).slice(0, n);
  await Promise.all(urls.map((url) => sql(url, `CREATE DATABASE ${name}`)));
  return urls.map((url) => databaseUrl(url, name));
};

const named = (urls: ReadonlyArray<string>) =>
  urls.map((url, i) => ({
    name: `s${i}`,
    url,
    pollInterval: "50 millis" as const,
  }));

/** Runs `f` with the sharded store over `urls`. */
const withSharded = <A, E>(
  urls: ReadonlyArray<string>,
  f: (store: ShardedSessionStore) => Effect.Effect<A, E>,
): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(
    makeShardedPostgresStore({ servers: named(urls) }),
    f,
  )));

/** The session ids each server's head rows hold, by server name. */
const idsByServer = async (
  urls: ReadonlyArray<string>,
): Promise<Map<string, string[]>> => {
  const byServer = new Map<string, string[]>();
  for (const [i, url] of urls.entries()) {
    const rows = await sql<{ id: string }>(
      url,
      "SELECT id FROM palimpsest_sessions ORDER BY id",
    );
    byServer.set(`s${i}`, rows.map((row) => row.id));
  }
  return byServer;
};

const header = (id: string) => ({ id, createdAt: 1, isSeeded: false });
const user = (text: string) => Draft.user(text, { id: text });

if (postgresUrl !== undefined) {
  // The suite's databases, made once, known by the time a writer process
  // is spawned (a test builds its layer first).
  let suite: Promise<string[]> | undefined;
  let suiteUrls: string[] | undefined;
  storeConformance({
    name: "layerShardedPostgresStore (3 clusters)",
    layer: () =>
      Layer.unwrap(Effect.map(
        Effect.promise(() =>
          suite ??= databases(3).then((urls) => (suiteUrls = urls))
        ),
        (urls) =>
          layerShardedPostgresStore({
            servers: named(urls).map((server) => ({
              ...server,
              lease: "5 seconds" as const,
            })),
          }),
      )),
    // The writers' lease is short here: a killed writer's session is free
    // again when it runs out.
    claimOutlivesWriter: 5000,
    spawnWriter: (args) => {
      if (suiteUrls === undefined) {
        throw new Error("Expected the suite's layer to be built first");
      }
      return spawnDenoWriter(writer, [suiteUrls.join(" ")], args);
    },
  });

  Deno.test("30 writers over 300 sessions on 3 clusters: every acknowledged append stored once, on its server", async () => {
    const urls = await databases(3);
    const ids = Array.from({ length: 300 }, (_, i) => `w-${i}`);
    const acknowledged = await withSharded(
      urls,
      (store) =>
        Effect.gen(function* () {
          yield* Effect.forEach(
            ids,
            (id) => Effect.scoped(store.create(header(id))),
            { concurrency: 10, discard: true },
          );
          const acks: Array<{ id: string; seq: number; text: string }> = [];
          let locked = 0;
          let random = 12345;
          const next = () => {
            random = (random * 1103515245 + 12345) % 2147483648;
            return random;
          };
          yield* Effect.forEach(
            Array.from({ length: 30 }, (_, w) => w),
            (w) =>
              Effect.forEach(
                Array.from({ length: 20 }, (_, round) => round),
                (round) => {
                  const id = ids[next() % ids.length] ?? "w-0";
                  return store.withSession(id, (handle) =>
                    Effect.forEach(
                      [0, 1, 2],
                      (batch) =>
                        Effect.map(
                          store.append(handle, [
                            user(`${w}.${round}.${batch}.a`),
                            user(`${w}.${round}.${batch}.b`),
                          ]),
                          ({ events }) => {
                            for (const event of events) {
                              if (event.type === "user/message") {
                                acks.push({
                                  id,
                                  seq: event.seq,
                                  text: event.data.id,
                                });
                              }
                            }
                          },
                        ),
                      { discard: true },
                    )).pipe(
                      Effect.catchTag("SessionLocked", () =>
                        Effect.sync(() => {
                          locked++;
                        })),
                    );
                },
                { discard: true },
              ),
            { concurrency: "unbounded", discard: true },
          );
          return { acks, locked };
        }),
    );
    const { acks, locked } = acknowledged;
    assert.ok(acks.length >= 2 * 3 * (600 - locked));
    // Every server's rows, read directly.
    const stored = new Map<
      string,
      { server: string; id: string; seq: number }
    >();
    for (const [i, url] of urls.entries()) {
      const rows = await sql<{ session_id: string; seq: string; line: string }>(
        url,
        "SELECT session_id, seq::text AS seq, line FROM palimpsest_events",
      );
      for (const row of rows) {
        const text = JSON.parse(row.line).data.id;
        assert.ok(!stored.has(text), `${text} is stored twice`);
        stored.set(text, {
          server: `s${i}`,
          id: row.session_id,
          seq: Number(row.seq),
        });
      }
    }
    assert.equal(stored.size, acks.length);
    const names = urls.map((_, i) => `s${i}`);
    for (const ack of acks) {
      const row = stored.get(ack.text);
      assert.deepEqual(row, {
        server: serverOfSession(ack.id, names),
        id: ack.id,
        seq: ack.seq,
      });
    }
    const byServer = await idsByServer(urls);
    for (const [server, held] of byServer) {
      // Rendezvous spreads 300 sessions about evenly.
      assert.ok(held.length > 60, `${server} holds ${held.length} sessions`);
      for (const id of held) assert.equal(serverOfSession(id, names), server);
    }
  });

  Deno.test("a fourth server takes about a quarter of the sessions on a rebalance, and all stay readable", async () => {
    const urls = await databases(4);
    const three = urls.slice(0, 3);
    const ids = Array.from({ length: 300 }, (_, i) => `m-${i}`);
    await withSharded(three, (store) =>
      Effect.forEach(
        ids,
        (id) =>
          Effect.scoped(Effect.flatMap(
            store.create(header(id)),
            (handle) =>
              store.append(handle, [user(`${id}.1`), user(`${id}.2`)]),
          )),
        { concurrency: 10, discard: true },
      ));
    const names = ["s0", "s1", "s2", "s3"];
    const moving = ids.filter((id) =>
      serverOfSession(id, names) !== serverOfSession(id, names.slice(0, 3))
    );
    assert.ok(
      Math.abs(moving.length - 75) < 30,
      `${moving.length} of 300 sessions belong to the fourth server`,
    );
    const readAll = (store: ShardedSessionStore) =>
      Effect.forEach(
        ids,
        (id) =>
          Effect.scoped(Effect.map(
            store.open(id),
            (handle) => handle.session.surface.nextSeq,
          )),
        { concurrency: 10 },
      );
    const report = await withSharded(urls, (store) =>
      Effect.gen(function* () {
        // Before the rebalance: found on the server they were stored on.
        assert.deepEqual(yield* readAll(store), ids.map(() => 2));
        assert.deepEqual(yield* store.list(), [...ids].sort());
        const report = yield* store.rebalanceSessions();
        assert.deepEqual(yield* readAll(store), ids.map(() => 2));
        for (const id of moving) {
          assert.equal(yield* store.locateSession(id), "s3");
        }
        return report;
      }));
    assert.deepEqual(report.skipped, []);
    assert.equal(report.sessions, 300);
    assert.deepEqual(report.moved.map((m) => m.id).sort(), [...moving].sort());
    for (const moved of report.moved) assert.equal(moved.to, "s3");
    const byServer = await idsByServer(urls);
    assert.deepEqual(byServer.get("s3"), [...moving].sort());
    for (const [server, held] of byServer) {
      for (const id of held) assert.equal(serverOfSession(id, names), server);
    }
    // The moved logs hold the same lines.
    const lines = await sql<{ session_id: string; line: string }>(
      urls[3] ?? "",
      "SELECT session_id, line FROM palimpsest_events ORDER BY session_id, seq",
    );
    assert.equal(lines.length, 2 * moving.length);
  });

  Deno.test("list pages over the servers in every order and size, each session once, however the servers hold them", async () => {
    const urls = await databases(3);
    const names = ["s0", "s1", "s2"];
    // Runs of ids on one server, so that a page takes a server's whole
    // page, part of it, or none of it.
    const ids = Array.from({ length: 14 }, (_, i) => `page-${i}`);
    const held = new Set(ids.map((id) => serverOfSession(id, names)));
    assert.equal(held.size, 3);
    const pages = await withSharded(urls, (store) =>
      Effect.gen(function* () {
        for (const [i, id] of ids.entries()) {
          yield* Effect.scoped(Effect.flatMap(
            store.create({ ...header(id), createdAt: (i * 5) % 14 }),
            (handle) => store.append(handle, [user(`${id}.1`)]),
          ));
        }
        const orders = [
          { by: "updated", direction: "desc" },
          { by: "updated", direction: "asc" },
          { by: "created", direction: "asc" },
          { by: "id", direction: "desc" },
        ] as const;
        const results: Array<{ whole: string[]; paged: string[] }> = [];
        for (const order of orders) {
          const whole = (yield* store.list({ order, limit: 100 })).sessions
            .map((s) => s.id);
          for (const limit of [1, 2, 3, 5]) {
            const paged: string[] = [];
            let cursor: string | undefined;
            do {
              const page: ListPage = yield* store.list(
                cursor === undefined
                  ? { order, limit }
                  : { order, limit, cursor },
              );
              assert.ok(page.sessions.length <= limit);
              paged.push(...page.sessions.map((s) => s.id));
              cursor = page.cursor;
            } while (cursor !== undefined);
            results.push({ whole, paged });
          }
        }
        const bad = yield* Effect.result(
          store.list({ cursor: "bm90IGEgY3Vyc29y" }),
        );
        return { results, bad };
      }));
    for (const { whole, paged } of pages.results) {
      assert.deepEqual([...whole].sort(), [...ids].sort());
      assert.deepEqual(paged, whole);
    }
    assert.deepEqual(pages.results[0]?.whole, [...ids].reverse());
    assert.ok(Result.isFailure(pages.bad));
    assert.equal(pages.bad.failure._tag, "InvalidListQuery");
  });

  Deno.test("a stopped move's second copy is routed around, then removed by a rebalance", async () => {
    const urls = await databases(3);
    const names = ["s0", "s1", "s2"];
    const id = "stopped-move";
    const [home, other] = [
      serverOfSession(id, names),
      names.find((n) => n !== serverOfSession(id, names)),
    ];
    const otherUrl = urls[names.indexOf(other ?? "")] ?? "";
    const result = await withSharded(urls, (store) =>
      Effect.gen(function* () {
        const session = yield* Effect.scoped(Effect.gen(function* () {
          const handle = yield* store.create(header(id));
          return (yield* store.append(handle, [user("one")])).session;
        }));
        // A move from `other` to `home` stopped after its copy: the same
        // log on both servers.
        // (The handle is closed inside the plain store's layer, which its
        // lease's release needs.)
        yield* Effect.scoped(
          Effect.gen(function* () {
            const plain = yield* SessionStore;
            return yield* plain.create(session);
          }),
        ).pipe(Effect.provide(layerPostgresStore({ url: otherUrl })));
        assert.equal(yield* store.locateSession(id), home);
        yield* store.withSession(id, (handle) =>
          store.append(handle, [user("two")]));
        const report = yield* store.rebalanceSessions();
        const reader = yield* Effect.scoped(store.open(id));
        return { report, seqs: reader.session.surface.nextSeq };
      }));
    assert.deepEqual(result.report.copiesRemoved, [{ id, servers: [other] }]);
    assert.deepEqual(result.report.skipped, []);
    assert.equal(result.seqs, 2);
    const left = await sql(otherUrl, "SELECT 1 FROM palimpsest_sessions");
    assert.equal(left.length, 0);
  });

  Deno.test("moveSession moves under the claim: refused while a writer holds it, then done; create refuses an id stored elsewhere", async () => {
    const urls = await databases(3);
    const names = ["s0", "s1", "s2"];
    const id = "to-move";
    const away = names.find((n) => n !== serverOfSession(id, names)) ?? "";
    await withSharded(urls, (store) =>
      Effect.gen(function* () {
        yield* Effect.scoped(Effect.gen(function* () {
          const handle = yield* store.create(header(id));
          yield* store.append(handle, [user("a"), user("b")]);
          const refused = yield* Effect.result(store.moveSession(id, away));
          assert.ok(Result.isFailure(refused));
          assert.equal(refused.failure._tag, "SessionLocked");
        }));
        const unknown = yield* Effect.result(store.moveSession(id, "nowhere"));
        assert.ok(Result.isFailure(unknown));
        assert.equal(unknown.failure._tag, "SessionMoveFailed");
        const moved = yield* store.moveSession(id, away);
        assert.deepEqual(moved, {
          id,
          from: serverOfSession(id, names),
          to: away,
          events: 2,
        });
        assert.equal(yield* store.locateSession(id), away);
        assert.equal((yield* store.stat(id)).locked, false);
        assert.deepEqual(yield* store.list(), [id]);
        const again = yield* Effect.result(
          Effect.scoped(store.create(header(id))),
        );
        assert.ok(Result.isFailure(again));
        assert.equal(again.failure._tag, "SessionAlreadyExists");
        yield* store.withSession(id, (handle) =>
          store.append(handle, [user("c")]));
        const events = yield* Effect.scoped(Effect.flatMap(
          store.open(id),
          (handle) =>
            store.events(handle),
        ));
        assert.deepEqual(
          events.map((e) => e.type === "user/message" ? e.data.id : e.type),
          ["a", "b", "c"],
        );
      }));
    const byServer = await idsByServer(urls);
    assert.deepEqual(byServer.get(away), [id]);
  });

  Deno.test("the extra clusters are dropped", async () => {
    const clusters = await (started ?? Promise.resolve([]));
    await Promise.all(clusters.map((cluster) => cluster.stop()));
  });
}
