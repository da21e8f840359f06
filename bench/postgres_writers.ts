/**
 * `deno task bench:pg`: the PostgreSQL store's writers side by side with
 * the release before leases, in one run, directly and through PgBouncer in
 * transaction mode (`tools/with_postgres.sh` starts a throwaway cluster and
 * the pooler beside it: `PALIMPSEST_PG_URL` names the pooler,
 * `PALIMPSEST_PG_DIRECT_URL` the server).
 *
 * - 1, 10 and 50 writers, each on a session of its own, batches of 1 and
 *   10 events, for a few seconds each: appends and events per second, and
 *   the latency of an append, p50 and p99;
 * - for the release before leases (`PALIMPSEST_BASELINE`, a commit; the
 *   0.3.0 tree by default), read from git into `.tmp/bench/baseline` and
 *   run on a database of its own; through the pooler it does not connect
 *   (its writers send startup parameters), which the table says;
 * - follow: the delay from an append's return to a follower's event, p50
 *   and p99, directly (`LISTEN`) and through the pooler (polling).
 *
 * The ratios the targets are judged by are printed last: through the
 * pooler over direct, and 50 writers now over the baseline. `--quick`
 * runs one second per case.
 *
 * @module
 */
import { Effect, Redacted, type Scope, Stream } from "effect";
import * as Fiber from "effect/Fiber";
import * as Reactivity from "effect/reactivity/Reactivity";
import { PgClient } from "@effect/sql-pg";
import { Draft, type EventDraft } from "@palimpsest/session";
import {
  makePostgresStore,
  type PostgresSessionStore,
} from "@palimpsest/session/postgres";

const quick = Deno.args.includes("--quick");
const SECONDS = quick ? 1 : 3;
const BASELINE = Deno.env.get("PALIMPSEST_BASELINE") ?? "6873b48";
const pooled = Deno.env.get("PALIMPSEST_PG_URL");
const direct = Deno.env.get("PALIMPSEST_PG_DIRECT_URL");
if (pooled === undefined || direct === undefined || pooled === direct) {
  console.error(
    "run `deno task bench:pg`: it starts a throwaway cluster and PgBouncer beside it",
  );
  Deno.exit(2);
}

/** The URL of database `name` on the server behind `url`. */
const on = (url: string, name: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
};

const admin = (statement: string) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(
    PgClient.makeClient({ url: Redacted.make(direct) }).pipe(
      Effect.provide(Reactivity.layer),
    ),
    (sql) => sql.unsafe(statement),
  )));

/** The baseline's tree, read from git into `.tmp/bench/baseline`. */
const baselineModule = async (): Promise<string> => {
  const dir = new URL("../.tmp/bench/baseline/", import.meta.url).pathname;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  const archive = new Deno.Command("git", {
    args: ["archive", BASELINE, "src"],
    stdout: "piped",
  }).outputSync();
  if (!archive.success) throw new Error(`git archive ${BASELINE} failed`);
  const tar = new Deno.Command("tar", {
    args: ["-x", "-C", dir],
    stdin: "piped",
  }).spawn();
  const writer = tar.stdin.getWriter();
  await writer.write(archive.stdout);
  await writer.close();
  await tar.status;
  return `${dir}src/postgres/mod.ts`;
};

type MakeStore = (
  options: { readonly url: string; readonly maxConnections?: number },
) => Effect.Effect<SessionStoreOps, unknown, Scope.Scope>;

/** What the bench uses of a store, alike in both releases. */
type SessionStoreOps = Pick<
  PostgresSessionStore,
  "create" | "append" | "close" | "follow"
>;

const draft = (i: number): EventDraft => Draft.user(`message ${i}`);

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

interface Figures {
  readonly appends: number;
  readonly events: number;
  readonly p50: number;
  readonly p99: number;
}

/** `writers` writers on sessions of their own, batches of `size`. */
const writersRun = (
  make: MakeStore,
  url: string,
  writers: number,
  size: number,
  tag: string,
): Promise<Figures> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function* () {
    const store = yield* make({ url, maxConnections: Math.min(writers, 20) });
    const handles = yield* Effect.forEach(
      Array.from({ length: writers }, (_, i) => i),
      (i) =>
        store.create({
          id: `${tag}-${writers}-${size}-${i}-${crypto.randomUUID()}`,
          createdAt: 0,
          isSeeded: false,
        }),
      { concurrency: 10 },
    );
    const times: number[] = [];
    const start = performance.now();
    const deadline = start + SECONDS * 1000;
    yield* Effect.forEach(
      handles,
      (handle) =>
        Effect.gen(function* () {
          let n = 0;
          while (performance.now() < deadline) {
            const batch = Array.from({ length: size }, () => draft(n++));
            const t = performance.now();
            yield* store.append(handle, batch);
            times.push(performance.now() - t);
          }
        }),
      { concurrency: "unbounded", discard: true },
    );
    const seconds = (performance.now() - start) / 1000;
    yield* Effect.forEach(handles, (h) => store.close(h), { discard: true });
    times.sort((a, b) => a - b);
    return {
      appends: times.length / seconds,
      events: (times.length * size) / seconds,
      p50: percentile(times, 0.5),
      p99: percentile(times, 0.99),
    };
  })));

