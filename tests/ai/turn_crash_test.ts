/**
 * The bounded crash campaign through the turn loop, run with the suite:
 * the agent is killed (SIGKILL) at a spread of its durable writes (before
 * and after) and in the middle of every summary, then restarted with
 * `runTurn` alone. `deno task crash:turn` runs every kill point.
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

Deno.test("an agent killed at its writes and mid-summary restarts with runTurn alone", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-turn-"));
  const all = await killPoints(root);
  const points = all.filter((p, i) => p.startsWith("summary:") || i % 6 === 1);
  const outcomes = await runTurnCampaign(points, 2, root);
  console.log(summarize(outcomes));
  assert.equal(outcomes.length, points.length);
  for (const o of outcomes) {
    assert.equal(o.problem, undefined, o.point);
    assert.equal(o.lost, 0, o.point);
  }
  // The kills reached the cases the campaign is about.
  assert.ok(outcomes.some((o) => o.turnLeftOpen && o.recovered > 0));
  assert.ok(outcomes.some((o) => o.compactionLeftOpen && o.compactedAfter));
});
