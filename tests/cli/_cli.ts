/**
 * Helpers of the CLI tests: run the real CLI as a subprocess or in-process,
 * locate fixtures, copy them to a temp folder.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { recordingIo, runCli } from "@palimpsest/session/cli";

/** The repository root. */
export const root: string = fileURLToPath(new URL("../../", import.meta.url));

/** The path of a fixture of `tests/fixtures/cli/`. */
export const fixture = (name: string): string =>
  path.join(root, "tests", "fixtures", "cli", name);

/** What a run printed and returned. */
export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `cli/main.ts` under `deno run` with exactly `flags` and waits for it. */
export async function cliWith(
  flags: ReadonlyArray<string>,
  ...args: string[]
): Promise<Run> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, path.join(root, "cli", "main.ts"), ...args],
    cwd: root,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/**
 * The permission flags of the `cli` task of deno.json, checked to be the
 * words between `deno run` and `cli/main.ts`.
 */
export const cliTaskFlags = (): ReadonlyArray<string> => {
  const config = JSON.parse(
    fs.readFileSync(path.join(root, "deno.json"), "utf8"),
  );
  const task: string = config.tasks.cli;
  const words = task.split(/\s+/);
  assert.deepEqual(words.slice(0, 2), ["deno", "run"]);
  assert.equal(words[words.length - 1], "cli/main.ts");
  return words.slice(2, -1);
};

/** Runs `deno run -A cli/main.ts ...args` and waits for it. */
export function cli(...args: string[]): Promise<Run> {
  return cliWith(["-A"], ...args);
}

/** Runs the CLI in this process. */
export async function cliInProcess(...args: string[]): Promise<Run> {
  const io = recordingIo();
  const code = await runCli(args, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/** The keys the tests read from `--json` output. */
type DocKey =
  | "ok"
  | "open"
  | "version"
  | "events"
  | "surface"
  | "replacements"
  | "tornTail"
  | "offset"
  | "bytes"
  | "error"
  | "tag"
  | "line"
  | "seq"
  | "message"
  | "closers"
  | "dryRun"
  | "transcriptViolations"
  | "type"
  | "surfaceEvent"
  | "onSurface"
  | "shadowedBy"
  | "lineage"
  | "sources"
  | "compactions"
  | "prunes"
  | "systemPromptChanges"
  | "count"
  | "charsSaved"
  | "items"
  | "charsAfter"
  | "charsBefore"
  | "shadowed"
  | "eventsByType"
  | "fromVersion"
  | "toVersion"
  | "tool/result"
  | "turn/end"
  | "$schema"
  | "role"
  | "length"
  | "map"
  | "0";

/**
 * A parsed JSON document read loosely: each key the tests use gives a
 * document, and array methods can be called, so tests reach into `--json`
 * output without casts or `any`. Assertions check the actual values.
 */
export type Doc =
  & { readonly [K in DocKey]: Doc }
  & ((...args: ReadonlyArray<unknown>) => Doc);

/** Parses stdout as one JSON document. */
export const json = (run: Run): Doc => JSON.parse(run.stdout);

/** A fresh temp folder. */
export const tempDir = (): string =>
  fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-cli-"));

/** Copies a fixture into a fresh temp folder, under `name` if given. */
export const tempCopy = (fixtureName: string, name?: string): string => {
  const target = path.join(tempDir(), name ?? fixtureName);
  fs.copyFileSync(fixture(fixtureName), target);
  return target;
};
