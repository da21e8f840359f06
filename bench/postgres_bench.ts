/**
 * `deno task bench:pg`: the PostgreSQL store against the JSONL store, on
 * the standard workload, in one run (`tools/with_postgres.sh` starts a
 * throwaway cluster on loopback unless `PALIMPSEST_PG_URL` names one).
 *
 * - append latency, p50 and p99, of batches of 1 and of 4 events;
 * - opening a 100k-event session (read, decode, fold);
 * - 50 writers on 50 sessions at once: events per second;
 * - the size of the PostgreSQL tables per million events.
 *
 * `--quick` uses fewer appends and a 10k-event session (a smoke run).
 * Results also go to `.tmp/bench/postgres.json`.
 *
 * @module
 */
import { Effect, Redacted, type Scope } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as Reactivity from "effect/reactivity/Reactivity";
import { PgClient } from "@effect/sql-pg";
import {
  layerJsonlStore,
  type SessionEvent,
  SessionStore,
} from "@palimpsest/session";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { workload } from "../tests/_helpers/workload.ts";

const quick = Deno.args.includes("--quick");
const APPENDS = quick ? 100 : 1000;
const OPEN_EVENTS = quick ? 10_000 : 100_000;
const WRITERS = 50;
const WRITE_SECONDS = quick ? 2 : 5;

const base = Deno.env.get("PALIMPSEST_PG_URL");
if (base === undefined) {
  console.error(
    "PALIMPSEST_PG_URL is not set: run `deno task bench:pg`, which starts a throwaway cluster",
  );
  Deno.exit(2);
}

const admin = <A>(
  url: string,
  f: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>,
): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(
    PgClient.makeClient({ url: Redacted.make(url) }).pipe(
      Effect.provide(Reactivity.layer),
    ),
    f,
  )));

// A database of its own, so the sizes measured are this run's alone.
const database = `palimpsest_bench_${Date.now()}`;
await admin(base, (sql) => sql.unsafe(`CREATE DATABASE ${database}`));
const pgUrl = (() => {
  const u = new URL(base);
  u.pathname = `/${database}`;
  return u.toString();
})();
const root = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-bench-"));

const stores = {
  jsonl: layerJsonlStore({ root }),
  postgres: layerPostgresStore({ url: pgUrl, maxConnections: 20 }),
};
type StoreName = keyof typeof stores;

const run = <A, E>(
  name: StoreName,
  program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(program).pipe(Effect.provide(stores[name])),
  );

const events = workload({ events: OPEN_EVENTS, lines: false }).events;

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

const header = (id: string) => ({ id, createdAt: 0, isSeeded: false });

/** Latencies in ms of APPENDS batches of `size` events on one session. */
const appendLatency = (name: StoreName, size: number) =>
  run(
    name,
    Effect.gen(function* () {
      const store = yield* SessionStore;
      const handle = yield* store.create(header(`latency-${size}`));
      const times: number[] = [];
      for (let i = 0; i < APPENDS; i++) {
        const batch = events.slice(i * size, (i + 1) * size);
        const start = performance.now();
        yield* store.appendEvents(handle, batch);
        times.push(performance.now() - start);
      }
      yield* store.close(handle);
      times.sort((a, b) => a - b);
      return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
    }),
  );

/** Stores the OPEN_EVENTS workload, then times opening it (best of 3). */
const openTime = (name: StoreName) =>
  run(
    name,
    Effect.gen(function* () {
      const store = yield* SessionStore;
      const handle = yield* store.create(header("open"));
      for (let i = 0; i < events.length; i += 5000) {
        yield* store.appendEvents(handle, events.slice(i, i + 5000));
      }
      yield* store.close(handle);
      let best = Infinity;
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        const reader = yield* store.open("open");
        best = Math.min(best, performance.now() - start);
        if (reader.session.surface.nextSeq !== events.length) {
          throw new Error("The opened session is short");
        }
      }
      return best;
    }),
  );

/** WRITERS writers on WRITERS sessions for WRITE_SECONDS: events/s. */
const manyWriters = (name: StoreName) =>
  run(
    name,
    Effect.gen(function* () {
      const store = yield* SessionStore;
      const handles = yield* Effect.forEach(
        Array.from({ length: WRITERS }, (_, i) => i),
        (i) => store.create(header(`writer-${i}`)),
        { concurrency: 10 },
      );
      const deadline = performance.now() + WRITE_SECONDS * 1000;
      const start = performance.now();
      const counts = yield* Effect.forEach(
        handles,
        (handle) =>
          Effect.gen(function* () {
            let n = 0;
            while (performance.now() < deadline) {
              const event: SessionEvent | undefined = events[n];
              if (event === undefined) break;
              yield* store.appendEvents(handle, [event]);
              n++;
            }
            return n;
          }),
        { concurrency: "unbounded" },
      );
      const seconds = (performance.now() - start) / 1000;
      yield* Effect.forEach(handles, (h) => store.close(h), { discard: true });
      const total = counts.reduce((a, b) => a + b, 0);
      return total / seconds;
    }),
  );

