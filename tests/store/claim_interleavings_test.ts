/**
 * The JSONL writer claim under every interleaving: the real protocol steps
 * (`claimStep` of `src/jsonl/lock.ts`, one file call each) run over a
 * model file system, and a depth-first search takes every order in which
 * three processes can take their steps, with a dead writer's claim present
 * at the start and one process that may be killed between any two steps.
 *
 * Each process runs a program of acquire and release (one process acquires
 * twice); a process that loses skips its release. (The real acquire's
 * retries repeat the same steps; they change how often a writer wins, not
 * whether two can.) The model has the two kinds of
 * owners of `owner.ts`: a Deno process holds an `flock` on its claim until
 * it drops it (judged by taking the lock), a Node process is judged by
 * whether its pid is alive, and a Deno process without `--allow-run`
 * cannot judge a pid claim at all (unknown, so it blocks).
 *
 * Checked in every reachable state: never two live holders; a holder's
 * claim file is in place; a removed claim never comes back; each step makes
 * at most one file call. Checked in every final state: the dead writer's
 * claim is gone, no claim of a live process is left, and a new writer wins.
 * States are memoized; the number of schedules (complete interleavings) is
 * counted over the graph of states.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Result } from "effect";
import {
  type ClaimIo,
  type ClaimStep,
  claimStep,
  isSettled,
  type Judged,
  startAcquire,
} from "../../src/jsonl/lock.ts";

/** How a process owns and judges claims. */
type Kind = "deno" | "node" | "deno-no-run";

type Op = "acquire" | "release";

interface Proc {
  readonly kind: Kind;
  readonly program: ReadonlyArray<Op>;
  readonly mayCrash: boolean;
  pc: number;
  step: ClaimStep<string> | undefined;
  attemptsLeft: number;
  holding: boolean;
  won: boolean;
  alive: boolean;
  published: number;
}

interface ModelClaim {
  /** The owning process, or -1 for the writer that died before the start. */
  readonly owner: number;
  /** Owned by `flock` (a Deno writer) or by pid. */
  readonly flock: boolean;
}

interface World {
  readonly files: Map<string, ModelClaim>;
  /** Claims whose owner still holds the flock descriptor. */
  readonly held: Set<string>;
  /** Every claim name ever removed. */
  readonly removed: Set<string>;
  readonly procs: Proc[];
}

const ATTEMPTS = 1;

const clone = (w: World): World => ({
  files: new Map(w.files),
  held: new Set(w.held),
  removed: new Set(w.removed),
  procs: w.procs.map((p) => ({ ...p })),
});

const keyOf = (w: World): string =>
  JSON.stringify([
    [...w.files.entries()].sort(),
    [...w.held].sort(),
    [...w.removed].sort(),
    w.procs.map((p) => [
      p.pc,
      p.step,
      p.attemptsLeft,
      p.holding,
      p.won,
      p.alive,
      p.published,
    ]),
  ]);

const live = { _tag: "Live" } as const;
const dead = { _tag: "Dead" } as const;
const gone = { _tag: "Gone" } as const;

/** The model's file calls for process `i`, counting calls. */
const modelIo = (
  w: World,
  i: number,
  calls: { n: number },
): ClaimIo<string> => {
  const self = w.procs[i];
  assert.ok(self !== undefined);
  return {
    publish: () => {
      calls.n++;
      const name = `c${i}.${self.published++}`;
      const flock = self.kind !== "node";
      w.files.set(name, { owner: i, flock });
      if (flock) w.held.add(name);
      return Result.succeed({ name, holder: name });
    },
    list: () => {
      calls.n++;
      return Result.succeed([...w.files.keys()].sort());
    },
    judge: (name): Judged => {
      calls.n++;
      const claim = w.files.get(name);
      if (claim === undefined) return { liveness: gone, pid: undefined };
      const pid = claim.owner;
      if (claim.flock && self.kind !== "node") {
        return { liveness: w.held.has(name) ? live : dead, pid };
      }
      if (self.kind === "deno-no-run") {
        return {
          liveness: {
            _tag: "Unknown",
            reason: "checking whether the process is alive needs --allow-run",
            permission: "--allow-run",
          },
          pid,
        };
      }
      const owner = w.procs[claim.owner];
      return {
        liveness: owner !== undefined && owner.alive ? live : dead,
        pid,
      };
    },
    remove: (name) => {
      calls.n++;
      if (w.files.delete(name)) w.removed.add(name);
    },
    drop: (holder) => {
      calls.n++;
      w.held.delete(holder);
    },
  };
};

