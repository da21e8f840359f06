// The importers from the installed package (`@palimpsest/session/import`)
// under Node: a pi session file becomes a palimpsest session.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Effect } from "effect";
import { deriveMessages } from "@palimpsest/session";
import { importSession, isSourceTool } from "@palimpsest/session/import";

test("imports a pi session under Node", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-node-import-"));
  const file = path.join(dir, "pi.jsonl");
  fs.writeFileSync(file, [
    '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}',
    '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}',
    '{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"anthropic","model":"m","stopReason":"stop"}}',
    "",
  ].join("\n"));
  assert.equal(isSourceTool("pi"), true);
  const imported = await Effect.runPromise(importSession(file, { from: "pi" }));
  assert.deepEqual(deriveMessages(imported.session.surface).map((m) => m.id), ["a1", "a2"]);
  assert.equal(imported.report.openTurn, false);
});