console.error(`load: ${Deno.loadavg().map((n) => n.toFixed(2)).join(" ")}`);
const results: Record<string, number> = {};
for (const name of ["jsonl", "postgres"] as const) {
  for (const size of [1, 4]) {
    const { p50, p99 } = await appendLatency(name, size);
    results[`${name} append ${size} p50 ms`] = p50;
    results[`${name} append ${size} p99 ms`] = p99;
    console.error(
      `  ${name} append x${size}: p50 ${p50.toFixed(2)} ms, p99 ${
        p99.toFixed(2)
      } ms`,
    );
  }
  const open = await openTime(name);
  results[`${name} open ${OPEN_EVENTS} ms`] = open;
  console.error(`  ${name} open ${OPEN_EVENTS}: ${open.toFixed(0)} ms`);
  const rate = await manyWriters(name);
  results[`${name} ${WRITERS} writers events/s`] = rate;
  console.error(`  ${name} ${WRITERS} writers: ${rate.toFixed(0)} events/s`);
}

// Sizes: the tables hold the OPEN_EVENTS session plus the latency and
// writer sessions; measure the events of the big one alone.
const sizes = await admin(pgUrl, (sql) =>
  Effect.gen(function* () {
    yield* sql.unsafe("VACUUM ANALYZE palimpsest_events");
    const rows = yield* sql.unsafe<
      { events: string; lines: string; table: string; index: string }
    >(
      `SELECT count(*)::text AS events,
        sum(octet_length(line) + 1)::text AS lines,
        pg_table_size('palimpsest_events')::text AS table,
        pg_indexes_size('palimpsest_events')::text AS index
       FROM palimpsest_events`,
    );
    return rows[0];
  }));
const stored = Number(sizes?.events ?? 0);
const perMillion = (bytes: number) => (bytes / stored) * 1e6 / (1024 * 1024);
results["postgres table MiB per 1M events"] = perMillion(
  Number(sizes?.table ?? 0),
);
results["postgres index MiB per 1M events"] = perMillion(
  Number(sizes?.index ?? 0),
);
results["jsonl MiB per 1M events"] = perMillion(Number(sizes?.lines ?? 0));

await admin(
  base,
  (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
);
fs.rmSync(root, { recursive: true, force: true });

const f = (n: number | undefined, digits = 2) =>
  n === undefined ? "-" : n.toFixed(digits);
console.log(`
| measure | JSONL | PostgreSQL |
| --- | --- | --- |
| append 1 event, p50 / p99 (ms) | ${f(results["jsonl append 1 p50 ms"])} / ${
  f(results["jsonl append 1 p99 ms"])
} | ${f(results["postgres append 1 p50 ms"])} / ${
  f(results["postgres append 1 p99 ms"])
} |
| append 4 events, p50 / p99 (ms) | ${f(results["jsonl append 4 p50 ms"])} / ${
  f(results["jsonl append 4 p99 ms"])
} | ${f(results["postgres append 4 p50 ms"])} / ${
  f(results["postgres append 4 p99 ms"])
} |
| open a ${OPEN_EVENTS / 1000}k-event session (ms) | ${
  f(results[`jsonl open ${OPEN_EVENTS} ms`], 0)
} | ${f(results[`postgres open ${OPEN_EVENTS} ms`], 0)} |
| ${WRITERS} writers on ${WRITERS} sessions (events/s) | ${
  f(results[`jsonl ${WRITERS} writers events/s`], 0)
} | ${f(results[`postgres ${WRITERS} writers events/s`], 0)} |
| size per 1M events (MiB) | ${f(results["jsonl MiB per 1M events"], 0)} | ${
  f(results["postgres table MiB per 1M events"], 0)
} table + ${f(results["postgres index MiB per 1M events"], 0)} index |
`);
fs.mkdirSync(".tmp/bench", { recursive: true });
fs.writeFileSync(
  ".tmp/bench/postgres.json",
  JSON.stringify({ load: Deno.loadavg(), results }, null, 2),
);
