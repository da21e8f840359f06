/**
 * `deno task bench:catalogue`: `store.list(query)` over 10,000 sessions, on
 * the JSONL store and (when `PALIMPSEST_PG_URL` names a server, as
 * `tools/with_postgres.sh` does) on PostgreSQL. Each session has a title,
 * a tag of ten and a first user text. Printed per query: the median and
 * the slowest of 20 runs, in milliseconds, of a page of 50: the newest,
 * the next page by cursor, a tag filter, a search of the titles, tags and
 * first texts. For JSONL also the first `list` of a store whose index is
 * missing (rebuilt from the 10,000 files) and of a new store over a built
 * index (read from its snapshot: 20 new stores, with the median's ratio to
 * the 50 ms target).
 *
 * The sessions are written straight into the storage (files, rows), as
 * the stores would write them, to keep the setup short; the conformance
 * suite checks that the stores write the same.
 *
 * @module
 */
import { Effect, Redacted } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as Reactivity from "effect/reactivity/Reactivity";
import { PgClient } from "@effect/sql-pg";
import {
  type ListQuery,
  makeJsonlStore,
  Session,
  type SessionStore,
  setMetadata,
} from "@palimpsest/session";
import { encodeEventLine, encodeHeaderLine } from "@palimpsest/session/jsonl";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { SessionStore as SessionStoreTag } from "@palimpsest/session";

const SESSIONS = 10_000;
const RUNS = 20;
const TOPICS = ["parser", "build", "deploy", "billing", "search"];

const sessionOf = (i: number): Session =>
  Effect.runSync(Effect.gen(function* () {
    const empty = Session.make({
      id: `s${String(i).padStart(5, "0")}`,
      createdAt: 1_700_000_000_000 + i,
      isSeeded: false,
    });
    const titled = yield* setMetadata(empty, {
      title: `Session ${i} on the ${TOPICS[i % TOPICS.length]}`,
      tags: [`tag${i % 10}`],
    });
    return yield* Session.append(titled, {
      type: "user/message",
      surfaceOp: "append",
      data: {
        id: "u0",
        role: "user",
        content: [{
          type: "text",
          text: `Question ${i}: why does ${
            TOPICS[(i + 2) % TOPICS.length]
          } fail on Tuesdays?`,
        }],
        source: { kind: "user" },
      },
    });
  }));

const sessions = Array.from({ length: SESSIONS }, (_, i) => sessionOf(i));

const timed = async (f: () => Promise<unknown>): Promise<number> => {
  const start = performance.now();
  await f();
  return performance.now() - start;
};

const summary = (times: ReadonlyArray<number>): string => {
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  const max = sorted[sorted.length - 1] ?? NaN;
  return `median ${median.toFixed(1)} ms, slowest ${max.toFixed(1)} ms`;
};

const queries = (store: SessionStore) => {
  const run = (query: ListQuery) => Effect.runPromise(store.list(query));
  return {
    "newest 50": () => run({ limit: 50 }),
    "next page (cursor)": async () => {
      const first = await run({ limit: 50 });
      return run({
        limit: 50,
        ...(first.cursor === undefined ? {} : { cursor: first.cursor }),
      });
    },
    "tag filter": () => run({ limit: 50, filter: { tags: ["tag3"] } }),
    "search": () => run({ limit: 50, search: "deploy" }),
    "by id": () => run({ limit: 50, order: { by: "id", direction: "asc" } }),
  };
};

const measure = async (label: string, store: SessionStore) => {
  const page = await Effect.runPromise(
    store.list({ limit: 50, search: "deploy" }),
  );
  if (page.sessions.length !== 50) throw new Error(`${label}: a short page`);
  for (const [name, f] of Object.entries(queries(store))) {
    const times: number[] = [];
    for (let r = 0; r < RUNS; r++) times.push(await timed(f));
    console.log(`${label} ${name}: ${summary(times)}`);
  }
};

