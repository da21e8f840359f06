/**
 * One measurement of the standard-workload benchmark, in its own process:
 * `deno run -A --v8-flags=--expose-gc bench/measure.ts <case> <size>` prints
 * one JSON line. `bench/run.ts` runs every case this way (neighbouring
 * benchmarks in one process skew each other) and prints the table.
 *
 * Inputs are generated before the clock starts. Times are the best of a few
 * repetitions (the least disturbed run of deterministic work).
 *
 * @module
 */
import { Effect, Result } from "effect";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  deriveMessages,
  Draft,
  type EventDraft,
  Session,
  type SessionEvent,
  SessionSeq,
  type Surface,
} from "@palimpsest/session";
import {
  applyEventResult,
  surfaceEvent,
  surfaceNodes,
} from "@palimpsest/session/internal";
import { readSessionFile } from "@palimpsest/session/jsonl";
import { workload, writeWorkloadFile } from "../tests/_helpers/workload.ts";
import {
  baselineApply,
  baselineDecode,
  baselineDerive,
  baselineReplay,
  type BaselineState,
} from "./baseline.ts";
import {
  best as bestOf,
  decode,
  fold,
  forEachFileLine,
  gc,
  pruneOf,
} from "./common.ts";
import { median, timeEach } from "./timing.ts";

const [name = "", sizeText = "100000"] = Deno.args;
const size = Number(sizeText);

const peakKiB = (): number => {
  const status = fs.readFileSync("/proc/self/status", "utf8");
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match === null ? 0 : Number(match[1]);
};

const report = (value: number, unit: string, extra: object = {}): void => {
  console.log(JSON.stringify({ name, size, value, unit, ...extra }));
};

let sink = 0;
const runs = size >= 1_000_000 ? 3 : 5;

/**
 * Builds `count` single-node prunes of distinct tool results spread evenly
 * over `surface` (so a design that scans for its endpoints pays for where
 * they are, as it would in use).
 */
const prunes = (surface: Surface, count: number): SessionEvent[] => {
  const results = surfaceNodes(surface).filter((node) =>
    surfaceEvent(surface, node)?.type === "tool/result"
  );
  const stride = Math.max(1, Math.floor(results.length / count));
  const out: SessionEvent[] = [];
  let seq = surface.nextSeq;
  for (let i = 0; i < results.length && out.length < count; i += stride) {
    const node = results[i];
    const prune = node === undefined
      ? undefined
      : pruneOf(surface, node, seq, "pruned");
    if (prune === undefined) continue;
    seq++;
    out.push(prune);
  }
  return out;
};

/**
 * `count` prunes of distinct tool results spread evenly over `surface`, as
 * the drafts `pruneToolResult` appends: the result with its block's inner
 * content replaced, every other field kept.
 */
const pruneDrafts = (surface: Surface, count: number): EventDraft[] => {
  const results = surfaceNodes(surface).filter((node) =>
    surfaceEvent(surface, node)?.type === "tool/result"
  );
  const stride = Math.max(1, Math.floor(results.length / count));
  const out: EventDraft[] = [];
  for (let i = 0; i < results.length && out.length < count; i += stride) {
    const node = results[i];
    const target = node === undefined ? undefined : surfaceEvent(surface, node);
    if (node === undefined || target?.type !== "tool/result") continue;
    const message = target.data.message;
    const [block] = message.content;
    out.push({
      type: "tool/result",
      surfaceOp: { op: "replace", startSeq: node, endSeq: node },
      sourceEventSeqs: [node],
      data: {
        ...target.data,
        message: {
          ...message,
          content: [{ ...block, content: [{ type: "text", text: "pruned" }] }],
        },
      },
    });
  }
  return out;
};

/**
 * `count` replaces of 4 consecutive nodes by a summary message (a
 * compaction's drafts without its log-only events), disjoint and spread
 * evenly over `surface`, as drafts.
 */
const compactions = (surface: Surface, count: number): EventDraft[] => {
  const nodes = surfaceNodes(surface);
  const stride = Math.max(4, Math.floor(nodes.length / count));
  const out: EventDraft[] = [];
  for (let i = 0; i + 3 < nodes.length && out.length < count; i += stride) {
    const range = nodes.slice(i, i + 4);
    const [startSeq, , , endSeq] = range;
    if (startSeq === undefined || endSeq === undefined) continue;
    out.push({
      type: "user/message",
      surfaceOp: { op: "replace", startSeq, endSeq },
      sourceEventSeqs: range,
      data: {
        id: `summary-${i}`,
        role: "user",
        content: [{ type: "text", text: "a summary of four messages" }],
        source: { kind: "plugin", plugin: "compaction" },
      },
    });
  }
  return out;
};

const benchFile = (events: number): string => {
  const dir = path.join(".tmp", "bench");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `workload_v3_${events}.jsonl`);
  if (!fs.existsSync(file)) writeWorkloadFile(file, events);
  return file;
};

