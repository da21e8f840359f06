/**
 * The adapters' benchmark: building each provider's request for the derived
 * messages of a standard-workload surface (100k nodes by default), reported
 * as a ratio to `JSON.stringify` of the request built, the work any client
 * does next (goal: at most 2×).
 *
 * `deno task bench:ai [nodes]`. Inputs are built before the clock starts;
 * times are the best of several repetitions, each after a collection; an
 * adapter and the serialization of its request run alternately, so both see
 * the same machine load, in this one process, after a warm-up.
 *
 * @module
 */
import { deriveMessages, type Message } from "@palimpsest/session";
import { toPrompt } from "@palimpsest/session/ai";
import {
  pairToolCalls,
  toAnthropic,
  toGemini,
  toOpenAIChat,
  toOpenAIResponses,
} from "@palimpsest/session/providers";
import { workload } from "../tests/_helpers/workload.ts";
import { fold, gc } from "./common.ts";

const nodes = Number(Deno.args[0] ?? "100000");
const runs = 15;

let sink = 0;
const best = (f: () => unknown): number => {
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    gc();
    const start = performance.now();
    const out = f();
    min = Math.min(min, performance.now() - start);
    if (out !== undefined) sink++;
  }
  return min;
};

const { events } = workload({ nodes, lines: false });
const surface = fold(events);
const messages: ReadonlyArray<Message> = deriveMessages(surface);

const adapters: ReadonlyArray<readonly [string, () => unknown]> = [
  ["toAnthropic", () => toAnthropic(messages)],
  ["toOpenAIChat", () => toOpenAIChat(messages)],
  ["toOpenAIResponses", () => toOpenAIResponses(messages)],
  ["toGemini", () => toGemini(messages)],
];

interface Row {
  readonly name: string;
  readonly buildMs: number;
  readonly stringifyMs: number;
  readonly ratio: number;
  readonly bytes: number;
}

/** Best times of `a` and `b`, run alternately so both see the same load. */
const bestPair = (a: () => unknown, b: () => unknown): [number, number] => {
  let minA = Infinity;
  let minB = Infinity;
  for (let i = 0; i < runs; i++) {
    for (const [f, first] of [[a, true], [b, false]] as const) {
      gc();
      const start = performance.now();
      const out = f();
      const ms = performance.now() - start;
      if (first) minA = Math.min(minA, ms);
      else minB = Math.min(minB, ms);
      if (out !== undefined) sink++;
    }
  }
  return [minA, minB];
};

const rows: Row[] = [];
for (const [name, build] of adapters) {
  for (let i = 0; i < 3; i++) JSON.stringify(build());
  const request = build();
  const [buildMs, stringifyMs] = bestPair(
    build,
    () => JSON.stringify(request),
  );
  rows.push({
    name,
    buildMs,
    stringifyMs,
    ratio: buildMs / stringifyMs,
    bytes: JSON.stringify(request).length,
  });
}
for (let i = 0; i < 3; i++) pairToolCalls(messages);
const pairMs = best(() => pairToolCalls(messages));
for (let i = 0; i < 3; i++) toPrompt(messages);
const promptMs = best(() => toPrompt(messages));

const f2 = (n: number): string => n.toFixed(2);
console.log(
  `${messages.length} messages from a ${surface.length}-node surface (${events.length} events); best of ${runs}`,
);
console.log(
  "| adapter | build | JSON.stringify of the request | ratio (goal ≤ 2×) | request size |",
);
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const r of rows) {
  console.log(
    `| \`${r.name}\` | ${f2(r.buildMs)} ms | ${f2(r.stringifyMs)} ms | ${
      f2(r.ratio)
    }× ${r.ratio <= 2 ? "met" : "NOT MET"} | ${
      (r.bytes / 1e6).toFixed(1)
    } MB |`,
  );
}
console.log(`| \`pairToolCalls\` alone | ${f2(pairMs)} ms | | | |`);
console.log(`| \`toPrompt\` (effect/ai) | ${f2(promptMs)} ms | | | |`);
if (sink < 0) console.log(sink);
