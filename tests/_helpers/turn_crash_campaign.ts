/**
 * The crash campaign through the turn loop: kill the agent
 * (`turn_crash_child.ts`, SIGKILL) at every durable write of `runTurn` and
 * of the compaction engine, before the write and after it, and in the
 * middle of every summary; then restart with nothing but `runTurn` and
 * check:
 *
 * - no acknowledged event is lost: the log's first N events are byte for
 *   byte the ones the child had acknowledged (`ack N DIGEST`);
 * - the restart turn closes what the crash left open (an open turn, an
 *   abandoned compaction) itself, and leaves nothing open;
 * - the transcript is clean (`checkTranscript`; `pairToolCalls` repairs
 *   nothing) and `store.repair` has nothing left to close;
 * - compaction works again: the restart turn compacts (whenever the killed
 *   agent had written anything: a kill before its first write leaves no
 *   history to compact).
 *
 * `deno run -A tests/_helpers/turn_crash_campaign.ts [PARALLEL]` runs every
 * kill point (`deno task crash:turn`) and prints the counts.
 *
 * @module
 */
import { Effect, Layer, Result } from "effect";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  checkTranscript,
  deriveMessages,
  layerJsonlStore,
  openWork,
  Session,
  SessionStore,
} from "@palimpsest/session";
import { interruptedTurnClosers } from "@palimpsest/session/internal";
import { runTurn } from "@palimpsest/session/ai";
import { pairToolCalls } from "@palimpsest/session/providers";
import {
  digest,
  handlers,
  inputOf,
  POLICY,
  scriptedModel,
  tools,
} from "./turn_crash_child.ts";

const child = new URL("./turn_crash_child.ts", import.meta.url).pathname;

/** What one kill and restart saw. */
export interface TurnCrashOutcome {
  /** Where the child was killed (`before:K`, `after:K`, `summary:K`). */
  readonly point: string;
  /** Events the child had acknowledged. */
  readonly acknowledged: number;
  /** Events in the log after the kill. */
  readonly events: number;
  /** Acknowledged events missing or changed: must be 0. */
  readonly lost: number;
  /** Whether the kill left a turn open. */
  readonly turnLeftOpen: boolean;
  /** Whether the kill left a compaction open. */
  readonly compactionLeftOpen: boolean;
  /** Closers the restart turn appended first. */
  readonly recovered: number;
  /** Whether the restart turn compacted. */
  readonly compactedAfter: boolean;
  /** What went wrong, or undefined when every check held. */
  readonly problem: string | undefined;
}

interface ChildRun {
  readonly lines: ReadonlyArray<string>;
  readonly signal: string | null;
  readonly code: number | null;
  readonly stderr: string;
}

