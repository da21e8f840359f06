import assert from "node:assert/strict";
import { runCampaign } from "../_helpers/crash_campaign.ts";

Deno.test("a writer killed at random points never loses a resolved batch", async () => {
  const outcomes = await runCampaign(50, 6, 1);
  assert.equal(outcomes.length, 50);
  for (const outcome of outcomes) {
    assert.equal(outcome.problem, undefined, `seed ${outcome.seed}`);
    assert.ok(outcome.events >= outcome.acknowledged);
    if (outcome.tore) assert.ok(outcome.tornBytes > 0);
  }
  // Most runs stop mid-turn, so repair has work to do.
  assert.ok(outcomes.some((o) => o.closers > 0));
});