/** Delays from an append's return to a follower's event, in ms. */
const followRun = (
  writeUrl: string,
  followUrl: string,
  listen: boolean,
): Promise<{ readonly p50: number; readonly p99: number }> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function* () {
    const writer = yield* makePostgresStore({ url: writeUrl });
    const reader = yield* makePostgresStore({ url: followUrl, listen });
    const id = `follow-${crypto.randomUUID()}`;
    const handle = yield* writer.create({ id, createdAt: 0, isSeeded: false });
    const returned: number[] = [];
    const delays: number[] = [];
    const rounds = quick ? 10 : 30;
    const follower = yield* Effect.forkChild(
      Stream.runForEach(
        Stream.take(reader.follow(id, { fromSeq: 0 }), rounds),
        (event) =>
          Effect.sync(() => {
            const at = returned[event.seq];
            if (at !== undefined) delays.push(performance.now() - at);
          }),
      ),
    );
    for (let i = 0; i < rounds; i++) {
      // Appends at random moments, as a model's turns come.
      yield* Effect.sleep(`${100 + Math.floor(Math.random() * 600)} millis`);
      const t = performance.now();
      yield* writer.append(handle, [draft(i)]);
      returned[i] = t;
    }
    yield* Fiber.join(follower);
    delays.sort((a, b) => a - b);
    return { p50: percentile(delays, 0.5), p99: percentile(delays, 0.99) };
  })));

const now: MakeStore = (options) => makePostgresStore(options);
const baseline: MakeStore = (await import(await baselineModule()))
  .makePostgresStore;
await admin("DROP DATABASE IF EXISTS bench_baseline WITH (FORCE)");
await admin("DROP DATABASE IF EXISTS bench_now WITH (FORCE)");
await admin("CREATE DATABASE bench_baseline");
await admin("CREATE DATABASE bench_now");

console.error(
  `load: ${
    Deno.loadavg().map((n) => n.toFixed(2)).join(" ")
  }; ${SECONDS} s a case`,
);
const rows: Array<[string, number, number, Figures | string]> = [];
const figure = new Map<string, Figures>();
for (const writers of [1, 10, 50]) {
  for (const size of [1, 10]) {
    const cases: ReadonlyArray<[string, MakeStore, string]> = [
      [`baseline ${BASELINE} direct`, baseline, on(direct, "bench_baseline")],
      ["baseline through PgBouncer", baseline, on(pooled, "bench_baseline")],
      ["now direct", now, on(direct, "bench_now")],
      ["now through PgBouncer", now, on(pooled, "bench_now")],
    ];
    for (const [name, make, url] of cases) {
      const result = await writersRun(make, url, writers, size, "w").then(
        (figures): Figures | string => figures,
        (error) => `fails: ${String(error?.message ?? error).slice(0, 60)}`,
      );
      rows.push([name, writers, size, result]);
      if (typeof result !== "string") {
        figure.set(`${name} ${writers} ${size}`, result);
      }
      console.error(
        `  ${name}, ${writers} writers, batch ${size}: ${
          typeof result === "string"
            ? result
            : `${result.appends.toFixed(0)} appends/s, ${
              result.events.toFixed(0)
            } events/s, p50 ${result.p50.toFixed(1)} ms, p99 ${
              result.p99.toFixed(1)
            } ms`
        }`,
      );
    }
  }
}
const followDirect = await followRun(
  on(direct, "bench_now"),
  on(direct, "bench_now"),
  true,
);
// The default options: the first follower's probe finds LISTEN silent
// behind the pooler, and followers poll.
const followPooled = await followRun(
  on(pooled, "bench_now"),
  on(pooled, "bench_now"),
  true,
);

const n = (x: number, d = 0) => x.toFixed(d);
console.log(
  "\n| store | writers | batch | appends/s | events/s | p50 ms | p99 ms |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const [name, writers, size, r] of rows) {
  console.log(
    typeof r === "string"
      ? `| ${name} | ${writers} | ${size} | ${r} | | | |`
      : `| ${name} | ${writers} | ${size} | ${n(r.appends)} | ${
        n(r.events)
      } | ${n(r.p50, 1)} | ${n(r.p99, 1)} |`,
  );
}
console.log(
  `\nfollow, append to event: direct (LISTEN) p50 ${
    n(followDirect.p50)
  } ms, p99 ${
    n(followDirect.p99)
  } ms; through PgBouncer (default options: polling) p50 ${
    n(followPooled.p50)
  } ms, p99 ${n(followPooled.p99)} ms (target p50 <= 250 ms)`,
);
for (const writers of [1, 10, 50]) {
  for (const size of [1, 10]) {
    const d = figure.get(`now direct ${writers} ${size}`);
    const p = figure.get(`now through PgBouncer ${writers} ${size}`);
    const b = figure.get(`baseline ${BASELINE} direct ${writers} ${size}`);
    console.log(
      `${writers} writers, batch ${size}: through the pooler / direct ${
        d && p ? n(p.events / d.events, 2) : "-"
      } (target >= 0.8); now / baseline, direct ${
        d && b ? n(d.events / b.events, 2) : "-"
      }${writers === 50 ? " (target >= 1.5)" : ""}`,
    );
  }
}
await admin("DROP DATABASE IF EXISTS bench_baseline WITH (FORCE)");
await admin("DROP DATABASE IF EXISTS bench_now WITH (FORCE)");
Deno.exit(0);