/** Moves a process whose step settled on to its next operation. */
const normalize = (p: Proc): void => {
  for (;;) {
    const step = p.step;
    if (step !== undefined && !isSettled(step)) return;
    if (step !== undefined) {
      if (step._tag === "Won") {
        p.holding = true;
        p.won = true;
        p.pc++;
        p.step = undefined;
        // Holding: the release starts at this process's next step.
        const next = p.program[p.pc];
        if (next === "release") {
          p.step = { _tag: "Release", own: step.own };
          return;
        }
      } else if (
        (step._tag === "Lost" || step._tag === "Failed") && p.attemptsLeft > 1
      ) {
        p.attemptsLeft--;
        p.step = startAcquire;
        return;
      } else {
        p.pc++;
        p.step = undefined;
      }
    }
    const op = p.program[p.pc];
    if (op === undefined) return;
    if (op === "release") {
      // The acquire before it lost: nothing to release.
      p.pc++;
      continue;
    }
    p.attemptsLeft = ATTEMPTS;
    p.won = false;
    p.step = startAcquire;
    return;
  }
};

const runnable = (p: Proc): boolean => p.alive && p.step !== undefined;

interface Figures {
  states: number;
  transitions: number;
  finals: number;
  crashes: number;
  spuriousRefusals: number;
}

/** Checks what must hold in every state. */
const checkState = (w: World, trail: string): void => {
  const holders = w.procs.filter((p) => p.alive && p.holding);
  assert.ok(holders.length <= 1, `two holders at once after ${trail}`);
  w.procs.forEach((p, i) => {
    if (!(p.alive && p.holding) || p.step?._tag !== "Release") return;
    const own = p.step.own.name;
    assert.ok(
      w.files.has(own),
      `the claim of holder ${i} was removed after ${trail}`,
    );
  });
  for (const name of w.files.keys()) {
    assert.ok(!w.removed.has(name), `claim ${name} came back after ${trail}`);
  }
};

/** Checks what must hold when every process is done (or dead). */
const checkFinal = (w: World, trail: string): void => {
  assert.ok(!w.files.has("dead"), `the dead claim stayed after ${trail}`);
  for (const [name, claim] of w.files) {
    const owner = w.procs[claim.owner];
    assert.ok(
      owner !== undefined && !owner.alive,
      `a live process left claim ${name} after ${trail}`,
    );
  }
  // Eventually: a new full-permission Deno writer, alone, wins.
  const after = clone(w);
  after.procs.push({
    kind: "deno",
    program: ["acquire"],
    mayCrash: false,
    pc: 0,
    step: startAcquire,
    attemptsLeft: 1,
    holding: false,
    won: false,
    alive: true,
    published: 0,
  });
  const last = after.procs.length - 1;
  let step: ClaimStep<string> = startAcquire;
  while (!isSettled(step)) {
    step = claimStep(modelIo(after, last, { n: 0 }), step);
  }
  assert.equal(step._tag, "Won", `a new writer lost after ${trail}`);
};

/**
 * Explores every schedule from `start`; returns the number of complete
 * schedules and fills `figures`.
 */
