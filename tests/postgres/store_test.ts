import assert from "node:assert/strict";
import { Effect, Fiber, Result, type Scope, Stream } from "effect";
import * as fs from "node:fs";
import * as path from "node:path";
import { type ChildProcess, spawn } from "node:child_process";
import { encodeEventLine, encodeHeaderLine } from "@palimpsest/session/jsonl";
import {
  type EventDraft,
  layerJsonlStore,
  Session,
  type SessionEvent,
  type SessionHandle,
  SessionStore,
} from "@palimpsest/session";
import type { PostgresSessionStore } from "../../src/postgres/mod.ts";
import { loadPostgresSession } from "../../src/postgres/load.ts";
import {
  databaseUrl,
  postgresTest,
  querySql,
  withPgStore,
} from "../_helpers/postgres.ts";
import { thenFails } from "../_helpers/then.ts";
import { turnBatches } from "../_helpers/build.ts";
import { tempDir } from "../_helpers/store.ts";

const header = (id: string) => ({ id, createdAt: 1, isSeeded: false });
// The conformance suite's writer process, in `race` mode: it opens the
// session for writing and prints `opened` (or the error tag), appends the
// events and prints `done`, then holds the claim until stdin ends.
const writer = new URL("../store/postgres_writer.ts", import.meta.url)
  .pathname;

/** Runs a program with a PostgreSQL store over `url`. */
const withPg = <A, E>(
  url: string,
  f: (store: PostgresSessionStore) => Effect.Effect<A, E, Scope.Scope>,
  options: { readonly pageSize?: number } = {},
): Promise<A> =>
  withPgStore(url, f, { pollInterval: "100 millis", ...options });

/** {@link querySql} as a step of a program. */
const runSql = (
  url: string,
  text: string,
  params: ReadonlyArray<unknown> = [],
): Effect.Effect<ReadonlyArray<Record<string, unknown>>> =>
  Effect.promise(() => querySql(url, text, params));

/**
 * Creates session `id` with turn 0, runs `statement` behind its writer's
 * back, then appends turns 1 and 2 through the writer: the append's
 * failure, and what `after` gives on the same writer.
 */
const appendBehindBack = <A, E>(
  url: string,
  id: string,
  statement: string,
  after: (
    store: PostgresSessionStore,
    handle: SessionHandle,
  ) => Effect.Effect<A, E, Scope.Scope>,
) =>
  withPg(url, (store) =>
    Effect.gen(function* () {
      const handle = yield* store.create(header(id));
      yield* store.append(handle, [turnStart(0)]);
      yield* runSql(url, statement);
      const failed = yield* Effect.flip(
        store.append(handle, [turnStart(1), turnStart(2)]),
      );
      return { failed, after: yield* after(store, handle) };
    }));

/** The events of a few workload turns, seqs and times assigned. */
const workloadEvents = (turns: number): ReadonlyArray<SessionEvent> =>
  Effect.runSync(Effect.gen(function* () {
    let session = Session.make(header("w"));
    for (let turn = 0; turn < turns; turn++) {
      for (const batch of turnBatches(turn)) {
        session = yield* Session.appendAll(session, batch);
      }
    }
    return Result.getOrThrow(Session.events(session));
  }));

const turnStart = (turn: number): EventDraft => ({
  type: "turn/start",
  data: { turn },
});

