/**
 * The command line's core: {@link runCli} parses the arguments with
 * `effect/cli`, runs one command and writes its outcome, returning the exit
 * code. It never exits the process and never throws, so tests call it
 * in-process.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { secretRedactor } from "../src/store/redact.ts";
import type { CliIo } from "./io.ts";
import { runApp } from "./app.ts";
import { commands } from "./commands.ts";

/** The package version, as `--version` prints it. */
export const VERSION = "0.3.0";

/**
 * Runs the command line: `<command> [options]`, as `deno task cli` does.
 * Writes the command's output to `io` and returns the exit code: 0 valid,
 * 1 the log is invalid or was refused, 2 usage or I/O error.
 *
 * Everything written passes through {@link secretRedactor} over `args`: a
 * password in an address never reaches `io`, whichever layer echoed it.
 *
 * @param args The arguments after the program name.
 * @param io Where to write; see {@link CliIo}.
 * @returns A promise of the exit code; it never rejects.
 *
 * @example Verifying a log in-process
 * ```ts
 * import { recordingIo, runCli } from "@palimpsest/session/cli";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 * import assert from "node:assert/strict";
 *
 * const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cli-")), "s.jsonl");
 * fs.writeFileSync(file, '{"type":"session","version":3,"id":"s","createdAt":0,"isSeeded":false}\n');
 * const io = recordingIo();
 * assert.equal(await runCli(["verify", file, "--json"], io), 0);
 * assert.equal(JSON.parse(io.out()).ok, true);
 * assert.equal(await runCli(["verify"], recordingIo()), 2);
 * ```
 */
export async function runCli(
  args: ReadonlyArray<string>,
  io: CliIo,
): Promise<number> {
  const redact = secretRedactor(args);
  const guarded: CliIo = {
    stdout: (text) => io.stdout(redact(text)),
    stderr: (text) => io.stderr(redact(text)),
    stderrIsTerminal: io.stderrIsTerminal,
  };
  return await Effect.runPromise(runApp(commands, args, guarded, VERSION));
}
