/**
 * The agent tools `tools/peer_tools/` pins (Claude Code, Codex, pi, opencode),
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

/** What a tool's run printed. */
export interface ToolRun {
  /** Whether it exited with 0. */
  readonly success: boolean;
  /** Its standard output. */
  readonly stdout: string;
  /** Its standard output, then its standard error. */
  readonly said: string;
}

/**
 * Runs one of the pinned tools offline, without input, for at most three
 * minutes.
 */
export const runTool = async (
  program: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: Record<string, string> },
): Promise<ToolRun> => {
  const done = await new Deno.Command(program, {
    args: [...args],
    cwd: options.cwd,
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(180_000),
  }).output();
  const stdout = new TextDecoder().decode(done.stdout);
  return {
    success: done.success,
    stdout,
    said: stdout + new TextDecoder().decode(done.stderr),
  };
};
