/**
 * Fold benchmarks on the standard workload (docs/performance.md): fold cost per event at
 * 100k and 1M pre-decoded events, one single-node replace (a prune) on
 * 100k- and 1M-node surfaces, a 200-node compaction on the 1M-node surface,
 * `deriveMessages` at 100k nodes, and replay (decode + fold) against
 * `JSON.parse` of the same lines.
 *
 * Inputs are built once, outside the measured functions. Besides deno
 * bench's per-iteration table, the module prints per-event and
 * per-operation figures measured in the same process (best of a few runs).
 *
 * @module
 */
import { Result } from "effect";
import {
  deriveMessages,
  type SessionEvent,
  type Surface,
} from "@palimpsest/session";
import { applyEventResult, surfaceNodes } from "@palimpsest/session/internal";
import { workload } from "../tests/_helpers/workload.ts";
import { replace, user } from "../tests/_helpers/build.ts";
import { best, decode, fold, pruneOf } from "./common.ts";

function* decodeLines(lines: ReadonlyArray<string>): Generator<SessionEvent> {
  for (const line of lines) yield decode(JSON.parse(line));
}

const replayLines = (lines: ReadonlyArray<string>): Surface =>
  fold(decodeLines(lines));

let sink = 0;
const parseLines = (lines: ReadonlyArray<string>): void => {
  for (const line of lines) {
    const value: unknown = JSON.parse(line);
    if (value === null) sink++;
  }
};

// --- inputs, built once ----------------------------------------------------

const big = workload({ nodes: 1_000_000, seed: 1 });
const events1M = big.events.slice(0, 1_000_000);
const events100k = big.events.slice(0, 100_000);
const lines1M = big.lines.slice(0, 1_000_000);
const lines100k = big.lines.slice(0, 100_000);
const small = workload({ nodes: 100_000, seed: 1, lines: false });

const surface1M = fold(big.events);
const surface100k = fold(small.events);
const checkNodes = (surface: Surface, expected: number): void => {
  if (surface.length !== expected) {
    throw new Error(`Expected ${expected} nodes but folded ${surface.length}`);
  }
};
checkNodes(surface1M, big.nodes);
checkNodes(surface100k, small.nodes);

/** A prune of a tool/result near the middle of the surface. */
const pruneEvent = (surface: Surface): SessionEvent => {
  const nodes = surfaceNodes(surface);
  for (let i = Math.floor(nodes.length / 2); i < nodes.length; i++) {
    const node = nodes[i];
    const prune = node === undefined
      ? undefined
      : pruneOf(surface, node, surface.nextSeq, "[pruned]", 0);
    if (prune !== undefined) return prune;
  }
  throw new Error("No tool/result on the surface");
};

/** A compaction of `k` nodes starting near the middle of the surface. */
const compactionEvent = (surface: Surface, k: number): SessionEvent => {
  const nodes = surfaceNodes(surface);
  const from = Math.floor(nodes.length / 2);
  const range = nodes.slice(from, from + k);
  return decode(user(surface.nextSeq, {
    id: "bench-summary",
    text: "summary",
    source: { kind: "plugin", plugin: "compaction" },
    op: replace(range[0] ?? 0, range[range.length - 1] ?? 0),
    sources: range,
    time: 0,
  }));
};

const prune100k = pruneEvent(surface100k);
const prune1M = pruneEvent(surface1M);
const compact1M = compactionEvent(surface1M, 200);

const applyOrThrow = (surface: Surface, event: SessionEvent): Surface => {
  const result = applyEventResult(surface, event);
  if (Result.isFailure(result)) {
    throw new Error(`Bench event does not fold: ${result.failure._tag}`);
  }
  return result.success;
};

// --- a summary measured in this process ------------------------------------

const perOp = (ops: number, f: () => void): number => {
  f();
  return best(5, () => {
    for (let i = 0; i < ops; i++) f();
  }) / ops;
};

