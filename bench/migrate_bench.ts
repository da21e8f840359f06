/**
 * Memory and speed of migrating a large v1 log to v3 (docs/migrations.md, Memory: migration streams).
 *
 * As a script, `deno run --allow-all bench/migrate_bench.ts [events]` (default 1 000 000) writes a v1 JSONL
 * log of that many events to a temporary folder, then migrates it with `migrateFile` in a child
 * process, sampling `Deno.memoryUsage()` as lines are read and reading the kernel's peak RSS
 * (`VmHWM`) at the end. The child's baseline (after loading the library, before reading) is
 * reported too, so the growth attributable to the migration is visible. The workload is cycles of
 * one turn: `turn/start`, `step/start`, `request/header` (the prompt changes every 50 turns),
 * `user/message`, three `assistant/chunk`s, the `assistant/message` citing them (text and a
 * tool call), `tool/call`, `tool/result`, `step/end`, `turn/end` (12 events), with a compaction
 * of everything but the head every 20 turns, so the surface stays short as in a long session.
 *
 * Under `deno bench` it times the in-memory migration of a 12k-event log of the same workload.
 *
 * @module
 */
import { Effect, Result } from "effect";
import {
  chainFor,
  decodeHeader,
  defaultCatalog,
  makeMigrator,
  migrateFile,
  startChain,
} from "../migrations/mod.ts";
import { runDeno } from "./common.ts";

const write = (fd: Deno.FsFile, text: string): void => {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += fd.writeSync(bytes.subarray(offset));
};

/**
 * The lines of a v1 log of at least `events` events (rounded up to whole turns), header first.
 *
 * @param events How many events.
 * @returns The JSONL lines, without `\n`.
 */
export function* v1Lines(events: number): Generator<string> {
  let seq = 0;
  let time = 1_700_000_000_000;
  const line = (e: Record<string, unknown>): string => {
    const { type, ...rest } = e;
    return JSON.stringify({ type, seq: seq++, time: time++, ...rest });
  };
  yield JSON.stringify({
    type: "session",
    version: 1,
    id: "bench",
    createdAt: time,
    isSeeded: false,
  });
  let surface: Array<number> = [];
  let compactions = 0;
  for (let turn = 0; seq < events; turn++) {
    yield line({ type: "turn/start", data: { turn } });
    yield line({ type: "step/start", data: { turn, step: 0 } });
    yield line({
      type: "request/header",
      data: {
        header: {
          config: { provider: "p", model: "m" },
          system: `Prompt ${Math.floor(turn / 50)}`,
        },
        reason: { kind: "step" },
      },
    });
    surface.push(seq);
    yield line({
      type: "user/message",
      data: {
        id: `u${turn}`,
        role: "user",
        content: [{
          type: "text",
          text: `Question number ${turn}: what is in the folder?`,
        }],
        source: { kind: "user" },
      },
      surfaceOp: "append",
    });
    const chunks: Array<number> = [];
    for (let i = 0; i < 3; i++) {
      chunks.push(seq);
      yield line({
        type: "assistant/chunk",
        data: { turn, step: 0, chunk: { delta: `part ${i} of ${turn}` } },
      });
    }
    const callId = `call${turn}`;
    surface.push(seq);
    yield line({
      type: "assistant/message",
      data: {
        turn,
        step: 0,
        message: {
          id: `a${turn}`,
          role: "assistant",
          content: [
            {
              type: "text",
              text: `part 0 of ${turn}part 1 of ${turn}part 2 of ${turn}`,
            },
            {
              type: "tool-call",
              id: callId,
              name: "shell",
              arguments: '{"cmd":"ls"}',
            },
          ],
          source: { kind: "model", provider: "p", model: "m" },
        },
      },
      surfaceOp: "append",
      sourceEventSeqs: chunks,
    });
    const call = seq;
    yield line({
      type: "tool/call",
      data: { turn, step: 0, callId, name: "shell", arguments: '{"cmd":"ls"}' },
    });
    surface.push(seq);
    yield line({
      type: "tool/result",
      data: {
        turn,
        step: 0,
        message: {
          id: `r${turn}`,
          role: "user",
          content: [{
            type: "tool-result",
            toolCallId: callId,
            content: [{ type: "text", text: "a.txt b.txt" }],
          }],
          source: { kind: "tool", callId },
        },
      },
      surfaceOp: "append",
      sourceEventSeqs: [call],
    });
    yield line({ type: "step/end", data: { turn, step: 0 } });
    yield line({
      type: "turn/end",
      data: { turn, reason: { kind: "completed" } },
    });
    if (turn % 20 === 19) {
      const id = `k${compactions++}`;
      const k0 = seq;
      yield line({
        type: "compaction/start",
        data: { compactionId: id, turn },
      });
      const k1 = seq;
      yield line({
        type: "compaction/summary",
        data: { compactionId: id, summary: "s", shadowedSeqs: surface },
      });
      const summary = seq;
      yield line({
        type: "user/message",
        data: {
          id: `s${id}`,
          role: "user",
          content: [{ type: "text", text: "Summary of the session so far." }],
          source: { kind: "plugin", plugin: "compaction" },
        },
        surfaceOp: {
          op: "replace",
          start: surface[0],
          end: surface[surface.length - 1],
        },
        sourceEventSeqs: [k0, k1, ...surface],
      });
      yield line({ type: "compaction/end", data: { compactionId: id } });
      surface = [summary];
    }
  }
}

