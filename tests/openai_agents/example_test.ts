import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { denoOk } from "../_helpers/deno_run.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

Deno.test("examples/openai_agents.ts runs offline: two runs, a pop, the log keeps it", async () => {
  const out = await denoOk(["run", "-A", "examples/openai_agents.ts"], {
    cwd: ROOT,
    env: { OPENAI_API_KEY: "" },
  });
  assert.match(out, /It is 3\.\n/);
  assert.match(out, /It is 4\.\n/);
  assert.match(out, /popped: message \(7 items left\)/);
  assert.match(out, /log: 12 events, 2 branches/);
});
