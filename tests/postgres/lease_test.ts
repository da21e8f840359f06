/**
 * The writer's lease on PostgreSQL: exactly one writer commits, explored
 * over every interleaving of two writers' statements (the store's own SQL,
 * on two connections, a blocked statement left waiting while the other
 * writer goes on); a lease that runs out is taken over and its old writer
 * fenced; a heartbeat keeps an idle writer's lease; `breakLease`; and a
 * database of the release before leases, migrated, refuses that release's
 * writes while its sessions read and write on.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Effect, Exit, Redacted, Scope } from "effect";
import * as Reactivity from "effect/reactivity/Reactivity";
import { PgClient } from "@effect/sql-pg";
import { makePostgresStore } from "../../src/postgres/mod.ts";
import {
  appendStatement,
  claimStatement,
  MORE_ROWS_STATEMENT,
} from "../../src/postgres/lease.ts";
import { postgresTest, serverUrl } from "../_helpers/postgres.ts";
import { thenFails } from "../_helpers/then.ts";
import { rowsOf, sqlState } from "../../src/postgres/rows.ts";
import { Session } from "@palimpsest/session";
import {
  batch,
  closeDirect,
  header,
  run,
  sql,
  storedTurns,
} from "../_helpers/fault_store.ts";

/** A connection of its own, with the scope that closes it. */
const connect = async (url: string) => {
  const scope = Effect.runSync(Scope.make());
  const client = await Effect.runPromise(Scope.provide(
    PgClient.makeClient({ url: Redacted.make(url) }).pipe(
      Effect.provide(Reactivity.layer),
    ),
    scope,
  ));
  return {
    client,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
  };
};

/** A writer's step: a statement, and what it returned (rows) or threw. */
type Step = (client: PgClient.PgClient) => Promise<number>;

const statement =
  (text: string, params: ReadonlyArray<unknown>): Step => (client) =>
    Effect.runPromise(client.unsafe(text, [...params])).then((rows) =>
      rows.length
    );

/** The line of event `seq` of writer `who`. */
const line = (who: string, seq: number) =>
  JSON.stringify({ who, seq, type: "note" });

/**
 * Writer A (token `a`) appends seqs 0..2 as a transaction (the first
 * statement moves the head and renews the lease, a second inserts the
 * last row); writer B lets A's lease run out (as a pause of A's would),
 * claims the session with token `b`, and appends one event in one
 * statement at the head it read.
 */
const stepsOf = (id: string) => {
  const append = appendStatement(false);
  const a: ReadonlyArray<readonly [string, Step]> = [
    ["a:BEGIN", statement("BEGIN", [])],
    [
      "a:append 0-1",
      statement(append, [id, 0, 3, 0, "a", 60, [0, 1], [
        line("a", 0),
        line("a", 1),
      ], null]),
    ],
    ["a:append 2", statement(MORE_ROWS_STATEMENT, [id, [2], [line("a", 2)]])],
    ["a:COMMIT", statement("COMMIT", [])],
  ];
  const b: ReadonlyArray<readonly [string, Step]> = [
    // A pauses past its lease (a GC pause, a partition).
    [
      "b:lease runs out",
      statement(
        `UPDATE palimpsest_sessions SET lease_until = now() - interval '1 second' WHERE id = $1`,
        [id],
      ),
    ],
    ["b:claim", statement(claimStatement(false), [id, "b", "b", 60])],
    ["b:append", async (client) => {
      const head = await Effect.runPromise(
        client.unsafe<{ next_seq: bigint | number }>(
          "SELECT next_seq FROM palimpsest_sessions WHERE id = $1",
          [id],
        ),
      );
      const from = Number(head[0]?.next_seq ?? 0);
      return statement(append, [id, from, from + 1, 0, "b", 60, [from], [
        line("b", from),
      ], null])(client);
    }],
  ];
  return { a, b };
};