/** A writer process appending `count` events, its stdout lines collected. */
const spawnWriter = (url: string, id: string, count: number) => {
  const child: ChildProcess = spawn(Deno.execPath(), [
    "run",
    "-A",
    writer,
    url,
    "race",
    id,
    String(count),
  ], { stdio: ["pipe", "pipe", "inherit"] });
  const lines: string[] = [];
  let buffer = "";
  child.stdout?.on("data", (data: Uint8Array) => {
    buffer += new TextDecoder().decode(data);
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    lines.push(...parts);
  });
  const closed = new Promise<void>((resolve) => child.on("close", resolve));
  /** `opened`, or why the open failed. */
  const answer = async (): Promise<string> => {
    for (;;) {
      const first = lines[0];
      if (first !== undefined) return first;
      if (child.exitCode !== null) return "exited";
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  /** `done` once the events are stored, or why the open failed. */
  const outcome = async (): Promise<string> => {
    for (;;) {
      const last = lines[lines.length - 1];
      if (last !== undefined && last !== "opened") return last;
      if (child.exitCode !== null) return "exited";
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, answer, outcome, closed };
};

postgresTest(
  "a session holds the bytes the JSONL store writes for the same events",
  async (url) => {
    const events = workloadEvents(3);
    const root = tempDir();
    await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* SessionStore;
        const handle = yield* store.create(header("same"));
        yield* store.appendEvents(handle, events);
        yield* store.close(handle);
      }).pipe(Effect.scoped, Effect.provide(layerJsonlStore({ root }))),
    );
    const file = fs.readFileSync(path.join(root, "same.jsonl"), "utf8");
    const rows = await withPg(url, (store) =>
      Effect.gen(function* () {
        const handle = yield* store.create(header("same"));
        yield* store.appendEvents(handle, events);
        yield* store.close(handle);
        return yield* runSql(
          url,
          "SELECT line FROM palimpsest_events WHERE session_id = $1 ORDER BY seq",
          ["same"],
        );
      }));
    const headRows = await querySql(
      url,
      "SELECT header FROM palimpsest_sessions WHERE id = $1",
      ["same"],
    );
    const stored = `${headRows[0]?.header}\n` +
      rows.map((row) => `${row.line}\n`).join("");
    assert.equal(stored, file);
    assert.equal(
      stored,
      encodeHeaderLine(header("same")) +
        events.map((e) => encodeEventLine(e)).join(""),
    );
  },
);

postgresTest(
  "a reopened session has every appended event, read in pages",
  async (url) => {
    const events = workloadEvents(4);
    const reopened = await withPg(
      url,
      (store) =>
        Effect.gen(function* () {
          const handle = yield* store.create(header("paged"));
          for (const event of events) {
            yield* store.appendEvents(handle, [event]);
          }
          yield* store.close(handle);
          const reader = yield* store.open("paged");
          return reader;
        }),
      { pageSize: 3 },
    );
    assert.deepEqual(
      Result.getOrThrow(Session.events(reopened.session)),
      events,
    );
    assert.equal(reopened.report.events, events.length);
    assert.equal(reopened.mode, "read");
  },
);

postgresTest(
  "a line longer than the driver's own 16 MiB bound is read back, by every connection",
  async (url) => {
    // A 20 MiB tool output: stored, then read by a reopen (the pool), by a
    // writer's open (its claim) and by loadPostgresSession (its own client).
    const big: EventDraft = {
      type: "user/message",
      surfaceOp: "append",
      data: {
        id: "u0",
        role: "user",
        content: [{ type: "text", text: "x".repeat(20 * 1024 * 1024) }],
        source: { kind: "user" },
      },
    };
    const lines = (session: Session) =>
      Result.getOrThrow(Session.events(session)).map((event) =>
        encodeEventLine(event)
      );
    const [written, reread, rewritten] = await withPg(
      url,
      (store) =>
        Effect.gen(function* () {
          const handle = yield* store.create(header("big"));
          yield* store.append(handle, [big, turnStart(0)]);
          const written = lines(handle.session);
          yield* store.close(handle);
          const reader = yield* store.open("big", { wholeLog: true });
          const writer = yield* store.open("big", {
            mode: "write",
            wholeLog: true,
          });
          return [written, lines(reader.session), lines(writer.session)];
        }),
    );
    assert.equal(written.length, 2);
    assert.ok((written[0]?.length ?? 0) > 20 * 1024 * 1024);
    assert.deepEqual(reread, written);
    assert.deepEqual(rewritten, written);
    const loaded = await Effect.runPromise(loadPostgresSession(url, "big"));
    assert.deepEqual(lines(loaded.session), written);
  },
);

