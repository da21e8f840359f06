/**
 * The agent tools `tools/peer_tools/` pins (Claude Code, Codex, pi),
 * installed by its `install.sh` into a scratch folder outside the
 * repository (an install whose lock matches is kept).
 *
 * @module
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Installs the pinned tools (or finds them installed); their bin folder. */
export const installTools = async (): Promise<string> => {
  const out = await new Deno.Command("bash", {
    args: [path.join(ROOT, "tools/peer_tools/install.sh")],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  assert.ok(
    out.success,
    `tools/peer_tools/install.sh failed: ${
      new TextDecoder().decode(out.stderr)
    }`,
  );
  return text.split("\n").pop() ?? "";
};
