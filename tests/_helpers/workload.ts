/**
 * The standard workload of docs/performance.md, generated deterministically from a seed
 * at any size.
 *
 * Cycles of four events, three on the surface: `user/message`,
 * `assistant/message` (text plus one `tool-call` block), `tool/call`, and a
 * `tool/result` citing the call. Every 100 cycles a prune of one large
 * result (`compaction/prune`, then a `tool/result` replacing exactly that
 * node with the same fields and new content). Every 1,000 cycles a
 * compaction of the oldest 200 nodes (`compaction/start`,
 * `compaction/summary`, a `user/message` replacing the range and citing the
 * start, the summary and every shadowed node, `compaction/end`).
 *
 * The generator keeps its own count of the surface (an array and a front
 * offset: compactions always take the oldest nodes) so it can stop at a
 * node count without folding.
 *
 * @module
 */
import { Result } from "effect";
import { mulberry32 as kitMulberry32 } from "../../src/testing/conformance_kit.ts";
import * as fs from "node:fs";
import type { SessionEvent } from "@palimpsest/session";
import { encodeEventLine, encodeHeaderLine } from "@palimpsest/session/jsonl";
import { decodeEventResult, encodeEvent } from "@palimpsest/session/schema";

/** A raw event line, as parsed JSON. */
export type Raw = Record<string, unknown>;

/** A raw event and the number of surface nodes after it. */
export interface WorkloadItem {
  /** The event, in canonical key order. */
  readonly raw: Raw;
  /** Surface nodes once this event is folded. */
  readonly nodes: number;
}

/**
 * A small seeded PRNG (mulberry32), uniform in [0, 1): the same seed, the
 * same workload. The tests' seeded helpers use it too.
 */
export const mulberry32: (seed: number) => () => number = kitMulberry32;

/** The standard workload's vocabulary. */
export const WORDS: ReadonlyArray<string> = [
  "session",
  "surface",
  "replay",
  "tool",
  "result",
  "model",
  "context",
  "summary",
  "event",
  "log",
  "prune",
  "the",
  "a",
  "of",
  "and",
];

const START_TIME = 1_700_000_000_000;

/**
 * The workload as an endless stream of raw events.
 *
 * @param seed The PRNG seed.
 */
/** Words drawn from a vocabulary (the workload's by default): `n` of them, joined. */
export const wordsFrom = (
  random: () => number,
  vocabulary: ReadonlyArray<string> = WORDS,
) =>
(n: number): string => {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(vocabulary[Math.floor(random() * vocabulary.length)] ?? "x");
  }
  return out.join(" ");
};

/** The texts of one cycle's messages, drawn in this order. */
export interface CycleTexts {
  /** The user's message. */
  readonly user: string;
  /** The assistant's text before its call. */
  readonly assistant: string;
  /** The tool's result. */
  readonly result: string;
}

/** The data of one cycle's four events (user, assistant with one call, the call, its result). */
export interface CycleData {
  /** The call's id. */
  readonly callId: string;
  /** `user/message` data. */
  readonly user: Raw;
  /** `assistant/message` data. */
  readonly assistant: Raw;
  /** `tool/call` data. */
  readonly call: Raw;
  /** `tool/result` data. */
  readonly result: Raw;
}

/**
 * The data of cycle `cycle`'s events with these texts: the standard
 * workload's and the long agent's.
 */
export const cycleData = (cycle: number, texts: CycleTexts): CycleData => {
  const callId = `call-${cycle}`;
  const args = JSON.stringify({ path: `src/file_${cycle % 97}.ts` });
  return {
    callId,
    user: {
      id: `u${cycle}`,
      role: "user",
      content: [{ type: "text", text: texts.user }],
      source: { kind: "user" },
    },
    assistant: {
      turn: cycle,
      step: 0,
      message: {
        id: `a${cycle}`,
        role: "assistant",
        content: [
          { type: "text", text: texts.assistant },
          { type: "tool-call", id: callId, name: "read_file", arguments: args },
        ],
        source: { kind: "model", provider: "bench", model: "m-1" },
      },
      stream: [],
    },
    call: { turn: cycle, step: 0, callId, name: "read_file", arguments: args },
    result: {
      turn: cycle,
      step: 0,
      message: {
        id: `r${cycle}`,
        role: "user",
        content: [{
          type: "tool-result",
          toolCallId: callId,
          content: [{ type: "text", text: texts.result }],
        }],
        source: { kind: "tool", callId },
      },
    },
  };
};

