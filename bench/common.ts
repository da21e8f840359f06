/**
 * What the benchmarks share: a collection between runs, the best of several
 * runs, the fold and decode that stop a benchmark whose input is wrong, and
 * running a measurement in a fresh process.
 * It is not part of the package.
 *
 * @module
 */
import * as fs from "node:fs";
import { Result } from "effect";
import {
  emptySurface,
  type SessionEvent,
  type SessionSeq,
  type Surface,
} from "@palimpsest/session";
import { surfaceEvent } from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { decodeEventResult } from "@palimpsest/session/schema";

import { gc } from "./timing.ts";

export { gc };

/**
 * The least time in ms of `runs` calls of `f`: the least disturbed run of
 * deterministic work. With `collect`, each run follows a {@link gc}.
 */
export const best = (
  runs: number,
  f: () => void,
  collect = false,
): number => {
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    if (collect) gc();
    const start = performance.now();
    f();
    min = Math.min(min, performance.now() - start);
  }
  return min;
};

/** Folds a benchmark's events onto `from`; throws when they do not fold. */
export const fold = (
  events: Iterable<SessionEvent>,
  from: Surface = emptySurface,
): Surface => {
  const result = replayResult(events, from);
  if (Result.isFailure(result)) {
    throw new Error(`Workload does not fold: ${result.failure.error._tag}`);
  }
  return result.success;
};

/** Decodes one raw benchmark event; throws when it does not decode. */
export const decode = (raw: unknown): SessionEvent => {
  const result = decodeEventResult(raw);
  if (Result.isFailure(result)) {
    throw new Error(`Bench event does not decode: ${result.failure._tag}`);
  }
  return result.success;
};

/**
 * A single-node prune of the tool result at `node` on `surface`, as event
 * `seq`: the result with its first block's content replaced by `text`, at
 * `time` (by default the pruned event's own). Undefined when `node` is not
 * a tool/result.
 */
export const pruneOf = (
  surface: Surface,
  node: SessionSeq,
  seq: number,
  text: string,
  time?: number,
): SessionEvent | undefined => {
  const target = surfaceEvent(surface, node);
  if (target?.type !== "tool/result") return undefined;
  const message = target.data.message;
  const [block] = message.content;
  return decode({
    type: "tool/result",
    seq,
    time: time ?? target.time,
    data: {
      ...target.data,
      message: {
        ...message,
        content: [{ ...block, content: [{ type: "text", text }] }],
      },
    },
    surfaceOp: { op: "replace", startSeq: node, endSeq: node },
    sourceEventSeqs: [node],
  });
};

/**
 * Runs `script` with `args` in a fresh `deno run` process under `flags` and
 * waits for it; its stderr goes to ours, its stdout is returned ("piped") or
 * goes to ours ("inherit").
 */
export const runDeno = (
  flags: ReadonlyArray<string>,
  script: string,
  args: ReadonlyArray<string>,
  stdout: "piped" | "inherit" = "piped",
): Deno.CommandOutput =>
  new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, script, ...args],
    stdout,
    stderr: "inherit",
  }).outputSync();

/**
 * Calls `f` with each complete line of a file, read in 1 MiB chunks and
 * split on `\n`: the line source the reader has, and the baseline's.
 *
 * @param file The file.
 * @param f Called with each line, without its `\n`.
 */
export const forEachFileLine = (
  file: string,
  f: (line: string) => void,
): void => {
  const fd = fs.openSync(file, "r");
  const buffer = new Uint8Array(1 << 20);
  const decoder = new TextDecoder();
  let rest = "";
  try {
    for (;;) {
      const n = fs.readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      const parts = (rest + decoder.decode(buffer.subarray(0, n), {
        stream: true,
      })).split("\n");
      rest = parts.pop() ?? "";
      for (const part of parts) f(part);
    }
  } finally {
    fs.closeSync(fd);
  }
};
