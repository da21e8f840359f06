/**
 * `deno run -A bench/open_child.ts <mode> <root> <id>`: one `store.open` of
 * session `id` in the JSONL store at `root`, in this fresh process, for
 * `checkpoint_open.ts`: `default` (`store.open(id)`) or `whole`
 * (`wholeLog: true`). Prints one JSON line: the time, the peak RSS
 * (`VmHWM`), the checkpoint the open started from and the events it read.
 * It imports nothing but the library and effect, so it runs in an older
 * checkout too.
 *
 * @module
 */
import { Effect } from "effect";
import * as fs from "node:fs";
import { layerJsonlStore, SessionStore } from "@palimpsest/session";

const [mode = "default", root = ".", id = "bench"] = Deno.args;
const start = performance.now();
const report = await Effect.runPromise(
  Effect.scoped(Effect.gen(function* () {
    const store = yield* SessionStore;
    const handle = yield* store.open(
      id,
      mode === "whole" ? { wholeLog: true } : {},
    );
    return handle.report as unknown as Record<string, unknown>;
  })).pipe(Effect.provide(layerJsonlStore({ root }))),
);
const ms = performance.now() - start;
const status = fs.readFileSync("/proc/self/status", "utf8");
console.log(JSON.stringify({
  ms,
  peakKiB: Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0),
  checkpoint: report.checkpoint ?? null,
  events: report.events ?? null,
}));