postgresTest("create never overwrites a session", async (url) => {
  const { again, nextSeq } = await withPg(
    url,
    (store) =>
      Effect.gen(function* () {
        const handle = yield* store.create(header("once"));
        yield* store.append(handle, [turnStart(0)]);
        yield* store.close(handle);
        const again = yield* Effect.flip(store.create(header("once")));
        const reader = yield* store.open("once");
        return { again, nextSeq: reader.session.surface.nextSeq };
      }),
  );
  thenFails(again, "SessionAlreadyExists", { id: "once" });
  assert.equal(nextSeq, 1);
});

postgresTest(
  "a failed SQL call is a StorageError coded with its SQL state",
  async (url) => {
    // 3D000: invalid_catalog_name, the database does not exist.
    const missing = databaseUrl(
      url,
      `absent_${crypto.randomUUID().slice(0, 8)}`,
    );
    const error = await Effect.runPromise(
      Effect.flip(loadPostgresSession(missing, "s")),
    );
    // Behind PgBouncer the pooler answers for the server, with its own
    // SQL state (08P01) and the server's words.
    const failed = thenFails(error, "StorageError", {});
    assert.equal(
      failed.code,
      Deno.env.get("PALIMPSEST_PG_VIA") === "pgbouncer" ? "08P01" : "3D000",
    );
  },
);

postgresTest("ids the JSONL store refuses are refused", async (url) => {
  const refused = await withPg(url, (store) =>
    Effect.gen(function* () {
      const empty = yield* Effect.flip(store.create(header("")));
      const lone = yield* Effect.flip(store.open("\ud800", { mode: "write" }));
      const long = yield* Effect.flip(store.stat("x".repeat(300)));
      return { empty, lone, long };
    }));
  thenFails(refused.empty, "InvalidSessionId", { problem: "empty" });
  thenFails(refused.lone, "InvalidSessionId", { problem: "not-well-formed" });
  thenFails(refused.long, "InvalidSessionId", { problem: "too-long" });
});

postgresTest(
  "a second writer on another connection is locked out until the first closes",
  async (url) => {
    const seen = await withPg(url, (store) =>
      Effect.gen(function* () {
        const first = yield* store.create(header("one"));
        const second = yield* Effect.flip(store.open("one", { mode: "write" }));
        const whileHeld = yield* store.stat("one");
        yield* store.close(first);
        const afterClose = yield* store.stat("one");
        const third = yield* store.open("one", { mode: "write" });
        yield* store.append(third, [turnStart(0)]);
        return {
          second,
          held: [whileHeld.locked, afterClose.locked, third.mode],
        };
      }));
    thenFails(seen.second, "SessionLocked", { id: "one" });
    assert.deepEqual(seen.held, [true, false, "write"]);
  },
);

postgresTest(
  "SessionLocked names the holder's process, program and host, and when its lease runs out",
  async (url) => {
    const { locked, lease } = await withPg(
      url,
      (store) =>
        Effect.gen(function* () {
          yield* store.create(header("held"));
          const locked = yield* Effect.flip(
            store.open("held", { mode: "write" }),
          );
          const lease = yield* runSql(
            url,
            `SELECT (extract(epoch FROM lease_until) * 1000)::float8 AS until
             FROM palimpsest_sessions WHERE id = 'held'`,
          );
          return { locked, lease };
        }),
    );
    const until = Number(lease[0]?.until);
    const named = thenFails(locked, "SessionLocked", {
      id: "held",
      pid: Deno.pid,
      application: "palimpsest",
      client: Deno.hostname(),
    });
    // Renewed by the heartbeat meanwhile, at most.
    assert.ok(
      named.leaseUntil !== undefined && named.leaseUntil <= until &&
        until - named.leaseUntil < 15_000,
      `${named.leaseUntil} ${until}`,
    );
    // The message names them all, and nothing reads "undefined".
    assert.equal(
      named.message,
      `Session "held" is open for writing by process "${Deno.pid}" (application "palimpsest", host "${Deno.hostname()}"), whose lease runs until ${
        new Date(named.leaseUntil ?? 0).toISOString()
      } unless renewed; close that writer or open for reading`,
    );
  },
);