const readLines = (file: string): string[] => {
  // Chunked read and split: the same line source the reader has.
  const lines: string[] = [];
  forEachFileLine(file, (line) => {
    lines.push(line);
  });
  return lines.slice(1);
};

/** The best of `runs` calls of `f`, each after a collection. */
const best = (runs: number, f: () => void): number => bestOf(runs, f, true);

/** The cases timed as one pass over the workload's lines, in ms. */
const overLines = {
  parse: (lines) => {
    for (const line of lines) if (JSON.parse(line) === null) sink++;
  },
  decode: (lines) => {
    for (const line of lines) decode(JSON.parse(line));
  },
  replay: (lines) => void fold(lines.map((line) => decode(JSON.parse(line)))),
  "baseline-replay": (lines) => void baselineReplay(lines),
} satisfies Record<string, (lines: ReadonlyArray<string>) => void>;

switch (name) {
  case "parse":
  case "decode":
  case "replay":
  case "baseline-replay": {
    const { lines } = workload({ events: size });
    const pass = overLines[name];
    report(best(runs, () => pass(lines)), "ms");
    break;
  }
  case "fold": {
    const { events } = workload({ events: size, lines: false });
    report(best(runs, () => void fold(events)), "ms");
    break;
  }
  case "replace": {
    const { events } = workload({ nodes: size, lines: false });
    const base = fold(events);
    const ops = prunes(base, 1000);
    // Each op timed alone; the median is "one replace" (a mean mostly
    // measures whichever major GC of the million-event heap lands inside).
    // Three chains from the same surface, the least disturbed one counts;
    // going back to `base` (rerooting) happens outside the clock.
    let bestMedian = Infinity;
    let bestMean = Infinity;
    for (let chain = 0; chain < 3; chain++) {
      sink += surfaceNodes(base).length;
      const { times } = timeEach(
        base,
        ops,
        (surface, op) => Result.getOrThrow(applyEventResult(surface, op)),
      );
      bestMedian = Math.min(bestMedian, median(times));
      const mean = times.reduce((a, b) => a + b, 0) / times.length;
      bestMean = Math.min(bestMean, mean);
    }
    report(bestMedian * 1000, "us/op", {
      nodes: base.length,
      ops: ops.length,
      meanUs: bestMean * 1000,
    });
    break;
  }
  case "append-prune":
  case "append-compaction": {
    // A replace through Session.append, on a session of the standard
    // workload: 1,000 prunes of tool results (pruneToolResult's draft, the
    // result with its block's content replaced) or 1,000 replaces of 4
    // consecutive nodes by a summary message (a compaction's), spread over
    // the surface. Each append timed alone; the median counts, the least
    // disturbed of three chains, each from the same session (going back to
    // it happens outside the clock).
    const { events } = workload({ nodes: size, lines: false });
    const base = Effect.runSync(
      Session.fromEvents({ id: "b", createdAt: 0, isSeeded: false }, events),
    );
    const drafts = name === "append-prune"
      ? pruneDrafts(base.surface, 1000)
      : compactions(base.surface, 1000);
    let bestMedian = Infinity;
    for (let chain = 0; chain < 3; chain++) {
      sink += surfaceNodes(base.surface).length;
      const { last, times } = timeEach(
        base,
        drafts,
        (session, draft) => Effect.runSync(Session.append(session, draft)),
      );
      if (last.surface.replacements !== base.surface.replacements + 1000) {
        throw new Error("Expected every replace to land");
      }
      bestMedian = Math.min(bestMedian, median(times));
    }
    report(bestMedian * 1000, "us/op", {
      nodes: base.surface.length,
      ops: drafts.length,
    });
    break;
  }
  case "derive": {
    // A first derivation: each run derives a surface never derived (one
    // log-only event past the folded one, so nothing can be extended).
    const { events } = workload({ nodes: size, lines: false });
    const surface = fold(events);
    const fresh = (): Surface =>
      Result.getOrThrow(applyEventResult(
        surface,
        decode({
          type: "turn/start",
          seq: surface.nextSeq,
          time: 0,
          data: { turn: 0 },
        }),
      ));
    let min = Infinity;
    for (let run = 0; run < runs * 2; run++) {
      const next = fresh();
      gc();
      const start = performance.now();
      sink += deriveMessages(next).length;
      min = Math.min(min, performance.now() - start);
    }
    report(min, "ms", { nodes: surface.length });
    break;
  }
  case "derive-again": {
    // The same surface derived again: the messages are kept with it.
    const { events } = workload({ nodes: size, lines: false });
    const surface = fold(events);
    sink += deriveMessages(surface).length;
    const calls = 100_000;
    const ms = best(runs, () => {
      for (let i = 0; i < calls; i++) sink += deriveMessages(surface).length;
    });
    report((ms * 1000) / calls, "us/op", { nodes: surface.length });
    break;
  }
  case "derive-after-append": {
    // One cycle (4 events) folded onto a derived surface, then derived:
    // the appended nodes are walked, the earlier messages copied.
    const { events } = workload({ nodes: size, lines: false });
    const cut = events.length - 4;
    const surface = fold(events.slice(0, cut));
    sink += deriveMessages(surface).length;
    const tail = events.slice(cut);
    let bestUs = Infinity;
    for (let run = 0; run < runs * 4; run++) {
      const next = fold(tail, surface);
      gc();
      const start = performance.now();
      sink += deriveMessages(next).length;
      bestUs = Math.min(bestUs, (performance.now() - start) * 1000);
    }
    report(bestUs, "us/op", { nodes: surface.length });
    break;
  }
  case "derive-after-replace-append":
  case "derive-after-replaces":
  case "derive-after-prepend": {
    // A derived surface (derived after a prune, as a harness's would be),
    // then one of the changes that splice: a prune and three appended user
    // messages; five prunes spread over the surface; a system prompt
    // prepended. Best and median of the derivations.
    const { events } = workload({ nodes: size, lines: false });
    const first = fold(events);
    sink += deriveMessages(first).length;
    const [warm] = prunes(first, 1);
    const surface = warm === undefined ? first : fold([warm], first);
    sink += deriveMessages(surface).length;
    const seq = surface.nextSeq;
    const user = (at: number): SessionEvent =>
      decode({
        type: "user/message",
        seq: at,
        time: 0,
        surfaceOp: "append",
        data: {
          id: `next-${at}`,
          role: "user",
          content: [{ type: "text", text: "next" }],
          source: { kind: "user" },
        },
      });
    const changes = name === "derive-after-prepend"
      ? [decode({
        ...Draft.system("be brief", { id: "prompt", plugin: "prompt" }),
        seq,
        time: 0,
        surfaceOp: "prepend",
      })]
      : name === "derive-after-replaces"
      ? prunes(surface, 5)
      : [
        ...prunes(surface, 1),
        user(seq + 1),
        user(seq + 2),
        user(seq + 3),
      ];
    const times: number[] = [];
    for (let run = 0; run < runs * 4; run++) {
      const next = fold(changes, surface);
      gc();
      const start = performance.now();
      sink += deriveMessages(next).length;
      times.push((performance.now() - start) * 1000);
    }
    times.sort((a, b) => a - b);
    report(times[0] ?? 0, "us/op", {
      nodes: surface.length,
      medianUs: times[times.length >> 1] ?? 0,
    });
    break;
  }
  case "events-tail": {
    // What is new since the last seq: one event out of the whole log.
    const { events } = workload({ events: size, lines: false });
    const session = Effect.runSync(
      Session.fromEvents({ id: "b", createdAt: 0, isSeeded: false }, events),
    );
    const last = SessionSeq.make(Session.nextSeq(session) - 1);
    const calls = 10_000;
    const ms = best(runs, () => {
      for (let i = 0; i < calls; i++) {
        sink += Result.getOrThrow(Session.events(session, last)).length;
      }
    });
    report((ms * 1000) / calls, "us/op", { events: events.length });
    break;
  }
  case "baseline-derive": {
    const { lines } = workload({ nodes: size });
    const state = baselineReplay(lines);
    report(best(runs * 2, () => void baselineDerive(state)), "ms", {
      nodes: state.surface.length,
    });
    break;
  }
  case "baseline-replace": {
    const { events, lines } = workload({ nodes: size });
    const state: BaselineState = baselineReplay(lines);
    const ops = prunes(fold(events), 1000).map((event) =>
      baselineDecode(JSON.parse(JSON.stringify(event)))
    );
    const { times } = timeEach(state, ops, (s, op) => {
      baselineApply(s, op);
      return s;
    });
    report(median(times) * 1000, "us/op", {
      nodes: state.surface.length,
    });
    break;
  }
  case "prepare": {
    report(fs.statSync(benchFile(size)).size, "bytes");
    break;
  }
  case "load": {
    const file = benchFile(size);
    gc();
    const start = performance.now();
    const log = await Effect.runPromise(readSessionFile(file));
    const ms = performance.now() - start;
    gc();
    report(ms, "ms", {
      events: log.events.length,
      peakKiB: peakKiB(),
      heapBytes: Deno.memoryUsage().heapUsed,
    });
    break;
  }
  case "load-parse": {
    // The parsed events alone: the same lines, JSON.parse, kept in an array.
    const file = benchFile(size);
    gc();
    const start = performance.now();
    const values = readLines(file).map((line): unknown => JSON.parse(line));
    const ms = performance.now() - start;
    gc();
    report(ms, "ms", {
      events: values.length,
      peakKiB: peakKiB(),
      heapBytes: Deno.memoryUsage().heapUsed,
    });
    break;
  }
  case "idle": {
    gc();
    report(0, "ms", {
      peakKiB: peakKiB(),
      heapBytes: Deno.memoryUsage().heapUsed,
    });
    break;
  }
  default:
    console.error(`Unknown case "${name}"`);
    Deno.exit(2);
}
void sink;
void SessionSeq;
