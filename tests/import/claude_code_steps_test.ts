/**
 * The Claude Code importer's steps one at a time: given a state, when a
 * line, then the state and the events the builder holds.
 */
import assert from "node:assert/strict";
import { makeBuilder } from "../../src/import/builder.ts";
import {
  assistantLine,
  claudeState,
  flush,
  lineRules,
  systemLine,
  userLine,
} from "../../src/import/claude_code.ts";
import { succeeds, T, types } from "./_steps.ts";

/** A line of the message `msg_1`, holding one content block. */
const part = (block: unknown) => ({
  type: "assistant",
  timestamp: T,
  message: { id: "msg_1", model: "claude", content: [block] },
});

Deno.test("claude-code steps: lines of one message id are joined, results wait for it", () => {
  const s = claudeState(makeBuilder());
  succeeds(userLine(s, {
    type: "user",
    timestamp: T,
    message: { role: "user", content: "list files" },
  }, 1));
  succeeds(assistantLine(s, part({ type: "text", text: "sure" }), 2));
  succeeds(assistantLine(
    s,
    part({ type: "tool_use", id: "t1", name: "ls", input: {} }),
    3,
  ));
  assert.deepEqual(s.pending?.content.map((b) => b.type), [
    "text",
    "tool-call",
  ]);
  assert.equal(types(s).includes("assistant/message"), false);
  succeeds(userLine(s, {
    type: "user",
    timestamp: T,
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "t1", content: "a.txt" }],
    },
  }, 4));
  // The message is still pending (another part may follow): the result waits.
  assert.equal(s.results.length, 1);
  succeeds(flush(s));
  assert.equal(s.pending, undefined);
  assert.deepEqual(s.results, []);
  const tail = types(s).filter((t) =>
    t.endsWith("/message") || t === "tool/result"
  );
  assert.deepEqual(tail, ["user/message", "assistant/message", "tool/result"]);
});

Deno.test("claude-code steps: a compact boundary waits for its summary", () => {
  const s = claudeState(makeBuilder());
  succeeds(systemLine(
    s,
    {
      type: "system",
      subtype: "compact_boundary",
      uuid: "b1",
      compactMetadata: { trigger: "manual" },
    },
    5,
    "system/compact_boundary",
  ));
  assert.deepEqual(s.boundary, {
    line: 5,
    id: "b1",
    auto: false,
    preserved: undefined,
  });
  assert.deepEqual(types(s), []);
});

Deno.test("claude-code steps: lineRules keeps the first session settings and skips sidechains", () => {
  const s = claudeState(makeBuilder());
  const first = {
    type: "user",
    sessionId: "s1",
    cwd: "/w",
    version: "2.0.0",
    timestamp: T,
    uuid: "u1",
    message: { role: "user", content: "hi" },
  };
  assert.equal(lineRules(s, first, 1, "user", "user"), undefined);
  assert.equal(s.sessionId, "s1");
  assert.equal(s.subagentFile, false);
  assert.equal(s.lineOf.get("u1"), 1);
  const side = { ...first, sessionId: "s2", isSidechain: true, uuid: "u2" };
  const settled = lineRules(s, side, 2, "user", "user");
  assert.notEqual(settled, undefined);
  assert.equal(s.sessionId, "s1");
  assert.deepEqual(s.b.skipped.get("user (sidechain)")?.lines, [2]);
});