postgresTest(
  "a writer whose head row moved under it appends nothing and stops",
  async (url) => {
    const result = await appendBehindBack(
      url,
      "moved",
      // As a writer that took the lease over would: the head moves
      // and the lease with it.
      "UPDATE palimpsest_sessions SET next_seq = 5, lease_until = now() + interval '1 minute' WHERE id = 'moved'",
      (store, handle) => Effect.flip(store.append(handle, [turnStart(3)])),
    );
    thenFails(result.failed, "StorageError", { code: "conflict" });
    thenFails(result.after, "HandleClosed", { id: "moved" });
    const rows = await querySql(
      url,
      "SELECT seq FROM palimpsest_events WHERE session_id = 'moved'",
    );
    assert.deepEqual(rows.map((row) => Number(row.seq)), [0]);
  },
);

postgresTest(
  "a writer refuses a session of an older format version",
  async (url) => {
    const result = await withPg(url, (store) =>
      Effect.gen(function* () {
        yield* Effect.scoped(store.create(header("older")));
        yield* runSql(
          url,
          "UPDATE palimpsest_sessions SET version = 2, header = $2 WHERE id = $1",
          [
            "older",
            '{"type":"session","version":2,"id":"older","createdAt":1,"isSeeded":false}',
          ],
        );
        const refused = yield* Effect.flip(
          Effect.scoped(store.open("older", { mode: "write" })),
        );
        return { refused };
      }));
    thenFails(result.refused, "FormatTooOld", { version: 2, supported: 3 });
  },
);

postgresTest(
  "a seq already taken is a conflict and the whole batch rolls back",
  async (url) => {
    const result = await appendBehindBack(
      url,
      "taken",
      `INSERT INTO palimpsest_events (session_id, seq, line) VALUES ('taken', 2, 'x')`,
      () => Effect.void,
    );
    thenFails(result.failed, "StorageError", { code: "23505" });
    const rows = await querySql(
      url,
      "SELECT seq, line FROM palimpsest_events WHERE session_id = 'taken' ORDER BY seq",
    );
    assert.deepEqual(rows.map((row) => Number(row.seq)), [0, 2]);
    const head = await querySql(
      url,
      "SELECT next_seq FROM palimpsest_sessions WHERE id = 'taken'",
    );
    assert.equal(Number(head[0]?.next_seq), 1);
  },
);

postgresTest(
  "follow serves the committed events, then each batch as it commits",
  async (url) => {
    const seqs = await withPg(url, (store) =>
      Effect.gen(function* () {
        const handle = yield* store.create(header("live"));
        yield* store.append(handle, [turnStart(0), turnStart(1), turnStart(2)]);
        const fiber = yield* Effect.forkChild(
          Stream.runCollect(
            Stream.take(store.follow("live", { fromSeq: 1 }), 5),
          ),
        );
        yield* Effect.sleep("50 millis");
        yield* store.append(handle, [turnStart(3)]);
        yield* store.append(handle, [turnStart(4), turnStart(5)]);
        const events = yield* Fiber.join(fiber);
        return events.map((event) => event.seq);
      }));
    assert.deepEqual(seqs, [1, 2, 3, 4, 5]);
  },
);

postgresTest(
  "follow of a missing session fails SessionNotFound",
  async (url) => {
    const error = await withPg(
      url,
      (store) => Effect.flip(Stream.runCollect(store.follow("nobody"))),
    );
    thenFails(error, "SessionNotFound", { id: "nobody" });
  },
);

