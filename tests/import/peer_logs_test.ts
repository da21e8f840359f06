/**
 * The importers over the real session files other tools wrote, kept beside
 * the repository in `../shared/peer-logs/` (never copied into it): every pi,
 * Claude Code and Codex file imports, the written log reads back through the
 * library's reader (which checks every v3 rule), and after repair its
 * derived messages form a clean transcript. Prints, per file, the figures of
 * the import: events, surface size, compactions and repairs.
 */
import { readSessionFile } from "@palimpsest/session/jsonl";
import { importFile, type SourceTool } from "@palimpsest/session/import";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { assertRepairsClean } from "./_clean_transcript.ts";

const repo = fileURLToPath(new URL("../../", import.meta.url));

/** `../shared/peer-logs` from the repository root (or from a worktree's parent). */
const peerLogs = (): string => {
  const candidates = [
    path.join(repo, "..", "shared", "peer-logs"),
    path.join(repo, "..", "..", "shared", "peer-logs"),
  ];
  const found = candidates.find((c) => fs.existsSync(c));
  if (found === undefined) {
    throw new Error(
      `Expected the study logs at ${JSON.stringify(candidates[0])}`,
    );
  }
  return found;
};

const tools: ReadonlyArray<SourceTool> = ["pi", "claude-code", "codex"];

Deno.test("every study log imports, verifies and repairs to a clean transcript", async (t) => {
  const base = peerLogs();
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "import-peer-"));
  let files = 0;
  try {
    for (const tool of tools) {
      const dir = path.join(base, tool);
      for (const name of fs.readdirSync(dir).sort()) {
        if (!name.endsWith(".jsonl")) continue;
        files += 1;
        await t.step(`${tool}/${name}`, async () => {
          const target = path.join(out, `${tool}-${name}`);
          const imported = await Effect.runPromise(
            importFile(path.join(dir, name), { from: tool, out: target }),
          );
          const log = await Effect.runPromise(readSessionFile(target));
          assert.equal(log.report.tornTail, undefined);
          assert.equal(log.events.length, imported.report.events);
          const { closers, prompt } = assertRepairsClean(log.events);
          assert.ok(prompt.content.length > 0);
          const r = imported.report;
          console.log(
            `${tool}/${name}: ${r.lines} lines, ${r.events} events, surface ${r.surface}, ` +
              `${r.compactions} compactions, ${
                r.repairs +
                closers.filter((e) => e.type === "tool/result").length
              } repairs, ` +
              `${r.branches.length} branches left out, ${r.notCarried.length} not carried over`,
          );
        });
      }
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
  assert.ok(files >= 5, `expected the study files, found ${files}`);
});
