/**
 * The laws of rendezvous hashing the sharded store relies on: adding a
 * server moves only sessions to it, about 1/N of them; removing one moves
 * only its own; the servers get about equal shares; the ranking's first is
 * the session's server.
 *
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  rankServers,
  rendezvousWeight,
  serverOfSession,
} from "@palimpsest/session/postgres";

const ids = (count: number, prefix: string): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

const servers = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `pg-${i}`);

Deno.test("adding a server moves about 1/N of the sessions, all to it", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 9 }),
      fc.string({ minLength: 1, maxLength: 8 }),
      (n, prefix) => {
        const before = servers(n);
        const after = [...before, "added"];
        const sessions = ids(4000, prefix);
        let moved = 0;
        for (const id of sessions) {
          const was = serverOfSession(id, before);
          const is = serverOfSession(id, after);
          if (was !== is) {
            assert.equal(is, "added");
            moved++;
          }
        }
        const fraction = moved / sessions.length;
        const expected = 1 / (n + 1);
        // 4000 draws: the standard deviation is under 0.008.
        assert.ok(
          Math.abs(fraction - expected) < 0.035,
          `moved ${fraction} of the sessions, expected about ${expected}`,
        );
      },
    ),
    { numRuns: 30 },
  );
});

Deno.test("removing a server moves only its sessions", () => {
  const all = servers(5);
  const without = all.filter((name) => name !== "pg-2");
  for (const id of ids(2000, "r")) {
    const was = serverOfSession(id, all);
    if (was !== "pg-2") assert.equal(serverOfSession(id, without), was);
  }
});

Deno.test("each of 4 servers gets about a quarter of the sessions", () => {
  const counts = new Map<string, number>();
  for (const id of ids(20000, "balance")) {
    const name = serverOfSession(id, servers(4)) ?? "";
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  assert.equal(counts.size, 4);
  for (const count of counts.values()) {
    assert.ok(Math.abs(count / 20000 - 0.25) < 0.02, `${count} of 20000`);
  }
});

Deno.test("the ranking starts with the session's server and holds every server once", () => {
  fc.assert(
    fc.property(
      fc.string(),
      fc.uniqueArray(fc.string({ minLength: 1 }), {
        minLength: 1,
        maxLength: 8,
      }),
      (id, names) => {
        const ranked = rankServers(id, names);
        assert.deepEqual([...ranked].sort(), [...names].sort());
        assert.equal(ranked[0], serverOfSession(id, names));
        assert.equal(serverOfSession(id, [...names].reverse()), ranked[0]);
      },
    ),
  );
});

Deno.test("weights are fixed values below 2^53", () => {
  // Where sessions are stored depends on these: a change is a migration.
  assert.equal(rendezvousWeight("pg-0", "chat"), 4726987140319126);
  assert.equal(rendezvousWeight("a", "b"), 3281060367760644);
  for (const id of ids(1000, "w")) {
    const weight = rendezvousWeight("pg-1", id);
    assert.ok(Number.isSafeInteger(weight) && weight >= 0);
  }
  assert.equal(serverOfSession("chat", []), undefined);
});