/** Every way to interleave `m` steps of A with `n` of B, as A/B choices. */
const interleavings = (m: number, n: number): ReadonlyArray<string> =>
  m === 0 ? ["B".repeat(n)] : n === 0 ? ["A".repeat(m)] : [
    ...interleavings(m - 1, n).map((rest) => `A${rest}`),
    ...interleavings(m, n - 1).map((rest) => `B${rest}`),
  ];

/** Whether a connection's statement waits for a lock. */
const waiting = async (url: string, pid: number) =>
  (await sql(
    url,
    "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
    [pid],
  )).length > 0;

postgresTest(
  "over every interleaving of two writers' statements, exactly one writer commits at each seq, and a writer whose lease was taken over never does",
  async (pooled) => {
    // On the server itself: a waiting statement is found by its server
    // process, which a pooler would hand another statement to.
    const url = serverUrl(pooled);
    await run(Effect.asVoid(makePostgresStore({ url })));
    const orders = interleavings(4, 3);
    const outcomes = new Map<string, number>();
    for (const [k, order] of orders.entries()) {
      const id = `race-${k}`;
      // A holds the session, as its claim left it.
      await sql(
        url,
        `INSERT INTO palimpsest_sessions (id, version, header, next_seq, bytes, created_at, writer_token, writer, lease_until)
         VALUES ($1, 3, '{}', 0, 0, 0, 'a', 'a', now() + interval '1 minute')`,
        [id],
      );
      const { a, b } = stepsOf(id);
      const writers = { A: await connect(url), B: await connect(url) };
      const pids = {
        A: Number(
          (await Effect.runPromise(
            writers.A.client.unsafe<{ pid: number }>(
              "SELECT pg_backend_pid() AS pid",
            ),
          ))[0]?.pid,
        ),
        B: Number(
          (await Effect.runPromise(
            writers.B.client.unsafe<{ pid: number }>(
              "SELECT pg_backend_pid() AS pid",
            ),
          ))[0]?.pid,
        ),
      };
      const queue = { A: [...a], B: [...b] };
      const pending: Partial<Record<"A" | "B", Promise<unknown>>> = {};
      const trace: string[] = [];
      const results: Record<string, number | string> = {};
      const issue = (who: "A" | "B") => {
        const next = queue[who].shift();
        if (next === undefined) return;
        const [name, step] = next;
        trace.push(name);
        pending[who] = step(writers[who].client).then(
          (rows) => {
            results[name] = rows;
            // As the store does: a first statement that matched nothing
            // (the token or the head) ends the transaction.
            if (name === "a:append 0-1" && rows === 0) {
              queue.A = [["a:ROLLBACK", statement("ROLLBACK", [])]];
            }
          },
          (error) => {
            results[name] = String(error?.cause?.cause?.code ?? error);
            // A failed statement ends the writer's transaction.
            if (name.startsWith("a:") && name !== "a:COMMIT") {
              queue.A = [["a:ROLLBACK", statement("ROLLBACK", [])]];
            }
          },
        );
      };
      for (const who of order) {
        const w = who === "A" ? "A" : "B";
        const other = w === "A" ? "B" : "A";
        // A writer whose statement waits for a lock cannot issue another:
        // the other goes on instead (its turn is taken out of order).
        const current = pending[w];
        if (current !== undefined) {
          const done = await Promise.race([
            current.then(() => true),
            new Promise<boolean>((resolve) =>
              setTimeout(() => resolve(false), 150)
            ),
          ]);
          if (!done && await waiting(url, pids[w])) {
            issue(other);
            await Promise.race([
              pending[other],
              new Promise((resolve) => setTimeout(resolve, 150)),
            ]);
            continue;
          }
          await current;
        }
        issue(w);
      }
      // Everything left runs to its end, in order.
      for (const who of ["A", "B", "A", "B"] as const) {
        await pending[who];
        while (queue[who].length > 0) {
          issue(who);
          await pending[who];
        }
      }
      await Promise.all([pending.A, pending.B]);
      const rows = await sql(
        url,
        "SELECT seq, line FROM palimpsest_events WHERE session_id = $1 ORDER BY seq",
        [id],
      );
      const head = (await sql(
        url,
        "SELECT next_seq, writer_token FROM palimpsest_sessions WHERE id = $1",
        [id],
      ))[0];
      const seqs = rows.map((row) => Number(row.seq));
      const whos = rows.map((row) => JSON.parse(String(row.line)).who);
      const where = `${order} (${trace.join(", ")}): ${
        JSON.stringify(results)
      }`;
      // Dense seqs, the head after them, one writer's batch whole or absent.
      assert.deepEqual(seqs, seqs.map((_, i) => i), where);
      assert.equal(Number(head?.next_seq), seqs.length, where);
      const aRows = whos.filter((w) => w === "a").length;
      assert.ok(aRows === 0 || aRows === 3, where);
      // B holds the session exactly when its claim matched (A's lease had
      // run out and A had not renewed it since), and then its append is
      // stored once; else it stores nothing.
      const claimed = results["b:claim"] === 1;
      assert.equal(head?.writer_token, claimed ? "b" : "a", where);
      assert.equal(
        whos.filter((w) => w === "b").length,
        claimed ? 1 : 0,
        where,
      );
      // A writer whose lease was taken over before its statement ran never
      // commits: A's rows are there only when its batch moved the head
      // before B's claim (B's claim then waited for A's COMMIT).
      const aFirst = trace.indexOf("a:append 0-1") < trace.indexOf("b:claim");
      if (aRows === 3) assert.ok(aFirst || !claimed, where);
      if (claimed && !aFirst) assert.equal(aRows, 0, where);
      const shape = whos.join("");
      outcomes.set(shape, (outcomes.get(shape) ?? 0) + 1);
      await writers.A.close();
      await writers.B.close();
    }
    console.log(
      `lease interleavings: ${orders.length} orders of 4 + 3 statements; outcomes ${
        JSON.stringify(Object.fromEntries(outcomes))
      }`,
    );
    // Every outcome happens: A before B's claim, A fenced by it, and B
    // refused because A renewed its lease first.
    assert.deepEqual([...outcomes.keys()].sort(), ["aaa", "aaab", "b"]);
    await closeDirect(url);
  },
);

