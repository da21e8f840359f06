/**
 * The claim storm: writers of one JSONL session (`node/test/_storm_writer.mjs`,
 * run by Deno on this checkout, and by Node on the installed package when a
 * Node writer is given) take the writer claim, append and release it in a loop,
 * some under `strace` with a delay on every claim system call (`link`,
 * `rename`, `unlink`, directory reads, `flock`); every 1.5 s one of them,
 * the holder when there is one, is killed with SIGKILL and replaced; dead
 * claims (a pid that exited) and pid-reused claims (a live pid, another
 * start time) are planted beside the session as it runs. At the end:
 *
 * - never two holders at once: no writer saw another live holder's mark,
 *   and no seq was acknowledged twice;
 * - no acknowledged append lost: every `ack SEQ TURN` is in the file at
 *   that seq with that turn;
 * - the log reads whole (no corrupt line, no torn tail left unreported),
 *   a new writer takes the claim, and no claim file is left once it is
 *   released.
 *
 * `deno run -A tests/_helpers/claim_storm.ts [SECONDS] [--node CMD...]`
 * runs one storm and exits 1 when a check failed (the Node smoke test runs it
 * with a Node writer this way); `tests/store/claim_storm_test.ts` runs it in
 * the suite.
 *
 * @module
 */
import { Effect, Result } from "effect";
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { makeJsonlStore, Session } from "@palimpsest/session";
import { readSessionFile } from "@palimpsest/session/jsonl";
import {
  delaying,
  type LineProcess,
  spawnLineProcess,
} from "./line_process.ts";

// One writer program for both runtimes: under Deno, the checkout's deno.json
// (not node/package.json beside the script) resolves its imports.
const writerScript = new URL(
  "../../node/test/_storm_writer.mjs",
  import.meta.url,
).pathname;
const denoConfig = new URL("../../deno.json", import.meta.url).pathname;

/** The claim system calls the slowed writers are delayed on. */
const CLAIM_CALLS =
  "link,linkat,rename,renameat,renameat2,unlink,unlinkat,getdents64,flock";

/** How a storm runs. */
export interface StormOptions {
  /** How long writers run, in milliseconds. */
  readonly durationMs: number;
  /** Writers at once (replaced as they are killed). */
  readonly writers: number;
  /** A SIGKILL every this many milliseconds. */
  readonly killEveryMs: number;
  /** The delay strace injects on each claim call of a slowed writer, in µs. */
  readonly delayUs: number;
  /**
   * The command that starts a Node writer (`node _storm_writer.mjs`), its
   * arguments before ROOT ID; without it every writer is a Deno writer.
   */
  readonly node?: ReadonlyArray<string>;
}

/** What a storm saw. */
export interface StormReport extends StormCounts {
  /** Claim files left after the final writer released the session. */
  readonly claimsLeft: ReadonlyArray<string>;
  /** What broke: empty when every check held. */
  readonly problems: ReadonlyArray<string>;
}

/** The counts a storm reports. */
export interface StormCounts {
  /** Writers started, replacements included. */
  readonly started: number;
  /** Of which Node writers. */
  readonly nodeWriters: number;
  /** Of which run under strace. */
  readonly slowed: number;
  /** SIGKILLs sent, and how many hit the holder. */
  readonly kills: number;
  readonly killedHolders: number;
  /** Dead and pid-reused claims planted. */
  readonly planted: number;
  /** Times a writer took the claim. */
  readonly holds: number;
  /** Opens refused (SessionLocked and the like). */
  readonly refused: number;
  /** Appends acknowledged, and how many are in the file as acknowledged. */
  readonly acknowledged: number;
  readonly found: number;
  /** Events in the file at the end. */
  readonly events: number;
  /** Writers that saw another live holder, and seqs acknowledged twice. */
  readonly overlaps: number;
  readonly doubleAcks: number;
}

type StormCount = keyof StormCounts;

interface Running {
  readonly proc: LineProcess;
  readonly pid: number | undefined;
  readonly holding: boolean;
  readonly done: Promise<void>;
}