// JSONL: the files, then a store with no index, then a new store over it.
const root = fs.mkdtempSync(path.join(os.tmpdir(), "catalogue-bench-"));
for (const session of sessions) {
  const lines = [encodeHeaderLine(session.header)];
  const events = Session.events(session);
  if (events._tag !== "Success") throw new Error("events not held");
  for (const event of events.success) lines.push(encodeEventLine(event));
  fs.writeFileSync(
    path.join(root, `${session.header.id}.jsonl`),
    lines.join(""),
  );
}
const jsonl = () => Effect.runSync(makeJsonlStore({ root }));
const rebuild = jsonl();
console.log(
  `jsonl first list, index missing (rebuilt from ${SESSIONS} files): ${
    (await timed(() => Effect.runPromise(rebuild.list({ limit: 50 })))).toFixed(
      0,
    )
  } ms`,
);
// The target: a page of 50 in 50 ms, here the first of a store opened over
// the built index (as a new process's would be), a new store each run.
const TARGET_MS = 50;
const firsts: number[] = [];
for (let r = 0; r < RUNS; r++) {
  firsts.push(
    await timed(() => Effect.runPromise(jsonl().list({ limit: 50 }))),
  );
}
const firstMedian = [...firsts].sort((a, b) => a - b)[Math.floor(RUNS / 2)] ??
  NaN;
console.log(
  `jsonl first list of a new store over the index: ${summary(firsts)}; ` +
    `median ${
      (firstMedian / TARGET_MS).toFixed(2)
    }× the ${TARGET_MS} ms target`,
);
await measure("jsonl", jsonl());
fs.rmSync(root, { recursive: true, force: true });

// PostgreSQL: the rows, then the store's queries.
const url = Deno.env.get("PALIMPSEST_PG_URL");
if (url === undefined) {
  console.log(
    "postgres: skipped (PALIMPSEST_PG_URL is not set; run under tools/with_postgres.sh)",
  );
} else {
  await Effect.runPromise(
    Effect.scoped(Effect.gen(function* () {
      const store = yield* SessionStoreTag;
      // The store migrated the schema; fill the tables as its writes would.
      yield* Effect.scoped(Effect.gen(function* () {
        const sql = yield* PgClient.makeClient({ url: Redacted.make(url) })
          .pipe(
            Effect.provide(Reactivity.layer),
          );
        for (let i = 0; i < SESSIONS; i += 1000) {
          const chunk = sessions.slice(i, i + 1000);
          yield* sql.unsafe(
            `INSERT INTO palimpsest_sessions (id, version, header, next_seq, bytes, created_at, updated_at, title, tags, labels, metadata, first_text, writer_token, lease_until)
           SELECT x->>'id', 3, x->>'header', 2, 0, (x->>'createdAt')::bigint,
             now() - ((x->>'age')::int * interval '1 second'), x->>'title',
             ARRAY[x->>'tag'], '{}'::jsonb, (x->'metadata'), x->>'text',
             'bench', timestamptz 'epoch'
           FROM jsonb_array_elements($1::jsonb) x`,
            [JSON.stringify(chunk.map((s, j) => {
              const title = `Session ${i + j} on the ${
                TOPICS[(i + j) % TOPICS.length]
              }`;
              return {
                id: s.header.id,
                header: encodeHeaderLine(s.header).slice(0, -1),
                createdAt: s.header.createdAt,
                age: SESSIONS - i - j,
                title,
                tag: `tag${(i + j) % 10}`,
                metadata: {
                  title,
                  tags: [`tag${(i + j) % 10}`],
                  labels: {},
                  cwd: null,
                  values: {},
                },
                text: `Question ${i + j}: why does ${
                  TOPICS[(i + j + 2) % TOPICS.length]
                } fail on Tuesdays?`,
              };
            }))],
          );
        }
        yield* sql.unsafe("ANALYZE palimpsest_sessions");
      }));
      yield* Effect.promise(() => measure("postgres", store));
    })).pipe(Effect.provide(layerPostgresStore({ url }))),
  );
}
