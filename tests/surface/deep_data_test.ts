import assert from "node:assert/strict";
import { Result } from "effect";
import type { SessionEvent } from "@palimpsest/session";
import { applyEventResult } from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { decodeEventResult } from "@palimpsest/session/schema";
import { failureOf, thenFails } from "../_helpers/then.ts";

const decode = (value: unknown): SessionEvent =>
  Result.getOrThrow(decodeEventResult(value));

const nested = (depth: number, leaf: number): unknown => {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

const toolResult = (
  seq: number,
  text: string,
  meta: unknown,
  extra: object,
): SessionEvent =>
  decode({
    type: "tool/result",
    seq,
    time: 0,
    data: {
      turn: 0,
      step: 0,
      meta,
      message: {
        id: "t",
        role: "user",
        content: [{
          type: "tool-result",
          toolCallId: "c",
          content: [{ type: "text", text }],
        }],
        source: { kind: "tool", callId: "c" },
      },
    },
    ...extra,
  });

const replaceFirst = {
  surfaceOp: { op: "replace", startSeq: 0, endSeq: 0 },
  sourceEventSeqs: [0],
};

Deno.test("a tool result rewrite compares deeply nested meta without overflowing the stack", () => {
  const depth = 200_000;
  const surface = Result.getOrThrow(
    replayResult([
      toolResult(0, "long", nested(depth, 1), { surfaceOp: "append" }),
    ]),
  );
  const same = applyEventResult(
    surface,
    toolResult(1, "short", nested(depth, 1), replaceFirst),
  );
  assert.ok(Result.isSuccess(same));
  const changed = applyEventResult(
    surface,
    toolResult(1, "short", nested(depth, 2), replaceFirst),
  );
  const error = thenFails(
    failureOf(changed),
    "ToolResultReplaceChangesMoreThanContent",
  );
  assert.equal(error.path[0], "meta");
  assert.equal(error.path.length, depth + 1);
});