/**
 * Write a v1 log of at least `events` events.
 *
 * @param path The file to create (it must not exist).
 * @param events How many events (rounded up to whole turns).
 * @returns The number of events written.
 */
export function generateV1(path: string, events: number): number {
  const file = Deno.openSync(path, { write: true, createNew: true });
  let batch: Array<string> = [];
  let count = -1;
  for (const l of v1Lines(events)) {
    count += 1;
    batch.push(l);
    if (batch.length >= 4096) {
      write(file, batch.join("\n") + "\n");
      batch = [];
    }
  }
  if (batch.length > 0) write(file, batch.join("\n") + "\n");
  file.close();
  return count;
}

let small: ReadonlyArray<unknown> | undefined;

Deno.bench(
  "migrate 12k v1 events in memory (three edges, v3 decode and fold)",
  () => {
    // Built on first use so that running this file as a script does not pay for it.
    small ??= [...v1Lines(12_000)].map((l): unknown => JSON.parse(l));
    const migrator = Result.getOrThrow(makeMigrator(small[0]));
    for (let i = 1; i < small.length; i++) {
      Result.getOrThrow(
        migrator.push(small[i], i + 1),
      );
    }
    Result.getOrThrow(migrator.end());
  },
);

const peakRss = (): number => {
  const status = Deno.readTextFileSync("/proc/self/status");
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match === null ? Number.NaN : Number(match[1]) * 1024;
};

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Collect garbage when the child runs with `--v8-flags=--expose-gc`, so samples show what is retained. */
const collect = (): void => {
  const gc: unknown = Reflect.get(globalThis, "gc");
  if (typeof gc === "function") gc();
};

/** Read a JSONL file line by line in 64 KiB chunks (what `migrateFile` does internally). */
function* lines(path: string): Generator<string> {
  const file = Deno.openSync(path, { read: true });
  const chunk = new Uint8Array(1 << 16);
  const decoder = new TextDecoder();
  let rest = "";
  for (;;) {
    const n = file.readSync(chunk);
    if (n === null || n === 0) break;
    const text = rest + decoder.decode(chunk.subarray(0, n), { stream: true });
    const parts = text.split("\n");
    rest = parts.pop() ?? "";
    yield* parts;
  }
  file.close();
}

type Mode = "chain" | "migrator" | "file";

const measure = (mode: Mode, source: string): Record<string, unknown> => {
  collect();
  const baseline = Deno.memoryUsage();
  const checkpoints: Array<string> = [];
  const checkpoint = (line: number): void => {
    if ((line & 0x3ffff) !== 0) return;
    collect();
    const m = Deno.memoryUsage();
    checkpoints.push(`line ${line}: rss ${mb(m.rss)}, heap ${mb(m.heapUsed)}`);
  };
  const started = performance.now();
  let events = 0;
  if (mode === "file") {
    const summary = Effect.runSync(
      migrateFile(source, { progress: checkpoint }),
    );
    events = summary.eventsRead;
  } else {
    let line = 0;
    let push: ((value: unknown, line: number) => boolean) | undefined;
    for (const text of lines(source)) {
      line += 1;
      checkpoint(line);
      const value: unknown = JSON.parse(text);
      if (push === undefined) {
        const header = Result.getOrThrow(decodeHeader(value));
        if (mode === "chain") {
          const run = startChain(
            Result.getOrThrow(chainFor(defaultCatalog, header.version)),
            header,
          );
          push = (v, l) => Result.isSuccess(run.push(v, l));
        } else {
          const migrator = Result.getOrThrow(makeMigrator(value));
          push = (v, l) => Result.isSuccess(migrator.push(v, l));
        }
        continue;
      }
      events += 1;
      if (!push(value, line)) throw new Error(`Refused at line ${line}`);
    }
  }
  const elapsed = performance.now() - started;
  collect();
  const end = Deno.memoryUsage();
  return {
    mode,
    events,
    seconds: Number((elapsed / 1000).toFixed(2)),
    microsPerEvent: Number(((elapsed * 1000) / events).toFixed(2)),
    baseline: `rss ${mb(baseline.rss)}, heap ${mb(baseline.heapUsed)}`,
    checkpoints,
    end: `rss ${mb(end.rss)}, heap ${mb(end.heapUsed)}`,
    kernelPeakRss: mb(peakRss()),
  };
};

if (import.meta.main) {
  if (Deno.args[0] === "--measure") {
    const mode = Deno.args[1];
    if (mode !== "chain" && mode !== "migrator" && mode !== "file") {
      throw new Error("Usage: --measure chain|migrator|file PATH");
    }
    console.log(JSON.stringify(measure(mode, Deno.args[2] ?? ""), null, 2));
  } else {
    const events = Number(Deno.args[0] ?? 1_000_000);
    const dir = Deno.makeTempDirSync({ prefix: "palimpsest-migrate-bench-" });
    try {
      const path = `${dir}/big.v1.jsonl`;
      const written = generateV1(path, events);
      console.error(
        `wrote ${written} v1 events (${mb(Deno.statSync(path).size)})`,
      );
      for (const mode of ["chain", "migrator", "file"]) {
        const target = `${dir}/big.v1.v3.jsonl`;
        try {
          Deno.removeSync(target);
        } catch {
          // Not written yet.
        }
        const child = runDeno(
          ["--allow-all", "--v8-flags=--expose-gc"],
          new URL(import.meta.url).pathname,
          ["--measure", mode, path],
          "inherit",
        );
        if (!child.success) Deno.exitCode = 1;
      }
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  }
}
