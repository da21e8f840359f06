/**
 * The importer list: the names it holds (pinned here, the one test that
 * spells them out), and what derives from it: `sourceTools`, the dispatch
 * of `importSession`, the sniffer's refusals and the command line's help.
 */
import {
  importers,
  importSession,
  isSourceTool,
  sourceTools,
} from "@palimpsest/session/import";
import { recordingIo, runCli } from "@palimpsest/session/cli";
import { Effect } from "effect";
import assert from "node:assert/strict";
import { withTempFile } from "../_helpers/temp_file.ts";

Deno.test("the importer list holds pi, claude-code, codex, opencode and gemini-cli", () => {
  assert.deepEqual(importers.map((i) => i.name), [
    "pi",
    "claude-code",
    "codex",
    "opencode",
    "gemini-cli",
  ]);
  assert.deepEqual(sourceTools, importers.map((i) => i.name));
  for (const i of importers) assert.equal(isSourceTool(i.name), true);
});

Deno.test("importSession dispatches every listed importer to its own reader", () => {
  // A palimpsest log is no importer's format: each refuses it as such,
  // which only the importer of the named tool can do.
  const log = '{"type":"session","version":3,"id":"s","createdAt":0}\n';
  withTempFile("log.jsonl", log, (file) => {
    for (const { name } of importers) {
      const refused = Effect.runSync(
        Effect.flip(importSession(file, { from: name })),
      );
      assert.equal(refused._tag, "ImportNotThisFormat", name);
      if (refused._tag === "ImportNotThisFormat") {
        assert.equal(refused.from, name);
        assert.equal(refused.looksLike, "palimpsest");
      }
    }
  });
});

Deno.test("import --help and its usage error list every importer", async () => {
  const io = recordingIo();
  await runCli(["import", "--help"], io);
  const bad = recordingIo();
  assert.equal(await runCli(["import", "--from", "vim", "x"], bad), 2);
  for (const i of importers) {
    assert.ok(io.out().includes(i.name), i.name);
    assert.ok(io.out().includes(i.description), i.description);
    assert.ok(io.out().includes(i.tool), i.tool);
  }
  assert.ok(
    bad.err().includes(importers.map((i) => i.name).join("|")),
    bad.err(),
  );
});
