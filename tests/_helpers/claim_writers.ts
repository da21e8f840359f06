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

/** The path of `claim_writer.ts`. */
export const claimWriterScript: string = new URL(
  "../store/claim_writer.ts",
  import.meta.url,
).pathname;
const script = claimWriterScript;

/** A `claim_writer.ts` process. */
export interface Writer {
  readonly line: () => Promise<string | undefined>;
  readonly send: (line: string) => Promise<void>;
  readonly end: () => Promise<void>;
  readonly kill: () => void;
  readonly status: Promise<Deno.CommandStatus>;
}

/** Starts `command args` as a writer. */
export const spawnWriter = (
  command: string,
  args: ReadonlyArray<string>,
): Writer => {
  const child = new Deno.Command(command, {
    args: [...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const writer = child.stdin.getWriter();
  let buffer = "";
  let done = false;
  const encoder = new TextEncoder();
  return {
    line: async () => {
      for (;;) {
        const nl = buffer.indexOf("\n");
        if (nl >= 0) {
          const out = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          return out;
        }
        if (done) return undefined;
        const next = await reader.read();
        if (next.done) done = true;
        else buffer += next.value;
      }
    },
    send: (text) => writer.write(encoder.encode(`${text}\n`)),
    end: async () => {
      try {
        await writer.close();
      } catch {
        // Exited already.
      }
    },
    kill: () => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Exited already.
      }
    },
    status: child.status.then(async (status) => {
      while (!done) {
        const next = await reader.read();
        if (next.done) done = true;
      }
      return status;
    }),
  };
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
