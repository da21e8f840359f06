/**
 * The JSONL writer claim between real processes after a writer was killed
 * (issue 21, case 1): `claim_writer.ts` processes take the claim, and the
 * test counts how many hold it at once and checks that every append they
 * were told succeeded is in the file.
 *
 * - **Forced**: one process (B) runs under `strace`, some of its system
 *   calls delayed, and two ready processes (A and C) are told to open at
 *   chosen points of B's progress. With every `link` and `rename` of B slowed,
 *   A opens while B is stalled in its second call on a claim file and C in its
 *   third: the schedule in which 0.2's reclaim (rename aside, link back) let A
 *   and C both write. With every directory read of B slowed, A opens before B
 *   publishes its claim and C while B lists the claims.
 * - **Raced**: six ready processes are told to open at once right after a
 *   writer holding the session was killed with SIGKILL, for several rounds.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { claimsOf, tempDir } from "../_helpers/store.ts";
import {
  claimWriterScript as script,
  denoWriter,
  killHolder,
  newSession,
  spawnWriter,
  type Writer,
} from "../_helpers/claim_writers.ts";
import { delaying } from "../_helpers/line_process.ts";

/** The turn (the writer's pid) of each stored event, by seq. */
const turnsBySeq = (file: string): Map<number, number> => {
  const turns = new Map<number, number>();
  for (const line of fs.readFileSync(file, "utf8").split("\n").slice(1)) {
    if (line === "") continue;
    const event = JSON.parse(line);
    turns.set(event.seq, event.data.turn);
  }
  return turns;
};

interface Admitted {
  readonly writer: Writer;
  readonly pid: number;
}

/**
 * Tells every admitted writer to append once, then checks that each
 * acknowledged append is in the file; returns how many were acknowledged.
 */
const appendOnceEach = async (
  file: string,
  admitted: ReadonlyArray<Admitted>,
): Promise<{ acknowledged: number; found: number }> => {
  const acks: Array<{ seq: number; pid: number }> = [];
  for (const { writer, pid } of admitted) {
    await writer.send("append");
    const reply = (await writer.line()) ?? "";
    const match = /^appended (\d+)$/.exec(reply);
    if (match !== null) acks.push({ seq: Number(match[1]), pid });
  }
  const turns = turnsBySeq(file);
  const found = acks.filter((a) => turns.get(a.seq) === a.pid).length;
  return { acknowledged: acks.length, found };
};

/** A schedule forced on real processes by slowing B's system calls. */
interface Forced {
  /** strace's `-e` arguments: what to trace and delay. */
  readonly trace: ReadonlyArray<string>;
  /** Whether a line of strace's log is one of B's slowed claim calls. */
  readonly counts: (line: string) => boolean;
  /** A opens once B has entered this many such calls, C at the second. */
  readonly stages: readonly [number, number];
}

/**
 * Runs the schedule after a SIGKILLed writer: B slowed, A and C told to
 * open at the stages; each admitted writer appends once. Returns what each
 * printed first, and the counts.
 */
const runForced = async (forced: Forced) => {
  const root = tempDir("claim-forced-");
  const file = await newSession(root);
  await killHolder(root);
  // A and C are started and ready first, so that they open within
  // milliseconds of being told.
  const a = denoWriter(root);
  const c = denoWriter(root);
  assert.equal(await a.line(), "ready");
  assert.equal(await c.line(), "ready");
  const log = path.join(root, "strace.log");
  const b = spawnWriter("strace", [
    "-f",
    "-qq",
    "-y",
    "-o",
    log,
    ...forced.trace,
    Deno.execPath(),
    "run",
    "-A",
    script,
    root,
    "s",
    "now",
  ]);
  let bFirst: string | undefined;
  let bDone = false;
  const bLine = b.line().then((line) => {
    bFirst = line;
    bDone = true;
  });
  /** Waits until B has entered its `n`th slowed call, or is done. */
  const stalledIn = async (n: number): Promise<void> => {
    while (!bDone) {
      const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
      const entered = text.split("\n").filter((l) =>
        forced.counts(l) && !l.includes("resumed>")
      ).length;
      if (entered >= n) {
        return;
      }
      await new Promise((resolve) =>
        setTimeout(resolve, 5)
      );
    }
  };
  await stalledIn(forced.stages[0]);
  await a.send("open");
  const aFirst = (await a.line()) ?? "";
  await stalledIn(forced.stages[1]);
  await c.send("open");
  const cFirst = (await c.line()) ?? "";
  await bLine;
  const firsts = [
    { writer: a, first: aFirst },
    { writer: b, first: bFirst ?? "" },
    { writer: c, first: cFirst },
  ];
  const admitted: Admitted[] = firsts.flatMap(({ writer, first }) => {
    const match = /^opened (\d+)$/.exec(first);
    return match === null ? [] : [{ writer, pid: Number(match[1]) }];
  });
  const { acknowledged, found } = await appendOnceEach(file, admitted);
  for (const w of [a, b, c]) await w.end();
  await Promise.all([a.status, b.status, c.status]);
  const claims = claimsOf(file);
  fs.rmSync(root, { recursive: true });
  const tag = (line: string | undefined) => (line ?? "").split(" ")[0];
  return {
    outcome: `A ${tag(aFirst)}, B ${tag(bFirst)}, C ${tag(cFirst)}`,
    admitted: admitted.length,
    acknowledged,
    found,
    claims,
  };
};

