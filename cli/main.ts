/**
 * The `palimpsest` command line: inspect, check and repair session logs.
 *
 * ```sh
 * deno run -A jsr:@palimpsest/session/cli verify session.jsonl
 * deno task cli derive session.jsonl --json
 * ```
 *
 * Commands: `verify FILE`, `derive FILE`, `stats FILE`, `explain FILE SEQ`,
 * `migrate FILE --out NEW`, `import --from TOOL FILE --out NEW`,
 * `repair FILE [--dry-run]`, `schema`, and `help [COMMAND]`,
 * `completions bash|zsh|fish`; `--version` prints the version. Parsing,
 * help and completions are `effect/cli`'s. Every
 * command takes `--json` (one JSON document on stdout) and `--help`. Exit
 * codes: 0 valid, 1 the log is invalid or was refused, 2 usage or I/O error.
 * Reading a file of more than 4 MiB draws progress on stderr when it is a
 * terminal.
 *
 * The CLI is the application layer: it is the one place under `src/` that
 * uses the `migrations/` catalog (to read older logs) and Deno APIs; the
 * Node build leaves it out. {@link runCli} is the whole CLI as a function,
 * for calling it in-process.
 *
 * @example Running the CLI in-process
 * ```ts
 * import { recordingIo, runCli } from "@palimpsest/session/cli";
 * import assert from "node:assert/strict";
 *
 * const io = recordingIo();
 * assert.equal(await runCli(["--help"], io), 0);
 * assert.match(io.out(), /verify/);
 * ```
 *
 * @module
 */
import { blockingWriter, type CliIo } from "./io.ts";
import { runCli } from "./run.ts";

export { type CliIo, type RecordingIo, recordingIo } from "./io.ts";
export { runCli } from "./run.ts";

const writeAll = (stream: { writeSync(p: Uint8Array): number }) =>
  blockingWriter(
    (bytes, offset) => stream.writeSync(bytes.subarray(offset)),
    (error) => error instanceof Deno.errors.BrokenPipe,
  );

/**
 * The process's own output channel: Deno's stdout and stderr.
 *
 * @returns A {@link CliIo} writing to the process's streams.
 *
 * @example Writing through the process's streams
 * ```ts
 * import { processIo } from "@palimpsest/session/cli";
 *
 * processIo().stderr("");
 * ```
 */
export function processIo(): CliIo {
  return {
    stdout: writeAll(Deno.stdout),
    stderr: writeAll(Deno.stderr),
    stderrIsTerminal: Deno.stderr.isTerminal(),
  };
}

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args, processIo()));
}
