// Smoke tests of the Node build's PostgreSQL store: the module loads with
// @effect/sql-pg from npm, and, when PALIMPSEST_PG_URL names a server, a
// session is written and read back through it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Effect } from "effect";
import {
  layerPostgresStore,
  parseSessionAddress,
  PostgresStore,
} from "../dist/src/postgres/mod.js";

test("a postgres:// address names a server and a session", () => {
  assert.deepEqual(parseSessionAddress("postgres://u@db/app?session=s1"), {
    kind: "postgres",
    url: "postgres://u@db/app",
    session: "s1",
  });
});

const url = process.env.PALIMPSEST_PG_URL;
test("a session written through the store reads back", { skip: url === undefined }, async () => {
  const id = `node-${crypto.randomUUID()}`;
  const program = Effect.gen(function* () {
    const store = yield* PostgresStore;
    const writer = yield* store.create({ id, createdAt: 0, isSeeded: false });
    yield* store.append(writer, [{ type: "turn/start", data: { turn: 0 } }]);
    yield* store.close(writer);
    const reader = yield* store.open(id);
    return reader.session.surface.nextSeq;
  });
  const next = await Effect.runPromise(
    program.pipe(Effect.scoped, Effect.provide(layerPostgresStore({ url }))),
  );
  assert.equal(next, 1);
});