const fold100kMs = best(5, () => fold(events100k));
const fold1MMs = best(3, () => fold(events1M));
const parse100kMs = best(5, () => parseLines(lines100k));
const replay100kMs = best(5, () => replayLines(lines100k));
const parse1MMs = best(3, () => parseLines(lines1M));
const replay1MMs = best(3, () => replayLines(lines1M));
const prune100kMs = perOp(10_000, () => applyOrThrow(surface100k, prune100k));
const prune1MMs = perOp(10_000, () => applyOrThrow(surface1M, prune1M));
const compact1MMs = perOp(1_000, () => applyOrThrow(surface1M, compact1M));
const derive100kMs = best(20, () => deriveMessages(surface100k));

const us = (ms: number): string => `${(ms * 1000).toFixed(3)} µs`;
console.log(
  [
    `standard workload: ${big.events.length} events, ${big.nodes} nodes (seed 1)`,
    `fold per event, 100k pre-decoded events: ${us(fold100kMs / 100_000)}`,
    `fold per event, 1M pre-decoded events:   ${us(fold1MMs / 1_000_000)}`,
    `one replace (prune), ${surface100k.length} nodes: ${us(prune100kMs)}`,
    `one replace (prune), ${surface1M.length} nodes: ${us(prune1MMs)}`,
    `200-node compaction, ${surface1M.length} nodes: ${us(compact1MMs)}`,
    `deriveMessages, ${surface100k.length} nodes: ${
      derive100kMs.toFixed(3)
    } ms`,
    `replay (decode + fold) 100k lines: ${
      replay100kMs.toFixed(1)
    } ms, JSON.parse: ${parse100kMs.toFixed(1)} ms, ratio ${
      (replay100kMs / parse100kMs).toFixed(2)
    }x`,
    `replay (decode + fold) 1M lines: ${
      replay1MMs.toFixed(1)
    } ms, JSON.parse: ${parse1MMs.toFixed(1)} ms, ratio ${
      (replay1MMs / parse1MMs).toFixed(2)
    }x`,
    `replay growth 1M / 100k: ${(replay1MMs / replay100kMs).toFixed(2)}x`,
  ].join("\n"),
);

// --- deno bench --------------------------------------------------------------

Deno.bench({
  name: "fold 100k pre-decoded events",
  group: "fold",
  baseline: true,
  n: 20,
  warmup: 3,
  fn: () => {
    fold(events100k);
  },
});
Deno.bench({
  name: "fold 1M pre-decoded events",
  group: "fold",
  n: 5,
  warmup: 1,
  fn: () => {
    fold(events1M);
  },
});
Deno.bench({
  name: `one replace (prune) on ${surface100k.length} nodes`,
  group: "replace",
  baseline: true,
  fn: () => {
    applyOrThrow(surface100k, prune100k);
  },
});
Deno.bench({
  name: `one replace (prune) on ${surface1M.length} nodes`,
  group: "replace",
  fn: () => {
    applyOrThrow(surface1M, prune1M);
  },
});
Deno.bench({
  name: `200-node compaction on ${surface1M.length} nodes`,
  group: "replace",
  fn: () => {
    applyOrThrow(surface1M, compact1M);
  },
});
Deno.bench({
  name: `deriveMessages on ${surface100k.length} nodes`,
  n: 50,
  warmup: 5,
  fn: () => {
    deriveMessages(surface100k);
  },
});
Deno.bench({
  name: "JSON.parse 100k lines",
  group: "replay 100k",
  baseline: true,
  n: 20,
  warmup: 3,
  fn: () => {
    parseLines(lines100k);
  },
});
Deno.bench({
  name: "replay (decode + fold) 100k lines",
  group: "replay 100k",
  n: 20,
  warmup: 3,
  fn: () => {
    replayLines(lines100k);
  },
});
Deno.bench({
  name: "JSON.parse 1M lines",
  group: "replay 1M",
  baseline: true,
  n: 3,
  warmup: 1,
  fn: () => {
    parseLines(lines1M);
  },
});
Deno.bench({
  name: "replay (decode + fold) 1M lines",
  group: "replay 1M",
  n: 3,
  warmup: 1,
  fn: () => {
    replayLines(lines1M);
  },
});
