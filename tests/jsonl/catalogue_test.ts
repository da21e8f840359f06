/**
 * The JSONL catalogue index: kept by the store's writes (its journal),
 * found stale and read again when the logs change by other means (a file
 * copied in, a line appended by hand), rebuilt when missing or damaged.
 *
 * @module
 */
import { Effect } from "effect";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  type ListQuery,
  makeJsonlStore,
  type SessionStore,
  setTitle,
} from "@palimpsest/session";
import { tempDir } from "../_helpers/store.ts";

const titles = async (store: SessionStore, query: ListQuery = {}) =>
  (await Effect.runPromise(store.list(query))).sessions.map((entry) => [
    entry.id,
    entry.metadata.title ?? null,
  ]);

const titled = (store: SessionStore, id: string, title: string) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function* () {
    const writer = yield* store.create({ id, createdAt: 0, isSeeded: false });
    yield* store.update(writer, (s) => setTitle(s, title));
  })));

Deno.test("the JSONL catalogue follows the store's writes through its journal", async () => {
  const root = tempDir("catalogue-");
  const store = Effect.runSync(makeJsonlStore({ root }));
  await titled(store, "a", "first");
  // No index before the first list: no journal either.
  assert.equal(fs.existsSync(path.join(root, ".catalogue.journal")), false);
  assert.deepEqual(await titles(store), [["a", "first"]]);
  assert.ok(fs.existsSync(path.join(root, ".catalogue.json")));
  await Effect.runPromise(
    store.withSession(
      "a",
      (w) => store.update(w, (s) => setTitle(s, "second")),
    ),
  );
  const journal = fs.readFileSync(
    path.join(root, ".catalogue.journal"),
    "utf8",
  );
  assert.match(journal, /"patch":\{"id":"a"/);
  // Another process (a new store) reads the snapshot and the journal.
  const other = Effect.runSync(makeJsonlStore({ root }));
  assert.deepEqual(await titles(other), [["a", "second"]]);
});

Deno.test("the JSONL catalogue finds logs changed by other means, and rebuilds a missing or damaged index", async () => {
  const root = tempDir("catalogue-");
  const store = Effect.runSync(makeJsonlStore({ root }));
  await titled(store, "a", "first");
  assert.deepEqual(await titles(store), [["a", "first"]]);
  // A log copied in by hand: the folder changed.
  fs.copyFileSync(path.join(root, "a.jsonl"), path.join(root, "b.jsonl"));
  const withB = await titles(store, { order: { by: "id", direction: "asc" } });
  assert.deepEqual(withB, [["a", "first"], ["b", "first"]]);
  // A line appended by another program: found when its entry is on a page.
  const line = JSON.stringify({
    type: "session/metadata",
    seq: 2,
    time: 0,
    data: { title: "by hand" },
    ignorable: true,
  });
  fs.appendFileSync(path.join(root, "b.jsonl"), `${line}\n`);
  assert.deepEqual(
    await titles(store, { order: { by: "id", direction: "asc" } }),
    [["a", "first"], ["b", "by hand"]],
  );
  // A file removed by hand.
  fs.unlinkSync(path.join(root, "a.jsonl"));
  assert.deepEqual(await titles(store), [["b", "by hand"]]);
  // A damaged snapshot, then a missing one: rebuilt from the logs.
  fs.writeFileSync(path.join(root, ".catalogue.json"), "{not json");
  assert.deepEqual(await titles(Effect.runSync(makeJsonlStore({ root }))), [[
    "b",
    "by hand",
  ]]);
  fs.unlinkSync(path.join(root, ".catalogue.json"));
  fs.unlinkSync(path.join(root, ".catalogue.journal"));
  assert.deepEqual(await titles(Effect.runSync(makeJsonlStore({ root }))), [[
    "b",
    "by hand",
  ]]);
});
