import assert from "node:assert/strict";
import { Result } from "effect";
import { surfaceNodes } from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { decodeEventResult } from "@palimpsest/session/schema";
import { workload } from "./workload.ts";

Deno.test("the standard workload folds, with its prunes and compactions", () => {
  const { events, lines, nodes } = workload({ events: 20_000, seed: 7 });
  assert.equal(events.length, 20_000);
  assert.equal(lines.length, 20_000);
  const result = replayResult(events);
  if (Result.isFailure(result)) assert.fail(result.failure.error._tag);
  const surface = result.success;
  assert.equal(surface.length, nodes);
  const count = (type: string) => events.filter((e) => e.type === type).length;
  const prunes = count("compaction/prune");
  const compactions = count("compaction/start");
  assert.equal(compactions, 4);
  assert.equal(prunes, 49);
  assert.equal(surface.replacements, prunes + compactions);
  assert.equal(new Set(surfaceNodes(surface)).size, surface.length);
});

Deno.test("the standard workload is the same for the same seed", () => {
  const a = workload({ events: 3_000, seed: 3 });
  const b = workload({ events: 3_000, seed: 3 });
  const c = workload({ events: 3_000, seed: 4 });
  assert.deepEqual(a.lines, b.lines);
  assert.notDeepEqual(a.lines, c.lines);
  for (const line of a.lines.slice(0, 50)) {
    assert.equal(Result.isSuccess(decodeEventResult(JSON.parse(line))), true);
  }
});

Deno.test("the standard workload stops at a node count", () => {
  const { events, nodes } = workload({ nodes: 5_000, lines: false });
  const result = replayResult(events);
  if (Result.isFailure(result)) assert.fail(result.failure.error._tag);
  assert.equal(nodes, 5_000);
  assert.equal(result.success.length, 5_000);
});
