/**
 * The crash campaign through the turn loop: the agent is killed (SIGKILL)
 * at its durable writes (before and after each) and in the middle of every
 * summary, then restarted with `runTurn` alone. The suite runs a spread of
 * the kill points (every summary and one write in six, about 13 kills); the
 * long profile (`FUZZ_PROFILE=long`, as `deno task campaigns` sets) runs
 * every one (64 with this agent). `deno task crash:turn` runs every kill
 * point as a script and prints the counts.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  killPoints,
  runTurnCampaign,
  summarize,
} from "../_helpers/turn_crash_campaign.ts";

const long = Deno.env.get("FUZZ_PROFILE") === "long";

Deno.test(`an agent killed at ${long ? "every one" : "a spread"} of its writes and mid-summary restarts with runTurn alone`, async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-turn-"));
  const all = await killPoints(root);
  const points = long
    ? all
    : all.filter((p, i) => p.startsWith("summary:") || i % 6 === 1);
  const outcomes = await runTurnCampaign(points, 2, root);
  const acknowledged = outcomes.reduce((s, o) => s + o.acknowledged, 0);
  console.log(`${summarize(outcomes)}, acknowledged appends ${acknowledged}`);
  assert.equal(outcomes.length, points.length);
  for (const o of outcomes) {
    assert.equal(o.problem, undefined, o.point);
    assert.equal(o.lost, 0, o.point);
  }
  // The kills reached the cases the campaign is about.
  assert.ok(outcomes.some((o) => o.turnLeftOpen && o.recovered > 0));
  assert.ok(outcomes.some((o) => o.compactionLeftOpen && o.compactedAfter));
  assert.ok(acknowledged > 0);
  if (long) {
    // Every write killed before and after it, and every summary.
    assert.ok(points.length >= 40, `${points.length} kill points`);
  }
});