const runChild = (root: string, id: string, spec: string): Promise<ChildRun> =>
  new Promise((resolve, reject) => {
    const proc = spawn(
      Deno.execPath(),
      ["run", "-A", child, root, id, spec],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let stderr = "";
    proc.stdout?.on("data", (d: Uint8Array) => {
      out += new TextDecoder().decode(d);
    });
    proc.stderr?.on("data", (d: Uint8Array) => {
      stderr += new TextDecoder().decode(d);
    });
    // A guard: a child that hangs is killed, and the run reports it.
    const guard = setTimeout(() => proc.kill("SIGKILL"), 60_000);
    proc.on("error", (error) => {
      clearTimeout(guard);
      reject(error);
    });
    proc.on("close", (code, signal) => {
      clearTimeout(guard);
      resolve({ lines: out.split("\n"), signal, code, stderr });
    });
  });

/**
 * Every kill point of the agent: runs it once unharmed and counts its
 * writes and summaries.
 */
export const killPoints = async (root: string): Promise<string[]> => {
  const run = await runChild(root, "count", "none");
  const counts = run.lines.map((l) => /^writes (\d+) summaries (\d+)$/.exec(l))
    .find((m) => m !== null);
  if (run.code !== 0 || counts === undefined || counts === null) {
    throw new Error(`The agent failed unharmed: ${run.stderr}`);
  }
  const writes = Number(counts[1]);
  const summaries = Number(counts[2]);
  return [
    ...Array.from({ length: writes }, (_, k) => [`before:${k}`, `after:${k}`])
      .flat(),
    ...Array.from({ length: summaries }, (_, k) => `summary:${k}`),
  ];
};

/** One run: kill at `point`, restart with `runTurn`, check. */
export const turnCrashRun = async (
  root: string,
  point: string,
  index: number,
): Promise<TurnCrashOutcome> => {
  const id = `turn-crash-${index}`;
  const run = await runChild(root, id, point);
  let acknowledged = 0;
  let acked = "";
  for (const line of run.lines) {
    const m = /^ack (\d+) ([0-9a-f]+)$/.exec(line);
    if (m !== null && Number(m[1]) >= acknowledged) {
      acknowledged = Number(m[1]);
      acked = m[2] ?? "";
    }
  }
  const base = {
    point,
    acknowledged,
    events: 0,
    lost: 0,
    turnLeftOpen: false,
    compactionLeftOpen: false,
    recovered: 0,
    compactedAfter: false,
  };
  if (run.signal !== "SIGKILL") {
    return {
      ...base,
      problem: `not killed (exit ${run.code}): ${run.stderr.slice(0, 500)}`,
    };
  }
  const check = Effect.gen(function* () {
    const store = yield* SessionStore;
    const crashed = (yield* Effect.scoped(store.open(id))).session;
    const events = Result.getOrThrow(Session.events(crashed));
    const open = openWork(events);
    const seen = {
      ...base,
      events: events.length,
      turnLeftOpen: open.turns.length > 0,
      compactionLeftOpen: open.compactions.length > 0,
    };
    const prefix = Session.fromEvents(
      crashed.header,
      events.slice(0, acknowledged),
    );
    const prefixDigest = yield* Effect.map(prefix, digest);
    if (
      events.length < acknowledged ||
      (acknowledged > 0 && prefixDigest !== acked)
    ) {
      return {
        ...seen,
        lost: Math.max(1, acknowledged - events.length),
        problem:
          `acknowledged events lost or changed: ${events.length} < ${acknowledged} or digest differs`,
      };
    }
    // The restart: the harness calls runTurn and nothing else.
    const handle = yield* store.open(id, { mode: "write" });
    const toolkit = yield* tools;
    const outcome = yield* runTurn({
      handle,
      toolkit,
      model: { provider: "scripted", model: "m" },
      input: inputOf(99),
      compaction: POLICY,
    });
    yield* store.close(handle);
    const after = (yield* Effect.scoped(store.open(id))).session;
    const result = {
      ...seen,
      recovered: outcome.recovered.length,
      compactedAfter: outcome.compactions.some((c) => c.compacted),
    };
    const fail = (problem: string) => ({ ...result, problem });
    if (digest(after) !== digest(outcome.session)) {
      return fail("the restart turn's events are not what the file holds");
    }
    const afterEvents = Result.getOrThrow(Session.events(after));
    const stillOpen = openWork(afterEvents);
    if (stillOpen.turns.length > 0 || stillOpen.compactions.length > 0) {
      return fail(`still open: ${JSON.stringify(stillOpen)}`);
    }
    if (
      (seen.turnLeftOpen || seen.compactionLeftOpen) && result.recovered === 0
    ) {
      return fail("the restart turn did not close what the crash left open");
    }
    const messages = deriveMessages(after.surface);
    const violations = checkTranscript(messages);
    if (violations.length > 0) {
      return fail(`transcript: ${JSON.stringify(violations)}`);
    }
    const repairs = pairToolCalls(messages).repairs;
    if (repairs.length > 0) return fail(`pairing: ${JSON.stringify(repairs)}`);
    if (interruptedTurnClosers(afterEvents).length > 0) {
      return fail("repair still has something to close");
    }
    // A kill before the first write leaves no history: nothing to compact.
    if (!result.compactedAfter && events.length > 0) {
      return fail(
        `compaction did not work again: ${
          JSON.stringify(outcome.compactions.map((c) => c.refused?._tag))
        }`,
      );
    }
    return { ...result, problem: undefined };
  });
  const outcome = await Effect.runPromise(
    Effect.result(Effect.scoped(check)).pipe(
      Effect.provide(
        Layer.mergeAll(layerJsonlStore({ root }), scriptedModel(), handlers),
      ),
    ),
  );
  if (outcome._tag === "Failure") {
    const error = outcome.failure;
    return {
      ...base,
      problem: `${error._tag}: ${"message" in error ? error.message : ""}`,
    };
  }
  fs.rmSync(path.join(root, `${id}.jsonl`), { force: true });
  return outcome.success;
};

/** Runs the given kill points, `parallel` at a time, in a fresh folder. */
export const runTurnCampaign = async (
  points: ReadonlyArray<string>,
  parallel: number,
  root: string = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-turn-")),
): Promise<ReadonlyArray<TurnCrashOutcome>> => {
  const outcomes: TurnCrashOutcome[] = [];
  let next = 0;
  const worker = async () => {
    while (next < points.length) {
      const index = next++;
      const point = points[index];
      if (point !== undefined) {
        outcomes.push(await turnCrashRun(root, point, index));
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  fs.rmSync(root, { recursive: true, force: true });
  return outcomes;
};

/** The counts a campaign reports. */
export const summarize = (
  outcomes: ReadonlyArray<TurnCrashOutcome>,
): string => {
  const n = (f: (o: TurnCrashOutcome) => boolean) => outcomes.filter(f).length;
  return [
    `${outcomes.length} kill points`,
    `${n((o) => o.problem !== undefined)} failed`,
    `lost events ${outcomes.reduce((s, o) => s + o.lost, 0)}`,
    `${n((o) => o.turnLeftOpen)} left a turn open`,
    `${n((o) => o.compactionLeftOpen)} left a compaction open`,
    `${n((o) => o.recovered > 0)} recovered by runTurn`,
    `${n((o) => o.compactedAfter)} compacted after the restart`,
    `${
      n((o) => o.events > o.acknowledged)
    } with events past the last acknowledgement`,
  ].join(", ");
};

if (import.meta.main) {
  const parallel = Number(Deno.args[0] ?? "2");
  const started = performance.now();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-turn-"));
  const points = await killPoints(root);
  const outcomes = await runTurnCampaign(points, parallel, root);
  console.log(
    `${summarize(outcomes)} (${
      ((performance.now() - started) / 1000).toFixed(1)
    } s)`,
  );
  for (const o of outcomes) {
    if (o.problem !== undefined) console.log(`${o.point}: ${o.problem}`);
  }
  if (outcomes.some((o) => o.problem !== undefined)) Deno.exit(1);
}