postgresTest(
  "a writer killed with SIGKILL loses its claim and another takes over",
  async (url) => {
    await withPg(
      url,
      (store) =>
        Effect.flatMap(store.create(header("killed")), (h) => store.close(h)),
    );
    const victim = spawnWriter(url, "killed", 3);
    assert.equal(await victim.answer(), "opened");
    victim.child.stdin?.write("go\n");
    assert.equal(await victim.outcome(), "done");
    const locked = await withPg(
      url,
      (store) => Effect.flip(store.open("killed", { mode: "write" })),
    );
    thenFails(locked, "SessionLocked", { id: "killed" });
    victim.child.kill("SIGKILL");
    await victim.closed;
    // The server ends the dead backend as soon as it reads the closed socket.
    const nextSeq = await withPg(url, (store) =>
      Effect.gen(function* () {
        for (let attempt = 0;; attempt++) {
          const opened = yield* Effect.result(
            store.open("killed", { mode: "write" }),
          );
          if (opened._tag === "Success") {
            const { session } = yield* store.append(opened.success, [
              turnStart(9),
            ]);
            return session.surface.nextSeq;
          }
          if (attempt > 100) return -1;
          yield* Effect.sleep("50 millis");
        }
      }));
    assert.equal(nextSeq, 4);
  },
);

postgresTest(
  "of 20 writer processes on one session exactly one writes, with no gap and no duplicate",
  async (url) => {
    await withPg(
      url,
      (store) =>
        Effect.flatMap(store.create(header("crowd")), (h) => store.close(h)),
    );
    const writers = Array.from(
      { length: 20 },
      () => spawnWriter(url, "crowd", 30),
    );
    // Every writer answers before the one that opened appends.
    const answers = await Promise.all(writers.map((w) => w.answer()));
    writers[answers.indexOf("opened")]?.child.stdin?.write("go\n");
    const outcomes = await Promise.all(writers.map((w) => w.outcome()));
    for (const w of writers) w.child.stdin?.end();
    await Promise.all(writers.map((w) => w.closed));
    assert.equal(outcomes.filter((o) => o === "done").length, 1);
    assert.equal(outcomes.filter((o) => o === "SessionLocked").length, 19);
    const rows = await querySql(
      url,
      "SELECT seq FROM palimpsest_events WHERE session_id = 'crowd' ORDER BY seq",
    );
    assert.deepEqual(
      rows.map((row) => Number(row.seq)),
      Array.from({ length: 30 }, (_, i) => i),
    );
    const reopened = await withPg(url, (store) => store.open("crowd"));
    assert.equal(reopened.session.surface.nextSeq, 30);
  },
);

postgresTest("list and stat read the head rows", async (url) => {
  const seen = await withPg(url, (store) =>
    Effect.gen(function* () {
      for (const id of ["b", "a", "c"]) {
        const h = yield* store.create(header(id));
        yield* store.append(h, [turnStart(0)]);
        yield* store.close(h);
      }
      const ids = yield* store.list();
      const stat = yield* store.stat("a");
      const reader = yield* store.open("a");
      const missing = yield* Effect.flip(store.stat("zz"));
      // The JSONL bytes of the session: what the store counts.
      const bytes = new TextEncoder().encode(
        encodeHeaderLine(reader.session.header) +
          Result.getOrThrow(Session.events(reader.session)).map((e) =>
            encodeEventLine(e)
          ).join(
            "",
          ),
      ).length;
      return { ids, stat, bytes, missing };
    }));
  assert.deepEqual(seen.ids, ["a", "b", "c"]);
  assert.equal(seen.stat.bytes, seen.bytes);
  assert.equal(seen.stat.locked, false);
  thenFails(seen.missing, "SessionNotFound", { id: "zz" });
});
