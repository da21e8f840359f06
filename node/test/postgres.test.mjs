// The PostgreSQL store from the installed package
// (`@palimpsest/session/postgres`) under Node, with @effect/sql-pg from npm,
// against the server PALIMPSEST_PG_URL names (tools/with_postgres.sh starts
// one): a session written and read back, then verified by the bin.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { Effect } from "effect";
import {
  layerPostgresStore,
  parseSessionAddress,
  PostgresStore,
} from "@palimpsest/session/postgres";
import { userMessage, writeSession } from "./_events.mjs";

const url = process.env.PALIMPSEST_PG_URL;

test("a postgres:// address names a server and a session", () => {
  assert.deepEqual(parseSessionAddress("postgres://u@db/app?session=s1"), {
    kind: "postgres",
    url: "postgres://u@db/app",
    session: "s1",
  });
});

test("a session opened on PostgreSQL is written, read back and verified by the bin", async () => {
  assert.ok(url, "PALIMPSEST_PG_URL must name a server (run under tools/with_postgres.sh)");
  const id = `node-${crypto.randomUUID()}`;
  const program = Effect.gen(function* () {
    const store = yield* PostgresStore;
    yield* writeSession(store, id, [
      { type: "turn/start", data: { turn: 0 } },
      userMessage("u0", "hi", { surfaceOp: "append" }),
    ]);
    const reader = yield* store.open(id);
    return reader.session.surface.nextSeq;
  });
  const next = await Effect.runPromise(
    program.pipe(Effect.scoped, Effect.provide(layerPostgresStore({ url }))),
  );
  assert.equal(next, 2);

  const address = `${url}${url.includes("?") ? "&" : "?"}session=${id}`;
  const run = spawnSync("npx", ["--no", "--", "palimpsest", "verify", address, "--json"], {
    encoding: "utf8",
  });
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout);
  assert.equal(report.ok, true);
  assert.equal(report.events, 2);
});
