/**
 * Loading a JSONL log of the standard workload: `readSessionFile` (stream,
 * decode, fold) against the same chunked read with `JSON.parse` of each
 * line, and the peak memory of each.
 *
 * `deno bench -A bench/load_bench.ts` runs the two as `Deno.bench` cases on 100k events
 * (`BENCH_EVENTS` overrides). The full report, on 1M events, with the ratio
 * measured in one process and peak memory (`VmHWM` and heap after load)
 * measured in a fresh subprocess per loader:
 *
 *   deno run -A --v8-flags=--expose-gc bench/load_bench.ts --report
 *
 * @module
 */
import { Effect } from "effect";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { readSessionFile } from "@palimpsest/session/jsonl";
import { writeWorkloadFile } from "../tests/_helpers/workload.ts";
import { gc } from "./common.ts";

const here = path.dirname(new URL(import.meta.url).pathname);
const tmp = path.join(here, "..", ".tmp", "bench");

const fileFor = (events: number): string => {
  fs.mkdirSync(tmp, { recursive: true });
  const file = path.join(tmp, `load_${events}.jsonl`);
  if (!fs.existsSync(file)) writeWorkloadFile(file, events);
  return file;
};

/** The baseline: the same chunked read and split, then JSON.parse. */
const parseLines = async (file: string): Promise<unknown[]> => {
  const values: unknown[] = [];
  const handle = await fs.promises.open(file, "r");
  const buffer = new Uint8Array(1 << 20);
  const decoder = new TextDecoder();
  let rest = "";
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) break;
    const text = rest + decoder.decode(buffer.subarray(0, bytesRead), {
      stream: true,
    });
    const lines = text.split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) values.push(JSON.parse(line));
  }
  await handle.close();
  return values;
};

const load = async (file: string): Promise<number> => {
  const log = await Effect.runPromise(readSessionFile(file));
  return log.events.length;
};

const peakKiB = (): number => {
  const status = fs.readFileSync("/proc/self/status", "utf8");
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match === null ? 0 : Number(match[1]);
};

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

const timeIt = async (f: () => Promise<unknown>): Promise<number> => {
  const start = performance.now();
  await f();
  return performance.now() - start;
};

const memoryArg = Deno.args.find((a) => a.startsWith("--memory="));

if (memoryArg !== undefined) {
  // Child mode: load once, keep the result alive, print peak and heap.
  const [which = "load", eventsText = "1000000"] = memoryArg
    .slice("--memory=".length).split(":");
  const file = fileFor(Number(eventsText));
  gc();
  const before = Deno.memoryUsage().heapUsed;
  const kept = which === "parse"
    ? await parseLines(file)
    : await Effect.runPromise(readSessionFile(file));
  gc();
  const heap = Deno.memoryUsage().heapUsed - before;
  console.log(JSON.stringify({ which, peakKiB: peakKiB(), heapBytes: heap }));
  void kept;
} else if (Deno.args.includes("--report")) {
  const events = Number(Deno.env.get("BENCH_EVENTS") ?? "1000000");
  const file = fileFor(events);
  const bytes = fs.statSync(file).size;
  const lines = await parseLines(file);
  const count = lines.length;
  lines.length = 0;
  const parse: number[] = [];
  const read: number[] = [];
  const inMemory: number[] = [];
  const split = fs.readFileSync(file, "utf8").split("\n");
  split.pop();
  for (let i = 0; i < 3; i++) {
    parse.push(await timeIt(() => parseLines(file)));
    gc();
    read.push(await timeIt(() => load(file)));
    gc();
    inMemory.push(
      await timeIt(() => {
        const values: unknown[] = [];
        for (const line of split) values.push(JSON.parse(line));
        return Promise.resolve(values.length);
      }),
    );
    gc();
  }
  split.length = 0;
  const p = median(parse);
  const r = median(read);
  const m = median(inMemory);
  const memory = (which: string) => {
    const out = spawnSync(Deno.execPath(), [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      new URL(import.meta.url).pathname,
      `--memory=${which}:${events}`,
    ], { encoding: "utf8" });
    return JSON.parse(out.stdout.trim().split("\n").pop() ?? "{}");
  };
  const parsedMemory = memory("parse");
  const loadedMemory = memory("load");
  const mib = (n: number) => (n / 1024 / 1024).toFixed(0);
  console.log(
    [
      `file: ${count} events, ${mib(bytes)} MiB`,
      `JSON.parse of the lines (chunked read + split + parse): ${
        p.toFixed(0)
      } ms (${(p * 1000 / count).toFixed(2)} µs/event)`,
      `readSessionFile (read + decode + fold): ${r.toFixed(0)} ms (${
        (r * 1000 / count).toFixed(2)
      } µs/event)`,
      `JSON.parse of the same lines, split in memory beforehand: ${
        m.toFixed(0)
      } ms (${(m * 1000 / count).toFixed(2)} µs/event)`,
      `ratio: ${(r / p).toFixed(2)}x the chunked JSON.parse load, ${
        (r / m).toFixed(2)
      }x JSON.parse alone`,
      `peak RSS (VmHWM): parse ${mib(parsedMemory.peakKiB * 1024)} MiB, ` +
      `load ${mib(loadedMemory.peakKiB * 1024)} MiB (${
        (loadedMemory.peakKiB / parsedMemory.peakKiB).toFixed(2)
      }x)`,
      `heap held after load: parsed values ${
        mib(parsedMemory.heapBytes)
      } MiB, loaded session ${mib(loadedMemory.heapBytes)} MiB (${
        (loadedMemory.heapBytes / parsedMemory.heapBytes).toFixed(2)
      }x)`,
    ].join("\n"),
  );
} else {
  const events = Number(Deno.env.get("BENCH_EVENTS") ?? "100000");
  const file = fileFor(events);
  Deno.bench(`JSON.parse of ${events} lines`, {
    group: "load",
    baseline: true,
    n: 5,
    warmup: 1,
  }, async () => {
    await parseLines(file);
  });
  Deno.bench(`readSessionFile of ${events} events`, {
    group: "load",
    n: 5,
    warmup: 1,
  }, async () => {
    await load(file);
  });
}
