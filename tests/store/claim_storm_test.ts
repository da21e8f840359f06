/**
 * The claim storm (`tests/_helpers/claim_storm.ts`) in the suite: five
 * writers at once on one JSONL session, one in three under `strace` with
 * every claim system call delayed, a SIGKILL every 1.5 s (the holder when
 * there is one), dead and pid-reused claims planted as it runs. Never two
 * holders at once, no acknowledged append lost, no claim left.
 *
 * The suite runs 15 s of it; the long profile (`FUZZ_PROFILE=long`, as
 * `deno task campaigns` sets) runs 120 s. The writers here are Deno
 * processes; `node/test/claim.test.mjs` runs the same storm with Node and
 * Deno writers on the installed package (`node/smoke.sh`).
 */
import assert from "node:assert/strict";
import { describeStorm, runStorm } from "../_helpers/claim_storm.ts";

const seconds = Deno.env.get("FUZZ_PROFILE") === "long" ? 120 : 15;

Deno.test(`a ${seconds} s claim storm never admits two writers and loses no acknowledged append`, async () => {
  const report = await runStorm({
    durationMs: seconds * 1000,
    writers: 5,
    killEveryMs: 1_500,
    delayUs: 20_000,
  });
  console.log(describeStorm(report, seconds));
  assert.deepEqual(report.problems, []);
  assert.equal(report.overlaps, 0);
  assert.equal(report.doubleAcks, 0);
  assert.equal(report.found, report.acknowledged);
  assert.deepEqual(report.claimsLeft, []);
  // The storm reached what it is about: kills of the holder, slowed
  // writers, planted claims reclaimed, many holds.
  assert.ok(report.killedHolders > 0, "no holder was killed");
  assert.ok(report.slowed > 0 && report.planted > 0);
  assert.ok(report.holds > report.kills, `${report.holds} holds`);
  assert.ok(report.acknowledged > 0);
});