export function* rawWorkload(seed = 1): Generator<WorkloadItem> {
  const random = mulberry32(seed);
  const words = wordsFrom(random);
  let seq = 0;
  const nodes: number[] = [];
  let front = 0;
  const live = () => nodes.length - front;
  const event = (type: string, data: unknown, extra?: Raw): Raw => ({
    type,
    seq,
    time: START_TIME + seq * 100,
    data,
    ...extra,
  });
  let largeSeq = -1;
  let largePos = -1;
  let largeData: Raw | undefined;
  let largeCycle = -1;
  let compactions = 0;
  for (let cycle = 0;; cycle++) {
    const large = cycle % 100 === 0;
    // Drawn in the order the events come: user, assistant, result.
    const user = words(8 + Math.floor(random() * 24));
    const assistant = words(6 + Math.floor(random() * 20));
    const result = large ? words(400) : words(10 + Math.floor(random() * 30));
    const data = cycleData(cycle, { user, assistant, result });
    nodes.push(seq);
    yield {
      raw: event("user/message", data.user, { surfaceOp: "append" }),
      nodes: live(),
    };
    seq++;
    nodes.push(seq);
    yield {
      raw: event("assistant/message", data.assistant, { surfaceOp: "append" }),
      nodes: live(),
    };
    seq++;
    const callSeq = seq;
    yield { raw: event("tool/call", data.call), nodes: live() };
    seq++;
    const resultData = data.result;
    if (large) {
      largeSeq = seq;
      largePos = nodes.length;
      largeData = resultData;
      largeCycle = cycle;
    }
    nodes.push(seq);
    yield {
      raw: event("tool/result", resultData, {
        surfaceOp: "append",
        sourceEventSeqs: [callSeq],
      }),
      nodes: live(),
    };
    seq++;

    if (
      (cycle + 1) % 100 === 0 && largeData !== undefined &&
      nodes[largePos] === largeSeq
    ) {
      const target = largeSeq;
      yield {
        raw: event("compaction/prune", { shadowedSeqs: [target] }),
        nodes: live(),
      };
      seq++;
      const pruned: Raw = {
        ...largeData,
        message: {
          id: `r${largeCycle}`,
          role: "user",
          content: [{
            type: "tool-result",
            toolCallId: `call-${largeCycle}`,
            content: [{ type: "text", text: "[pruned]" }],
          }],
          source: { kind: "tool", callId: `call-${largeCycle}` },
        },
      };
      nodes[largePos] = seq;
      yield {
        raw: event("tool/result", pruned, {
          surfaceOp: { op: "replace", startSeq: target, endSeq: target },
          sourceEventSeqs: [target],
        }),
        nodes: live(),
      };
      seq++;
      largeData = undefined;
    }

    if ((cycle + 1) % 1000 === 0 && live() >= 200) {
      const compactionId = `k${compactions++}`;
      const range = nodes.slice(front, front + 200);
      const first = range[0] ?? 0;
      const last = range[range.length - 1] ?? 0;
      const startSeq = seq;
      yield {
        raw: event("compaction/start", { compactionId, turn: cycle }),
        nodes: live(),
      };
      seq++;
      const summarySeq = seq;
      const summary = words(60);
      yield {
        raw: event("compaction/summary", {
          compactionId,
          summary,
          shadowedSeqs: range,
        }),
        nodes: live(),
      };
      seq++;
      front += 199;
      nodes[front] = seq;
      yield {
        raw: event("user/message", {
          id: `summary-${compactionId}`,
          role: "user",
          content: [{ type: "text", text: summary }],
          source: { kind: "plugin", plugin: "compaction" },
        }, {
          surfaceOp: { op: "replace", startSeq: first, endSeq: last },
          sourceEventSeqs: [startSeq, summarySeq, ...range],
        }),
        nodes: live(),
      };
      seq++;
      yield {
        raw: event("compaction/end", { compactionId }),
        nodes: live(),
      };
      seq++;
    }
  }
}

/** A generated workload: decoded events and their JSONL lines. */
export interface Workload {
  /** The decoded events, in seq order. */
  readonly events: ReadonlyArray<SessionEvent>;
  /** `JSON.stringify(encodeEvent(event))` of each event. */
  readonly lines: ReadonlyArray<string>;
  /** Surface nodes after the last event. */
  readonly nodes: number;
}

/** How much workload to generate. */
export interface WorkloadSize {
  /** Stop after this many events. */
  readonly events?: number;
  /** Or stop once the surface holds this many nodes. */
  readonly nodes?: number;
  /** The PRNG seed; 1 by default. */
  readonly seed?: number;
  /** Also build the JSONL lines (true by default). */
  readonly lines?: boolean;
}

/**
 * Generates the standard workload.
 *
 * @param size Where to stop, and the seed.
 * @returns The decoded events and their lines.
 */
export function workload(size: WorkloadSize): Workload {
  const events: SessionEvent[] = [];
  const lines: string[] = [];
  let nodes = 0;
  const maxEvents = size.events ?? Infinity;
  const maxNodes = size.nodes ?? Infinity;
  if (maxEvents === Infinity && maxNodes === Infinity) {
    throw new RangeError("Expected a workload size in events or nodes");
  }
  for (const item of rawWorkload(size.seed ?? 1)) {
    if (events.length >= maxEvents || nodes >= maxNodes) break;
    const decoded = decodeEventResult(item.raw);
    if (Result.isFailure(decoded)) {
      throw new Error(
        `Workload bug: event ${events.length} fails ${decoded.failure._tag}`,
      );
    }
    events.push(decoded.success);
    if (size.lines !== false) {
      lines.push(JSON.stringify(encodeEvent(decoded.success)));
    }
    nodes = item.nodes;
  }
  return { events, lines, nodes };
}

/**
 * Writes the standard workload as a JSONL session file (header, then the
 * lines as the store writes them, source runs compressed), streaming: the
 * log is never held in memory.
 *
 * @param file The path to write (replaced if it exists).
 * @param events How many events.
 * @param seed The PRNG seed.
 * @returns The number of bytes written.
 */
export function writeWorkloadFile(
  file: string,
  events: number,
  seed = 1,
): number {
  const fd = fs.openSync(file, "w");
  let out = encodeHeaderLine({
    id: "bench",
    createdAt: START_TIME,
    isSeeded: false,
  });
  let bytes = 0;
  let count = 0;
  const flush = () => {
    bytes += fs.writeSync(fd, out);
    out = "";
  };
  for (const item of rawWorkload(seed)) {
    if (count++ >= events) break;
    const decoded = decodeEventResult(item.raw);
    if (Result.isFailure(decoded)) {
      throw new Error(
        `Workload bug: event ${count} fails ${decoded.failure._tag}`,
      );
    }
    out += encodeEventLine(decoded.success);
    if (out.length > 1 << 20) flush();
  }
  flush();
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  return bytes;
}
