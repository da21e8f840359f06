/**
 * Processes of the writer claim tests: `tests/store/claim_writer.ts` run
 * with chosen permissions (or under another command, such as `strace`),
 * spoken to line by line.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import * as path from "node:path";
import { makeJsonlStore } from "@palimpsest/session";
import { type LineProcess, spawnLineProcess } from "./line_process.ts";

/** The path of `claim_writer.ts`. */
export const claimWriterScript: string = new URL(
  "../store/claim_writer.ts",
  import.meta.url,
).pathname;
const script = claimWriterScript;

/** A `claim_writer.ts` process; `kill` sends SIGKILL. */
export interface Writer extends Omit<LineProcess, "kill"> {
  readonly kill: () => void;
}

/** Starts `command args` as a writer. */
export const spawnWriter = (
  command: string,
  args: ReadonlyArray<string>,
): Writer => {
  const child = spawnLineProcess(command, args);
  return { ...child, kill: () => child.kill("SIGKILL") };
};

/**
 * Starts `claim_writer.ts` over ROOT for session `s`, with `-A` unless
 * `flags` are given; with `now` it opens at once.
 */
export const denoWriter = (
  root: string,
  now = false,
  flags: ReadonlyArray<string> = ["-A"],
): Writer =>
  spawnWriter(Deno.execPath(), [
    "run",
    ...flags,
    script,
    root,
    "s",
    ...(now ? ["now"] : []),
  ]);

/** Creates session `s` under ROOT; returns its file. */
export const newSession = async (root: string): Promise<string> => {
  await Effect.runPromise(Effect.scoped(Effect.flatMap(
    makeJsonlStore({ root }),
    (store) => store.create({ id: "s", createdAt: 0, isSeeded: false }),
  )));
  return path.join(root, "s.jsonl");
};

/** Starts a writer that takes the session, and kills it while it holds. */
export const killHolder = async (root: string): Promise<void> => {
  const holder = denoWriter(root, true);
  assert.match((await holder.line()) ?? "", /^opened /);
  holder.kill();
  await holder.status;
};