postgresTest(
  "a lease that runs out is taken over; its old writer is fenced, and an idle writer's heartbeat keeps its own",
  async (url) => {
    const seen = await run(Effect.gen(function* () {
      const old = yield* makePostgresStore({ url, lease: "1 second" });
      const next = yield* makePostgresStore({ url, lease: "1 second" });
      const first = yield* old.create(header("taken"));
      yield* old.append(first, batch(1, 1));
      // Idle for three leases: the heartbeat renews it.
      yield* Effect.sleep("3 seconds");
      const held = yield* Effect.flip(next.open("taken", { mode: "write" }));
      const locked = (yield* next.stat("taken")).locked;
      // The old writer pauses past its lease (its heartbeat stopped): the
      // next writer takes the session, and the old one can never commit.
      yield* Effect.promise(() =>
        sql(
          url,
          "UPDATE palimpsest_sessions SET lease_until = now() - interval '1 second' WHERE id = 'taken'",
        )
      );
      const second = yield* next.open("taken", { mode: "write" });
      const fenced = yield* Effect.flip(old.append(first, batch(2, 1)));
      yield* next.append(second, batch(3, 1));
      return { held, locked, fenced };
    }));
    thenFails(seen.held, "SessionLocked", { id: "taken" });
    assert.equal(seen.locked, true);
    thenFails(seen.fenced, "WriterClaimLost", { id: "taken" });
    assert.deepEqual(await storedTurns(url, "taken"), [10, 30]);
    await closeDirect(url);
  },
);