const deadPid = (): number => {
  // A process that has exited: its pid names no one (until reused).
  const run = spawnSync("true");
  return run.pid ?? 999_999;
};

/** Plants a claim file naming `pid` with start time `start`. */
const plant = (file: string, pid: number, start: string): void => {
  const token = randomUUID();
  fs.writeFileSync(
    `${file}.lock.${token}`,
    JSON.stringify({ pid, start, token, flock: false }),
  );
};

/** Runs one storm in a fresh folder and checks it. */
export const runStorm = async (options: StormOptions): Promise<StormReport> => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-storm-"));
  const file = path.join(root, "s.jsonl");
  const store = await Effect.runPromise(makeJsonlStore({ root }));
  await Effect.runPromise(
    Effect.scoped(store.create({ id: "s", createdAt: 0, isSeeded: false })),
  );
  const acks = new Map<number, number[]>();
  const problems: string[] = [];
  // Every count of the report, kept as the storm runs and checked.
  const count: { -readonly [K in StormCount]: number } = {
    started: 0,
    nodeWriters: 0,
    slowed: 0,
    kills: 0,
    killedHolders: 0,
    planted: 0,
    holds: 0,
    refused: 0,
    acknowledged: 0,
    found: 0,
    events: 0,
    overlaps: 0,
    doubleAcks: 0,
  };
  const running = new Set<Running>();
  const killed: number[] = [];

  const start = (): void => {
    const index = count.started++;
    const node = options.node !== undefined && index % 2 === 1;
    const traced = index % 3 === 0;
    const writer = node ? [...(options.node ?? []), root, "s"] : [
      Deno.execPath(),
      "run",
      "-A",
      "--config",
      denoConfig,
      writerScript,
      root,
      "s",
    ];
    if (node) count.nodeWriters++;
    if (traced) count.slowed++;
    const [command = "", ...args] = traced
      ? [
        "strace",
        "-f",
        "-qq",
        "-o",
        "/dev/null",
        ...delaying(CLAIM_CALLS, options.delayUs),
        ...writer,
      ]
      : writer;
    const proc = spawnLineProcess(command, args);
    const state = { pid: undefined as number | undefined, holding: false };
    const self: Running = {
      proc,
      get pid() {
        return state.pid;
      },
      get holding() {
        return state.holding;
      },
      done: (async () => {
        for (;;) {
          const line = await proc.line();
          if (line === undefined) break;
          const [word, a, b] = line.split(" ");
          if (word === "pid") state.pid = Number(a);
          else if (word === "held") {
            state.holding = true;
            count.holds++;
          } else if (word === "released") state.holding = false;
          else if (word === "refused") count.refused++;
          else if (word === "overlap") {
            count.overlaps++;
            problems.push(`writer ${state.pid} saw ${a} holding too`);
          } else if (word === "ack") {
            const seq = Number(a);
            acks.set(seq, [...(acks.get(seq) ?? []), Number(b)]);
          }
        }
        await proc.status;
      })(),
    };
    running.add(self);
  };

  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const kill = async (target: Running): Promise<void> => {
    running.delete(target);
    // The writer itself, by its pid: killing strace alone would detach it.
    for (let i = 0; target.pid === undefined && i < 200; i++) await pause(50);
    count.kills++;
    if (target.holding) count.killedHolders++;
    if (target.pid !== undefined) killed.push(target.pid);
    for (const signal of [() => target.pid, () => undefined]) {
      try {
        const pid = signal();
        if (pid !== undefined) Deno.kill(pid, "SIGKILL");
        else target.proc.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }
    const exited = await Promise.race([
      target.done.then(() => true),
      pause(15_000).then(() => false),
    ]);
    if (!exited) problems.push(`writer ${target.pid} did not exit`);
  };

  for (let i = 0; i < options.writers; i++) start();
  const until = Date.now() + options.durationMs;
  let nextPlant = Date.now();
  while (Date.now() < until) {
    if (Date.now() >= nextPlant) {
      // A dead claim and a claim whose pid is alive but another process.
      plant(file, deadPid(), "1");
      plant(file, Deno.pid, "0");
      count.planted += 2;
      nextPlant = Date.now() + 3_000;
    }
    await pause(options.killEveryMs);
    // The holder when one comes within a second, else any writer.
    let holder: Running | undefined;
    for (let i = 0; holder === undefined && i < 100; i++) {
      holder = [...running].find((w) => w.holding);
      if (holder === undefined) await pause(10);
    }
    const all = [...running];
    const target = holder ?? all[Math.floor(Math.random() * all.length)];
    if (target !== undefined) {
      await kill(target);
      start();
    }
  }
  for (const w of [...running]) await kill(w);
  // A writer killed under strace is reaped by init once strace is gone: a
  // pid claim of an unreaped one is still judged live. Wait until they are.
  for (let i = 0; i < 200; i++) {
    if (!killed.some((pid) => fs.existsSync(`/proc/${pid}`))) break;
    await pause(50);
  }

  // The checks.
  const read = await Effect.runPromise(Effect.result(readSessionFile(file)));
  if (Result.isFailure(read)) {
    problems.push(`the log does not read: ${read.failure._tag}`);
  } else {
    const log = read.success;
    count.events = log.events.length;
    const bySeq = new Map(log.events.map((e) => [e.seq as number, e]));
    for (const [seq, turns] of acks) {
      count.acknowledged += turns.length;
      if (turns.length > 1) {
        count.doubleAcks++;
        problems.push(`seq ${seq} acknowledged to ${turns.length} writers`);
      }
      const event = bySeq.get(seq);
      const turn = event?.type === "turn/start" ? event.data.turn : undefined;
      for (const t of turns) {
        if (turn === t) count.found++;
        else problems.push(`acknowledged append lost: seq ${seq} turn ${t}`);
      }
    }
  }
  // A new writer takes the session, then leaves no claim behind.
  const last = await Effect.runPromise(Effect.result(Effect.scoped(
    Effect.map(
      store.open("s", { mode: "write" }),
      (h) => Session.nextSeq(h.session),
    ),
  )));
  if (Result.isFailure(last)) {
    problems.push(`a writer cannot take the claim after: ${last.failure._tag}`);
  } else if (last.success !== count.events) {
    problems.push(
      `the writer after sees ${last.success} events, not ${count.events}`,
    );
  }
  const base = path.basename(file);
  const claimsLeft = fs.readdirSync(root).filter((n) =>
    n === `${base}.lock` || n.startsWith(`${base}.lock.`)
  );
  for (const name of claimsLeft) {
    const text = fs.readFileSync(path.join(root, name), "utf8");
    problems.push(`claim left: ${name} ${text}`);
  }
  if (count.holds === 0) problems.push("no writer ever held the claim");
  fs.rmSync(root, { recursive: true, force: true });
  return { ...count, claimsLeft, problems };
};

/** The report as one line. */
export const describeStorm = (r: StormReport, seconds: number): string =>
  `claim storm: ${seconds} s, ${r.started} writers (${r.nodeWriters} Node, ${r.slowed} under strace), ${r.kills} SIGKILLs (${r.killedHolders} of the holder), ${r.planted} planted dead or pid-reused claims; ${r.holds} holds, ${r.refused} refused opens, overlaps ${r.overlaps}, seqs acknowledged twice ${r.doubleAcks}; acknowledged appends ${r.acknowledged}, found ${r.found}, events ${r.events}; claims left ${r.claimsLeft.length}`;

if (import.meta.main) {
  const seconds = Number(Deno.args[0] ?? "20");
  const nodeAt = Deno.args.indexOf("--node");
  const node = nodeAt >= 0 ? Deno.args.slice(nodeAt + 1) : undefined;
  const report = await runStorm({
    durationMs: seconds * 1000,
    writers: 5,
    killEveryMs: 1_500,
    delayUs: 20_000,
    ...(node === undefined ? {} : { node }),
  });
  console.log(describeStorm(report, seconds));
  for (const p of report.problems.slice(0, 20)) console.log(`  ${p}`);
  if (report.problems.length > 0) Deno.exit(1);
}
