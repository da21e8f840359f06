// Tests of the installed package's persistence under Node: a JSONL session
// written and read through the store (`@palimpsest/session`,
// `@palimpsest/session/jsonl`), a torn tail cut and repaired, and an old log
// migrated (`@palimpsest/session/migrations`).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Effect } from "effect";
import { checkTranscript, deriveMessages, layerJsonlStore, SessionStore } from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import { readSessionFile } from "@palimpsest/session/jsonl";
import { migrateFile } from "@palimpsest/session/migrations";
import { assistantMessage, text, userMessage, writeJsonlSession } from "./_events.mjs";

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-node-"));

const firstTurn = [
  { type: "turn/start", data: { turn: 0 } },
  { type: "step/start", data: { turn: 0, step: 0 } },
  userMessage("u0", "hi", { surfaceOp: "append" }),
  assistantMessage("a0", [
    ...text("listing"),
    { type: "tool-call", id: "c1", name: "ls", arguments: "{}" },
  ]),
  {
    type: "tool/call",
    data: { turn: 0, step: 0, callId: "c1", name: "ls", arguments: "{}" },
  },
];

const run = (root, program) =>
  Effect.runPromise(
    Effect.scoped(program).pipe(Effect.provide(layerJsonlStore({ root }))),
  );

test("writes and reads a JSONL session through the store under Node", async () => {
  const root = tempDir();
  const file = await writeJsonlSession(root, "node-chat", firstTurn);
  const lines = fs.readFileSync(file, "utf8").split("\n");
  assert.equal(JSON.parse(lines[0]).version, 3);
  assert.equal(lines.length, firstTurn.length + 2);

  const log = await Effect.runPromise(readSessionFile(file));
  assert.equal(log.version, 3);
  assert.equal(log.events.length, firstTurn.length);
  assert.deepEqual(surfaceNodes(log.session.surface), [2, 3]);
  assert.equal(log.report.tornTail, undefined);
});

test("cuts a torn tail and repairs the open turn under Node", async () => {
  const root = tempDir();
  const file = await writeJsonlSession(root, "crash", firstTurn);
  fs.appendFileSync(file, '{"type":"tool/result","seq":5,');
  const torn = await Effect.runPromise(readSessionFile(file));
  assert.equal(torn.report.tornTail?.bytes, 30);

  const closers = await run(
    root,
    Effect.gen(function* () {
      const store = yield* SessionStore;
      const writer = yield* store.open("crash", { mode: "write" });
      const repaired = yield* store.repair(writer);
      yield* store.close(writer);
      return repaired.closers.map((e) => e.type);
    }),
  );
  assert.deepEqual(closers, ["tool/result", "step/end", "turn/end"]);
  const log = await Effect.runPromise(readSessionFile(file));
  assert.equal(log.report.tornTail, undefined);
  assert.deepEqual(checkTranscript(deriveMessages(log.session.surface)), []);
});

test("migrates a v2 log to a new v3 file under Node", async () => {
  const dir = tempDir();
  const source = path.join(dir, "old.jsonl");
  const original = [
    '{"type":"session","version":2,"id":"old","createdAt":0,"isSeeded":false}',
    '{"type":"turn/start","seq":0,"time":1,"data":{"turn":0}}',
    "",
  ].join("\n");
  fs.writeFileSync(source, original);
  const summary = await Effect.runPromise(migrateFile(source));
  assert.equal(summary.fromVersion, 2);
  assert.equal(fs.readFileSync(source, "utf8"), original);
  const log = await Effect.runPromise(readSessionFile(summary.target));
  assert.equal(log.version, 3);
  const again = await Effect.runPromise(Effect.flip(migrateFile(source)));
  assert.equal(again._tag, "TargetExists");
});
