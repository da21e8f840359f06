/**
 * The catalogue commands: `title` and `tag` write metadata a `list` then
 * shows (table and `--json`, with filters and pages), `rm` removes a
 * session and refuses a missing one.
 *
 * @module
 */
import { Effect } from "effect";
import assert from "node:assert/strict";
import * as path from "node:path";
import { makeJsonlStore } from "@palimpsest/session";
import { tempDir } from "../_helpers/store.ts";
import { cliInProcess } from "./_cli.ts";

const seeded = async (ids: ReadonlyArray<string>): Promise<string> => {
  const root = tempDir("cli-catalogue-");
  const store = Effect.runSync(makeJsonlStore({ root }));
  for (const id of ids) {
    await Effect.runPromise(Effect.scoped(Effect.flatMap(
      store.create({ id, createdAt: 0, isSeeded: false }),
      (writer) =>
        store.append(writer, [{
          type: "user/message",
          surfaceOp: "append",
          data: {
            id: "u0",
            role: "user",
            content: [{ type: "text", text: `hello from ${id}` }],
            source: { kind: "user" },
          },
        }]),
    )));
  }
  return root;
};

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null;

/** The `--json` document of a command, as a record. */
const json = (stdout: string): Record<string, unknown> => {
  const doc: unknown = JSON.parse(stdout);
  assert.ok(isRecord(doc), stdout);
  return doc;
};

/** What `list ... --json` printed: the ids, titles and cursor. */
const listed = async (...args: string[]) => {
  const run = await cliInProcess("list", ...args, "--json");
  assert.equal(run.code, 0, run.stderr);
  const doc = json(run.stdout);
  const sessions = Array.isArray(doc.sessions)
    ? doc.sessions.filter(isRecord)
    : [];
  return {
    ids: sessions.map((s) => String(s.id)),
    titles: sessions.map((s) => typeof s.title === "string" ? s.title : null),
    cursor: doc.cursor,
  };
};

Deno.test("title and tag write metadata that list shows, filters and pages", async () => {
  const root = await seeded(["a", "b", "c"]);
  const a = path.join(root, "a.jsonl");
  const titled = await cliInProcess("title", a, "Fix the build");
  assert.equal(titled.code, 0, titled.stderr);
  const tagged = await cliInProcess("tag", a, "ci,urgent");
  assert.equal(tagged.code, 0, tagged.stderr);
  assert.match(tagged.stdout, /ci, urgent/);
  const untagged = await cliInProcess("tag", a, "urgent", "--remove");
  assert.equal(untagged.code, 0, untagged.stderr);

  const table = await cliInProcess("list", root);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^ID +UPDATED +EVENTS +TITLE +TAGS$/m);
  assert.match(table.stdout, /^a +\S+ +4 +Fix the build +ci$/m);
  assert.match(table.stdout, /^b +\S+ +1 +hello from b/m);

  const filtered = await listed(root, "--tag", "ci");
  assert.deepEqual([filtered.ids, filtered.titles], [["a"], ["Fix the build"]]);
  assert.deepEqual((await listed(root, "--search", "FROM C")).ids, ["c"]);
  const page = ["--order", "id", "--asc", "--limit", "2"];
  const first = await listed(root, ...page);
  assert.deepEqual(first.ids, ["a", "b"]);
  assert.equal(typeof first.cursor, "string");
  const second = await listed(root, ...page, "--cursor", String(first.cursor));
  assert.deepEqual([second.ids, second.cursor], [["c"], null]);

  const badOrder = await cliInProcess("list", root, "--order", "size");
  assert.equal(badOrder.code, 2);
});

Deno.test("rm removes a session; a missing one exits 2", async () => {
  const root = await seeded(["a", "b"]);
  const removed = await cliInProcess(
    "rm",
    path.join(root, "b.jsonl"),
    "--json",
  );
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(json(removed.stdout).removed, "b");
  assert.deepEqual((await listed(root)).ids, ["a"]);
  const again = await cliInProcess("rm", path.join(root, "b.jsonl"));
  assert.equal(again.code, 2);
  assert.match(again.stderr, /SessionNotFound/);
  const notAStore = await cliInProcess("list", path.join(root, "nothing"));
  assert.equal(notAStore.code, 2);
});