/** A race forced by slowing B's system calls, and the label of its report. */
interface ForcedCase extends Forced {
  readonly name: string;
  readonly label: string;
}

const forcedCases: ReadonlyArray<ForcedCase> = [
  {
    // Every link and rename of B takes 1 s: on 0.2, B judged the dead lock
    // stale, A reclaimed it, B moved A's fresh lock aside, C took the name
    // while B linked it back, and B deleted A's lock.
    name:
      "a writer slowed by strace between reclaim steps never lets two writers in",
    label: "link, rename",
    trace: delaying("rename,renameat,renameat2,link,linkat", 1_000_000),
    counts: (line) => line.includes(".lock"),
    stages: [2, 3],
  },
  {
    // Every directory read of B takes 0.3 s: A opens while B looks for stale
    // temporary files before publishing its claim, C while B lists the
    // claims after publishing it.
    name:
      "a writer slowed by strace while it lists the claims never lets two writers in",
    label: "directory reads",
    trace: delaying("getdents64", 300_000),
    counts: (line) => line.includes("claim-forced-"),
    stages: [1, 3],
  },
];

for (const { name, label, ...race } of forcedCases) {
  Deno.test(name, async () => {
    const forced = await runForced(race);
    console.log(
      `forced (${label}): ${forced.outcome}; writers admitted at once: ${forced.admitted}; acknowledged appends: ${forced.acknowledged}, found in the file: ${forced.found}`,
    );
    assert.ok(forced.admitted <= 1, "two writers were admitted at once");
    assert.equal(forced.found, forced.acknowledged);
    assert.deepEqual(forced.claims, []);
  });
}

Deno.test("six processes race for a session whose writer was killed", async () => {
  const root = tempDir("claim-race-");
  const file = await newSession(root);
  const racers = Array.from({ length: 6 }, () => denoWriter(root));
  for (const r of racers) assert.equal(await r.line(), "ready");
  const rounds = 6;
  // Over all rounds: the most writers admitted at once, opens refused,
  // rounds where every open was refused, appends acknowledged and found.
  const total = {
    maxAdmitted: 0,
    refused: 0,
    noWriter: 0,
    acknowledged: 0,
    found: 0,
  };
  for (let round = 0; round < rounds; round++) {
    await killHolder(root);
    await Promise.all(racers.map((r) => r.send("open")));
    const firsts = await Promise.all(racers.map((r) => r.line()));
    const admitted: Admitted[] = [];
    firsts.forEach((first, i) => {
      const match = /^opened (\d+)$/.exec(first ?? "");
      const writer = racers[i];
      if (match !== null && writer !== undefined) {
        admitted.push({ writer, pid: Number(match[1]) });
      } else total.refused++;
    });
    total.maxAdmitted = Math.max(total.maxAdmitted, admitted.length);
    const { acknowledged, found } = await appendOnceEach(file, admitted);
    total.acknowledged += acknowledged;
    total.found += found;
    for (const { writer } of admitted) {
      await writer.send("close");
      assert.equal(await writer.line(), "closed");
    }
    assert.ok(admitted.length <= 1, `round ${round}: two writers at once`);
    if (admitted.length === 0) total.noWriter++;
  }
  for (const r of racers) await r.end();
  await Promise.all(racers.map((r) => r.status));
  console.log(
    `raced: ${rounds} rounds of 6 processes after a SIGKILLed writer; writers admitted at once: at most ${total.maxAdmitted}; refused: ${total.refused}; rounds where all were refused: ${total.noWriter}; acknowledged appends: ${total.acknowledged}, found in the file: ${total.found}`,
  );
  assert.equal(total.found, total.acknowledged);
  assert.deepEqual(claimsOf(file), []);
  fs.rmSync(root, { recursive: true });
});
