/**
 * The command line's core: {@link runCli} parses the arguments, runs one
 * command and writes its outcome, returning the exit code. It never exits
 * the process and never throws, so tests call it in-process.
 *
 * @module
 */
import { Cause, Effect, Exit } from "effect";
import { helpText, parseArgs } from "./args.ts";
import type { CliIo } from "./io.ts";
import { type Command, ExitCode, type Outcome } from "./outcome.ts";
import { commands } from "./commands.ts";

const PROGRAM = "palimpsest";
const PRETTY_LIMIT = 1 << 20;

const topHelp = (): string => {
  const width = Math.max(...commands.map((c) => c.spec.name.length)) + 2;
  return [
    `Usage: ${PROGRAM} <command> [options]`,
    "",
    "Inspect, check and repair palimpsest session logs (JSONL).",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.spec.name.padEnd(width)}${c.spec.summary}`),
    "",
    "Every command takes --json (one JSON document on stdout) and --help.",
    "Exit codes: 0 valid, 1 the log is invalid or was refused, 2 usage or I/O error.",
    "",
  ].join("\n");
};

const usageError = (
  io: CliIo,
  json: boolean,
  message: string,
  command: string | undefined,
): ExitCode => {
  if (json) {
    io.stdout(
      `${
        JSON.stringify({ ok: false, error: { tag: "UsageError", message } })
      }\n`,
    );
  } else {
    const help = command === undefined
      ? `run "${PROGRAM} --help" for the commands`
      : `run "${PROGRAM} ${command} --help" for its usage`;
    io.stderr(`error: ${message}\n  hint: ${help}\n`);
  }
  return ExitCode.usage;
};

const write = (io: CliIo, json: boolean, outcome: Outcome): void => {
  if (json) {
    // Indented for people when small; past 1 MiB (the messages of a long
    // log) indentation only adds bytes nobody reads.
    const compact = JSON.stringify(outcome.json);
    io.stdout(
      `${
        compact.length <= PRETTY_LIMIT
          ? JSON.stringify(outcome.json, null, 2)
          : compact
      }\n`,
    );
    return;
  }
  if (outcome.text !== "") io.stdout(outcome.text);
  if (outcome.errText !== undefined && outcome.errText !== "") {
    io.stderr(outcome.errText);
  }
};

const find = (name: string): Command | undefined =>
  commands.find((c) => c.spec.name === name);

/**
 * Runs the command line: `<command> [options]`, as `deno task cli` does.
 * Writes the command's output to `io` and returns the exit code: 0 valid,
 * 1 the log is invalid or was refused, 2 usage or I/O error.
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
  const json = args.includes("--json");
  const [name, ...rest] = args;
  if (name === undefined) {
    io.stderr(topHelp());
    return ExitCode.usage;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? rest[0] : undefined;
    const command = topic === undefined ? undefined : find(topic);
    if (topic !== undefined && command === undefined) {
      return usageError(io, json, `Unknown command "${topic}"`, undefined);
    }
    io.stdout(command === undefined ? topHelp() : helpText(command.spec));
    return ExitCode.ok;
  }
  const command = find(name);
  if (command === undefined) {
    return usageError(
      io,
      json,
      `Unknown command "${name}"; commands are ${
        commands.map((c) => `"${c.spec.name}"`).join(", ")
      }`,
      undefined,
    );
  }
  const parsed = parseArgs(command.spec, rest);
  if (parsed._tag === "Failure") {
    return usageError(io, json, parsed.failure.message, name);
  }
  if (parsed.success.flags.has("help")) {
    io.stdout(helpText(command.spec));
    return ExitCode.ok;
  }
  const exit = await Effect.runPromiseExit(command.run(parsed.success, io));
  if (Exit.isFailure(exit)) {
    const message = `Internal error in "${name}": ${Cause.pretty(exit.cause)}`;
    if (json) {
      io.stdout(
        `${
          JSON.stringify({
            ok: false,
            error: { tag: "InternalError", message },
          })
        }\n`,
      );
    } else {
      io.stderr(`error: ${message}\n  hint: this is a bug; please report it\n`);
    }
    return ExitCode.usage;
  }
  write(io, json, exit.value);
  return exit.value.code;
}