postgresTest(
  "breakLease frees a live writer's session at once, and that writer is fenced",
  async (url) => {
    const seen = await run(Effect.gen(function* () {
      const store = yield* makePostgresStore({ url });
      const writer = yield* store.create(header("broken"));
      const live = yield* store.breakLease("broken");
      const again = yield* store.breakLease("broken");
      const next = yield* store.open("broken", { mode: "write" });
      const fenced = yield* Effect.flip(store.append(writer, batch(1, 1)));
      yield* store.append(next, batch(2, 1));
      const missing = yield* Effect.flip(store.breakLease("nobody"));
      return { live, again, fenced, missing };
    }));
    assert.deepEqual([seen.live, seen.again], [true, false]);
    thenFails(seen.fenced, "WriterClaimLost", { id: "broken" });
    thenFails(seen.missing, "SessionNotFound", { id: "nobody" });
    assert.deepEqual(await storedTurns(url, "broken"), [20]);
    await closeDirect(url);
  },
);

/** The stored line of a turn start at `seq` (of turn `seq`). */
const turnLine = (seq: number): string => {
  const session = Effect.runSync(
    Session.appendAll(
      Session.make(header("old")),
      Array.from({ length: seq + 1 }, (_, turn) => ({
        type: "turn/start" as const,
        data: { turn },
      })),
    ),
  );
  return rowsOf(session, seq).rows[0]?.line ?? "";
};

/** What the release before leases ran for an append, as it ran it. */
const appendBeforeLeases = async (url: string, id: string, seq: number) => {
  const { client, close } = await connect(url);
  try {
    return await Effect.runPromise(
      Effect.gen(function* () {
        yield* client.unsafe("BEGIN");
        yield* client.unsafe(
          "SELECT next_seq FROM palimpsest_sessions WHERE id = $1 FOR UPDATE",
          [id],
        );
        yield* client.unsafe(
          "INSERT INTO palimpsest_events (session_id, seq, line) VALUES ($1, $2, $3)",
          [id, seq, turnLine(seq)],
        );
        yield* client.unsafe(
          "UPDATE palimpsest_sessions SET next_seq = $2, bytes = bytes + 1, updated_at = now() WHERE id = $1",
          [id, seq + 1],
        );
        yield* client.unsafe("COMMIT");
        return "stored";
      }).pipe(
        Effect.catch((error) =>
          Effect.as(
            Effect.ignore(client.unsafe("ROLLBACK")),
            `refused ${sqlState(error)}`,
          )
        ),
      ),
    );
  } finally {
    await close();
  }
};

postgresTest(
  "a database of the release before leases migrates: its sessions read and write on, and that release's writes are refused",
  async (url) => {
    // As that release left it: no lease columns, no trigger, no record.
    await run(Effect.asVoid(makePostgresStore({ url })));
    await sql(
      url,
      "DROP TRIGGER palimpsest_require_lease ON palimpsest_sessions",
    );
    await sql(
      url,
      "ALTER TABLE palimpsest_sessions DROP COLUMN writer_token, DROP COLUMN lease_until, DROP COLUMN writer",
    );
    // (The migrator runs only what comes after the newest it recorded.)
    await sql(url, "DELETE FROM palimpsest_migrations WHERE migration_id >= 3");
    await sql(
      url,
      `INSERT INTO palimpsest_sessions (id, version, header, next_seq, bytes, created_at)
       VALUES ('old', 3, $1, 0, 0, 1)`,
      [JSON.stringify({
        type: "session",
        version: 3,
        id: "old",
        createdAt: 1,
        isSeeded: false,
      })],
    );
    // Before the migration, that release's writer writes.
    assert.equal(await appendBeforeLeases(url, "old", 0), "stored");
    await closeDirect(url);
    const seen = await run(Effect.gen(function* () {
      const store = yield* makePostgresStore({ url });
      const writer = yield* store.open("old", { mode: "write" });
      const before = writer.session.surface.nextSeq;
      yield* store.append(writer, batch(2, 1));
      return { before };
    }));
    assert.equal(seen.before, 1);
    // After it, that release's writer is refused, with a message that says
    // why; nothing of its batch is stored.
    const refused = await appendBeforeLeases(url, "old", 2);
    assert.equal(refused, "refused 55000");
    const rows = await sql(
      url,
      "SELECT seq FROM palimpsest_events WHERE session_id = 'old' ORDER BY seq",
    );
    assert.deepEqual(rows.map((row) => Number(row.seq)), [0, 1]);
    await closeDirect(url);
  },
);
