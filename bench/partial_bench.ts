/**
 * The cost of the partial answer: the CPU of a streaming turn (a loopback
 * model streaming `parts` text deltas, then a tool call whose arguments
 * stream, then the settled answer, in a JSONL store) with partial batches
 * (the defaults: 100 ms or 4 KB) and before them, side by side in one
 * process, alternating. "Before" is this tree with `partial: false`, or,
 * with `--before <checkout>`, the turn loop and JSONL store of another
 * checkout of the repository (a release without partial batches), loaded
 * into the same process. The goal is at most 1.10×.
 *
 * `deno run -A bench/partial_bench.ts [parts] [rounds] [--before <checkout>]`
 *
 * @module
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import process from "node:process";
import { Effect, Layer, Result, Schema } from "effect";
import { type Response, Tool, Toolkit } from "effect/ai";
import { layerJsonlStore, Session, SessionStore } from "@palimpsest/session";
import { runTurn } from "@palimpsest/session/ai";
import { loopbackModel } from "../tests/_helpers/partial_stream.ts";

const flag = Deno.args.indexOf("--before");
const before = flag === -1 ? undefined : Deno.args[flag + 1];
const numbers = flag === -1
  ? Deno.args
  : Deno.args.filter((_a, i) => i !== flag && i !== flag + 1);
const parts = Number(numbers[0] ?? 4000);
const rounds = Number(numbers[1] ?? 9);

const usage = { inputTokens: {}, outputTokens: {} };
/** The first answer: `parts` deltas of text, then a call with streamed arguments. */
const answer: ReadonlyArray<Response.StreamPartEncoded> = [
  { type: "text-start", id: "t" },
  ...Array.from({ length: parts }, (_, i): Response.StreamPartEncoded => ({
    type: "text-delta",
    id: "t",
    delta: `word${i % 97} `,
  })),
  { type: "text-end", id: "t" },
  { type: "tool-params-start", id: "c1", name: "note" },
  ...Array.from(
    { length: parts / 4 },
    (_, i): Response.StreamPartEncoded => ({
      type: "tool-params-delta",
      id: "c1",
      delta: i === 0 ? '{"text":"' : "abcdefgh",
    }),
  ),
  { type: "tool-params-delta", id: "c1", delta: '"}' },
  { type: "tool-params-end", id: "c1" },
  { type: "tool-call", id: "c1", name: "note", params: { text: "x" } },
  { type: "finish", reason: "tool-calls", usage },
];
const last: ReadonlyArray<Response.StreamPartEncoded> = [
  { type: "text-delta", id: "t", delta: "Done." },
  { type: "finish", reason: "stop", usage },
];

/** A loopback model: the long answer, then the last, for every turn. */
const model = () => loopbackModel([answer, last]);
const Note = Tool.make("note", {
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.String,
});
const tools = Toolkit.make(Note);
const handlers = tools.toLayer({ note: () => Effect.succeed("ok") });

/** What a turn needs of a checkout: its store tag and layer, its loop. */
interface Engine {
  readonly SessionStore: typeof SessionStore;
  readonly layerJsonlStore: typeof layerJsonlStore;
  readonly runTurn: typeof runTurn;
  readonly Session: typeof Session;
}
const after: Engine = { SessionStore, layerJsonlStore, runTurn, Session };
const loadBefore = async (checkout: string): Promise<Engine> => {
  const root = await import(path.resolve(checkout, "mod.ts"));
  const ai = await import(path.resolve(checkout, "src/ai/mod.ts"));
  return {
    SessionStore: root.SessionStore,
    layerJsonlStore: root.layerJsonlStore,
    runTurn: ai.runTurn,
    Session: root.Session,
  };
};

const folder = fs.mkdtempSync(path.join(os.tmpdir(), "partial-bench-"));
let sessions = 0;

/** One turn on a fresh session; its CPU and wall time in ms, its batches. */
const turn = (engine: Engine, partial: boolean) =>
  Effect.gen(function* () {
    const store = yield* engine.SessionStore;
    const handle = yield* store.create({
      id: `s${sessions++}`,
      createdAt: 0,
      isSeeded: false,
    });
    const cpu = process.cpuUsage();
    const start = performance.now();
    const outcome = yield* engine.runTurn({
      handle,
      toolkit: yield* tools,
      model: { provider: "loopback", model: "m" },
      input: "Write.",
      ...(partial ? {} : { partial: false }),
    });
    const wall = performance.now() - start;
    const used = process.cpuUsage(cpu);
    yield* store.close(handle);
    const events = Result.getOrThrow(engine.Session.events(outcome.session));
    return {
      cpu: (used.user + used.system) / 1000,
      user: used.user / 1000,
      wall,
      partials: events.filter((e) => String(e.type) === "assistant/partial")
        .length,
    };
  }).pipe(
    Effect.scoped,
    Effect.provide(
      Layer.mergeAll(
        model(),
        handlers,
        engine.layerJsonlStore({ root: folder }),
      ),
    ),
  );

const program = (base: Engine, basePartial: boolean) =>
  Effect.gen(function* () {
    // Warm both paths first.
    yield* turn(base, basePartial);
    yield* turn(after, true);
    const off: number[] = [];
    const on: number[] = [];
    const offWall: number[] = [];
    const onWall: number[] = [];
    const offUser: number[] = [];
    const onUser: number[] = [];
    let batches = 0;
    for (let r = 0; r < rounds; r++) {
      const a = yield* turn(base, basePartial);
      const b = yield* turn(after, true);
      off.push(a.cpu);
      offUser.push(a.user);
      offWall.push(a.wall);
      on.push(b.cpu);
      onUser.push(b.user);
      onWall.push(b.wall);
      batches = b.partials;
    }
    const min = (xs: number[]) => Math.min(...xs);
    const median = (xs: number[]) =>
      [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;
    const row = (name: string, f: (xs: number[]) => number) =>
      console.log(
        `${name.padEnd(7)} CPU before ${f(off).toFixed(1)} ms, after ${
          f(on).toFixed(1)
        } ms, ratio ${(f(on) / f(off)).toFixed(3)}×; wall before ${
          f(offWall).toFixed(1)
        } ms, after ${f(onWall).toFixed(1)} ms, ratio ${
          (f(onWall) / f(offWall)).toFixed(3)
        }×`,
      );
    console.log(
      `streaming turn: ${answer.length + last.length} parts in 2 requests, ` +
        `${batches} partial batches, ${rounds} rounds alternating; before: ${
          before === undefined ? "this tree, partial: false" : before
        }`,
    );
    row("best", min);
    row("median", median);
    const paired = on.map((x, i) => x / (off[i] ?? NaN));
    console.log(
      `median of the ${rounds} paired CPU ratios: ${
        median(paired).toFixed(3)
      }×`,
    );
    console.log(
      `user CPU alone: best before ${min(offUser).toFixed(1)} ms, after ${
        min(onUser).toFixed(1)
      } ms, ratio ${(min(onUser) / min(offUser)).toFixed(3)}×; median ratio ${
        (median(onUser) / median(offUser)).toFixed(3)
      }×`,
    );
  });

const base = before === undefined ? after : await loadBefore(before);
await Effect.runPromise(program(base, before !== undefined));
fs.rmSync(folder, { recursive: true, force: true });
