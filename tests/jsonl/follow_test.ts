import assert from "node:assert/strict";
import { Result } from "effect";
import { encodeHeaderLine } from "@palimpsest/session/jsonl";
import { makeLineFollower } from "../../src/jsonl/follow.ts";
import { thenFails } from "../_helpers/then.ts";

const encoder = new TextEncoder();

Deno.test("a follower reports a bad line as the reader does: its number, its start, the rule", () => {
  // Given a log whose second line is not JSON and longer than an excerpt.
  const follower = makeLineFollower(0, undefined, 1024);
  const bad = `{${"x".repeat(80)}`;
  const header = encodeHeaderLine({ id: "s", createdAt: 0, isSeeded: false });
  // When a follower is pushed the log, then it stops at line 2.
  const pushed = follower.push(encoder.encode(`${header}${bad}\n`));
  assert.ok(Result.isFailure(pushed));
  thenFails(pushed.failure, "CorruptLine", {
    line: 2,
    excerpt: `${bad.slice(0, 60)}...`,
    innerTag: "InvalidJson",
  });
});
