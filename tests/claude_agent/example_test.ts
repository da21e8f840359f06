import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { denoOk } from "../_helpers/deno_run.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

Deno.test("examples/claude_agent.ts mirrors a transcript, loads it back and derives it", async () => {
  const out = await denoOk(["run", "-A", "examples/claude_agent.ts"], {
    cwd: ROOT,
  });
  assert.match(out, /loaded 4 entries, equal: true/);
  assert.match(out, /assistant: call Read\n/);
  assert.match(out, /assistant: It says: buy milk\.\n/);
});
