import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { recordingIo, runCli } from "@palimpsest/session/cli";
import { claimsOf } from "../_helpers/store.ts";
import { denoOk } from "../_helpers/deno_run.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

Deno.test("deno task demo crashes mid-tool, repairs, compacts and writes a log the CLI accepts", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-demo-test-"));
  const printed = await denoOk([
    "run",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-run",
    path.join(root, "examples", "agent_session.ts"),
    "--dir",
    dir,
  ], {
    cwd: root,
    // The scripted model: no provider key reaches the demo.
    env: { ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" },
  });
  assert.match(printed, /Model: scripted demo-1/);
  assert.match(printed, /child exited with SIGKILL/);
  // The kill leaves the writer's claim file, and the reopen removes it.
  assert.match(
    printed,
    /left \d+ bytes and 1 writer claim file \(demo-session\.jsonl\.lock\.[0-9a-f-]{36}\)/,
  );
  assert.match(printed, /the dead writer's claim was proven dead and removed/);
  assert.match(printed, /tool\/result for call-\S+: TOOL_OUTCOME_UNKNOWN/);
  // The restart called runTurn alone, and it closed the crashed turn first.
  assert.match(printed, /closed first: seq \d+ turn\/end/);
  assert.match(printed, /compaction\/summary \(standing for seqs/);
  assert.match(printed, /12 passed, 0 failed/);
  assert.match(printed, /transcript check: clean/);
  assert.match(
    printed,
    /in Anthropic shape[^]*"type": "tool_use"[^]*"type": "tool_result"/,
  );
  assert.match(
    printed,
    /in OpenAI Chat Completions shape[^]*"tool_calls"[^]*"role": "tool"/,
  );
  const file = path.join(dir, "demo-session.jsonl");
  assert.deepEqual(claimsOf(file), []);

  const verify = recordingIo();
  assert.equal(await runCli(["verify", file, "--json"], verify), 0);
  const report = JSON.parse(verify.out());
  assert.equal(report.ok, true);
  assert.equal(report.tornTail, undefined);
  assert.equal(report.replacements, 1);

  const stats = recordingIo();
  assert.equal(await runCli(["stats", file, "--json"], stats), 0);
  const counts = JSON.parse(stats.out());
  assert.equal(counts.compactions.count, 1);
  assert.equal(counts.eventsByType["turn/end"], 2);

  const repair = recordingIo();
  assert.equal(
    await runCli(["repair", file, "--dry-run", "--json"], repair),
    0,
  );
  assert.deepEqual(JSON.parse(repair.out()).closers, []);
  assert.deepEqual(JSON.parse(repair.out()).transcriptViolations, []);
});
