/**
 * Kill-at-random-points campaign against the JSONL store.
 *
 * Each run starts `crash_writer.ts` in its own process, waits for a random
 * number of resolved appends, kills it with SIGKILL after a random delay,
 * then checks the log it left: it opens strictly; it holds every batch
 * whose append resolved (the event types match the workload); a torn tail
 * is reported when there is one; a writer reclaims the dead process's lock,
 * repairs the open turn, and the repaired log replays with a clean
 * transcript and nothing left to close.
 *
 * `deno run -A tests/_helpers/crash_campaign.ts RUNS [PARALLEL]` runs a
 * campaign and prints its counts (`deno task crash`).
 *
 * @module
 */
import { Effect, Result } from "effect";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  checkTranscript,
  deriveMessages,
  layerJsonlStore,
  Session,
  SessionStore,
} from "@palimpsest/session";
import { interruptedTurnClosers } from "@palimpsest/session/internal";
import { mulberry32 } from "./workload.ts";
import { turnBatches } from "./build.ts";

const writer = new URL("./crash_writer.ts", import.meta.url).pathname;

/** What one run saw. */
export interface CrashOutcome {
  /** The run's seed. */
  readonly seed: number;
  /** The next seq after the last append the writer saw resolve. */
  readonly acknowledged: number;
  /** Events in the log after the crash. */
  readonly events: number;
  /** Bytes of the torn tail, 0 when none. */
  readonly tornBytes: number;
  /** Whether the writer simulated a torn write. */
  readonly tore: boolean;
  /** Closers the repair appended. */
  readonly closers: number;
  /** What went wrong, or undefined when every check held. */
  readonly problem: string | undefined;
}

const expectedTypes: ReadonlyArray<string> = Array.from(
  { length: 400 },
  (_, turn) => turnBatches(turn).flat().map((d) => d.type),
).flat();

/** Runs the writer, kills it, and returns the highest acknowledged seq. */
const runWriter = (
  root: string,
  id: string,
  seed: number,
): Promise<{ acknowledged: number; tore: boolean }> =>
  new Promise((resolve, reject) => {
    const random = mulberry32(seed * 7919 + 17);
    const killAfter = 1 + Math.floor(random() * 25);
    const delay = Math.floor(random() * 25);
    const child = spawn(
      Deno.execPath(),
      ["run", "-A", writer, root, id, String(seed)],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let acknowledged = 0;
    let seen = 0;
    let buffer = "";
    let killing = false;
    let tore = false;
    let errors = "";
    child.stderr?.on("data", (d: Uint8Array) => {
      errors += new TextDecoder().decode(d);
    });
    child.stdout?.on("data", (data: Uint8Array) => {
      buffer += new TextDecoder().decode(data);
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        const match = /^ok (\d+)$/.exec(line);
        if (line === "tear") tore = true;
        if (match === null) continue;
        acknowledged = Math.max(acknowledged, Number(match[1]));
        seen++;
      }
      if (!killing && (seen >= killAfter || tore)) {
        killing = true;
        setTimeout(() => child.kill("SIGKILL"), tore ? 0 : delay);
      }
    });
    // A guard timer: it kills a writer that never got going and keeps the
    // event loop alive until the child's close event arrives (without it a
    // loaded machine once ended the test with its promise unresolved).
    const guard = setTimeout(() => {
      killing = true;
      child.kill("SIGKILL");
    }, 60_000);
    child.on("error", (error) => {
      clearTimeout(guard);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(guard);
      if (signal !== "SIGKILL" && code !== 0) {
        reject(new Error(`Writer failed with ${code}: ${errors}`));
      } else {
        resolve({ acknowledged, tore });
      }
    });
  });

/** One run: crash, then check and repair what is left. */
export const crashRun = async (
  root: string,
  seed: number,
): Promise<CrashOutcome> => {
  const id = `crash-${seed}`;
  const { acknowledged, tore } = await runWriter(root, id, seed);
  const layer = layerJsonlStore({ root });
  const check = Effect.gen(function* () {
    const store = yield* SessionStore;
    const read = yield* store.open(id);
    const events = Result.getOrThrow(Session.events(read.session));
    const fail = (problem: string) => ({
      acknowledged,
      tore,
      events: events.length,
      tornBytes: read.report.tornTail?.bytes ?? 0,
      closers: 0,
      problem,
    });
    if (tore && read.report.tornTail === undefined) {
      return fail("the simulated tear was not reported");
    }
    if (events.length < acknowledged) {
      return fail(`lost batches: ${events.length} < ${acknowledged}`);
    }
    for (let i = 0; i < events.length; i++) {
      if (events[i]?.type !== expectedTypes[i]) {
        return fail(`event ${i} is ${events[i]?.type}`);
      }
    }
    const writerHandle = yield* store.open(id, { mode: "write" });
    const repaired = yield* store.repair(writerHandle);
    yield* store.close(writerHandle);
    const after = yield* store.open(id);
    const violations = checkTranscript(deriveMessages(after.session.surface));
    if (violations.length > 0) {
      return fail(`transcript: ${JSON.stringify(violations)}`);
    }
    if (after.report.tornTail !== undefined) return fail("tail after repair");
    if (
      interruptedTurnClosers(Result.getOrThrow(Session.events(after.session)))
        .length > 0
    ) {
      return fail("still open after repair");
    }
    return {
      acknowledged,
      tore,
      events: events.length,
      tornBytes: read.report.tornTail?.bytes ?? 0,
      closers: repaired.closers.length,
      problem: undefined,
    };
  });
  const outcome = await Effect.runPromise(
    Effect.result(Effect.scoped(check)).pipe(Effect.provide(layer)),
  );
  if (outcome._tag === "Failure") {
    return {
      seed,
      acknowledged,
      tore,
      events: 0,
      tornBytes: 0,
      closers: 0,
      problem: `${outcome.failure._tag}: ${outcome.failure.message}`,
    };
  }
  fs.rmSync(path.join(root, `${id}.jsonl`), { force: true });
  return { seed, ...outcome.success };
};

/** Runs `runs` crashes, `parallel` at a time, in a fresh temp folder. */
export const runCampaign = async (
  runs: number,
  parallel: number,
  firstSeed = 1,
): Promise<ReadonlyArray<CrashOutcome>> => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-crash-"));
  const outcomes: CrashOutcome[] = [];
  let next = 0;
  const worker = async () => {
    while (next < runs) {
      const seed = firstSeed + next++;
      outcomes.push(await crashRun(root, seed));
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  fs.rmSync(root, { recursive: true, force: true });
  return outcomes.sort((a, b) => a.seed - b.seed);
};

if (import.meta.main) {
  const runs = Number(Deno.args[0] ?? "300");
  const parallel = Number(Deno.args[1] ?? "4");
  const started = performance.now();
  const outcomes = await runCampaign(runs, parallel);
  const failed = outcomes.filter((o) => o.problem !== undefined);
  const torn = outcomes.filter((o) => o.tornBytes > 0).length;
  const tore = outcomes.filter((o) => o.tore).length;
  const extra = outcomes.filter((o) => o.events > o.acknowledged).length;
  const repaired = outcomes.filter((o) => o.closers > 0).length;
  console.log(
    `${runs} runs in ${((performance.now() - started) / 1000).toFixed(1)} s: ` +
      `${failed.length} failed, ${torn} torn tails reported (${tore} ` +
      `simulated tears), ${extra} with lines past ` +
      `the last acknowledged append, ${repaired} repaired`,
  );
  for (const o of failed) console.log(`seed ${o.seed}: ${o.problem}`);
  if (failed.length > 0) Deno.exit(1);
}
