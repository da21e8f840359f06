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

/** Past the file system's clock tick (a few ms; 50 to be sure). */
const laterTick = (): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, 50));

Deno.test("the JSONL catalogue finds logs changed by other means, and rebuilds a missing or damaged index", async () => {
  const root = tempDir("catalogue-");
  const store = Effect.runSync(makeJsonlStore({ root }));
  await titled(store, "a", "first");
  assert.deepEqual(await titles(store), [["a", "first"]]);
  // A file made in the instant the index recorded the folder's time waits
  // for the folder's next change (the module says so): the changes by hand
  // below come a clock tick later, as another program's would.
  await laterTick();
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
  await laterTick();
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

Deno.test("a store over a built index sees what other stores wrote since, and reads a damaged record's line from its log", async () => {
  const root = tempDir("catalogue-");
  const writer = Effect.runSync(makeJsonlStore({ root }));
  for (const id of ["a", "b", "c"]) await titled(writer, id, `first ${id}`);
  const byId: ListQuery = { order: { by: "id", direction: "asc" } };
  // Built (from the logs) and written as a snapshot by the first list.
  await titles(writer, byId);
  const reader = Effect.runSync(makeJsonlStore({ root }));
  assert.deepEqual(await titles(reader, { ...byId, limit: 1 }), [[
    "a",
    "first a",
  ]]);
  // Written by another store after the reader read the snapshot's head:
  // a record the reader has not read yet, and a new session.
  await Effect.runPromise(
    writer.withSession("b", (w) => writer.update(w, (s) => setTitle(s, "b2"))),
  );
  await titled(writer, "d", "first d");
  assert.deepEqual(await titles(reader, byId), [
    ["a", "first a"],
    ["b", "b2"],
    ["c", "first c"],
    ["d", "first d"],
  ]);
  // A record's line damaged in a snapshot whose head is whole: that
  // record comes from its log, on a page and in a search.
  const snapshot = path.join(root, ".catalogue.json");
  const text = fs.readFileSync(snapshot, "utf8");
  const line = text.split("\n").findIndex((l) => l.includes('"id":"c"'));
  assert.ok(line > 0);
  fs.writeFileSync(
    snapshot,
    text.split("\n").map((l, i) => i === line ? l.replace("{", "#") : l)
      .join("\n"),
  );
  const fresh = () => Effect.runSync(makeJsonlStore({ root }));
  assert.deepEqual((await titles(fresh(), byId))[2], ["c", "first c"]);
  assert.deepEqual(await titles(fresh(), { search: "first c" }), [[
    "c",
    "first c",
  ]]);
});

Deno.test("a search on a store over a built index of many sessions reads every record", async () => {
  const root = tempDir("catalogue-");
  const writer = Effect.runSync(makeJsonlStore({ root }));
  const ids = Array.from({ length: 220 }, (_, i) => `s${100 + i}`);
  for (const id of ids) await titled(writer, id, `title ${id}`);
  await titles(writer);
  const reader = Effect.runSync(makeJsonlStore({ root }));
  const found = await titles(reader, {
    search: "title s2",
    order: { by: "id", direction: "asc" },
    limit: 1000,
  });
  assert.deepEqual(
    found,
    ids.filter((id) => id.startsWith("s2")).map((id) => [id, `title ${id}`]),
  );
});