const explore = (start: World, figures: Figures): bigint => {
  const memo = new Map<string, bigint>();
  const visit = (w: World, trail: string): bigint => {
    const key = keyOf(w);
    const known = memo.get(key);
    if (known !== undefined) return known;
    figures.states++;
    checkState(w, trail);
    let paths = 0n;
    let any = false;
    w.procs.forEach((p, i) => {
      if (!runnable(p)) return;
      any = true;
      const step = p.step;
      assert.ok(step !== undefined);
      // Process i takes one step.
      const next = clone(w);
      const q = next.procs[i];
      assert.ok(q !== undefined);
      const calls = { n: 0 };
      if (step._tag === "Release") q.holding = false;
      const stepped = claimStep(modelIo(next, i, calls), step);
      assert.ok(calls.n <= 1, `step ${step._tag} made ${calls.n} file calls`);
      if (
        stepped._tag === "Lost" &&
        !w.procs.some((o, j) => j !== i && o.alive && o.holding)
      ) {
        figures.spuriousRefusals++;
      }
      q.step = stepped;
      normalize(q);
      figures.transitions++;
      paths += visit(next, `${trail} ${i}:${step._tag}`);
      // Or process i is killed here.
      if (p.mayCrash) {
        const killed = clone(w);
        const k = killed.procs[i];
        assert.ok(k !== undefined);
        k.alive = false;
        for (const [name, claim] of killed.files) {
          if (claim.owner === i) killed.held.delete(name);
        }
        figures.crashes++;
        figures.transitions++;
        paths += visit(killed, `${trail} ${i}:killed`);
      }
    });
    if (!any) {
      figures.finals++;
      checkFinal(w, trail);
      paths = 1n;
    }
    memo.set(key, paths);
    return paths;
  };
  return visit(start, "start");
};

const proc = (
  kind: Kind,
  program: ReadonlyArray<Op>,
  mayCrash = false,
): Proc => {
  const p: Proc = {
    kind,
    program,
    mayCrash,
    pc: 0,
    step: undefined,
    attemptsLeft: ATTEMPTS,
    holding: false,
    won: false,
    alive: true,
    published: 0,
  };
  normalize(p);
  return p;
};

const world = (
  deadFlock: boolean,
  kinds: readonly [Kind, Kind, Kind],
  mayCrash: number,
): World => ({
  files: new Map([["dead", { owner: -1, flock: deadFlock }]]),
  held: new Set(),
  removed: new Set(),
  procs: [
    proc(
      kinds[0],
      ["acquire", "release", "acquire", "release"],
      mayCrash === 0,
    ),
    proc(kinds[1], ["acquire", "release"], mayCrash === 1),
    proc(kinds[2], ["acquire", "release"], mayCrash === 2),
  ],
});

interface Configuration {
  readonly name: string;
  /** Whether the writer that died before the start held an flock. */
  readonly deadFlock: boolean;
  readonly kinds: readonly [Kind, Kind, Kind];
  /** The process that may be killed between any two steps. */
  readonly mayCrash: number;
}

const configurations: ReadonlyArray<Configuration> = [
  {
    name: "three Deno writers (flock), a dead Deno writer's claim",
    deadFlock: true,
    kinds: ["deno", "deno", "deno"],
    mayCrash: 2,
  },
  {
    name: "three Node writers (pid), a dead Node writer's claim",
    deadFlock: false,
    kinds: ["node", "node", "node"],
    mayCrash: 2,
  },
  {
    name: "Deno, Node (killable) and Deno writers, a dead 0.2 pid lock",
    deadFlock: false,
    kinds: ["deno", "node", "deno"],
    mayCrash: 1,
  },
  {
    name:
      "Deno without --allow-run, Node (killable) and Deno writers, a dead Deno writer's claim",
    deadFlock: true,
    kinds: ["deno-no-run", "node", "deno"],
    mayCrash: 1,
  },
];

Deno.test("the writer claim admits one writer under every interleaving", async (t) => {
  let total = 0n;
  let states = 0;
  for (const { name, deadFlock, kinds, mayCrash } of configurations) {
    await t.step(name, () => {
      const figures: Figures = {
        states: 0,
        transitions: 0,
        finals: 0,
        crashes: 0,
        spuriousRefusals: 0,
      };
      const schedules = explore(world(deadFlock, kinds, mayCrash), figures);
      total += schedules;
      states += figures.states;
      console.log(
        `${name}: ${schedules} interleavings, ${figures.states} states, ` +
          `${figures.transitions} transitions (${figures.crashes} kills), ` +
          `${figures.finals} final states, ` +
          `${figures.spuriousRefusals} refusals with no holder`,
      );
      assert.ok(schedules > 0n);
    });
  }
  console.log(`claim interleavings explored: ${total} (${states} states)`);
});
