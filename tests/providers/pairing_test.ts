import assert from "node:assert/strict";
import fc from "fast-check";
import { checkTranscript, type Message } from "@palimpsest/session";
import {
  MISSING_RESULT_TEXT,
  pairToolCalls,
} from "@palimpsest/session/providers";
import {
  hostileMessagesArb,
  logCutsArb,
  sessionCutsArb,
} from "../_helpers/message_gen.ts";
import { fromModel } from "./_messages.ts";

/** An assistant message saying "t" and calling `tool-<id>` for each id. */
const assistant = (id: string, ...calls: string[]): Message =>
  fromModel(id, [
    { type: "text", text: "t" },
    ...calls.map((call) => ({
      type: "tool-call" as const,
      id: call,
      name: `tool-${call}`,
      arguments: "{}",
    })),
  ]);
const result = (callId: string, id = `r-${callId}`): Message => ({
  id,
  role: "user",
  source: { kind: "tool", callId },
  content: [{ type: "tool-result", toolCallId: callId, content: [] }],
});
/** A user message; its content is its id as text unless given. */
const user = (
  id: string,
  content: Message["content"] = [{ type: "text", text: id }],
): Message => ({ id, role: "user", source: { kind: "user" }, content });

Deno.test("pairToolCalls() leaves a clean transcript as it is, sharing its messages", () => {
  const messages = [
    user("u0"),
    assistant("a1", "c1", "c2"),
    result("c1"),
    result("c2"),
    user("u1"),
  ];
  const paired = pairToolCalls(messages);
  assert.deepEqual(paired.repairs, []);
  assert.equal(paired.messages.length, messages.length);
  paired.messages.forEach((m, i) => assert.equal(m, messages[i]));
});

Deno.test("pairToolCalls() answers an unanswered call with a synthetic error result", () => {
  const paired = pairToolCalls([user("u0"), assistant("a1", "c1"), user("u2")]);
  assert.deepEqual(paired.repairs, [
    {
      _tag: "SyntheticToolResult",
      callId: "c1",
      name: "tool-c1",
      messageIndex: 1,
    },
  ]);
  assert.deepEqual(paired.messages.map((m) => m.id), [
    "u0",
    "a1",
    "a1:c1:missing",
    "u2",
  ]);
  assert.deepEqual(paired.messages[2], {
    id: "a1:c1:missing",
    role: "user",
    source: { kind: "tool", callId: "c1" },
    content: [{
      type: "tool-result",
      toolCallId: "c1",
      isError: true,
      content: [{ type: "text", text: MISSING_RESULT_TEXT }],
    }],
  });
});

Deno.test("pairToolCalls() drops unknown, late and duplicate results", () => {
  const paired = pairToolCalls([
    result("x"),
    assistant("a1", "c1"),
    result("c1"),
    result("c1", "again"),
    assistant("a2"),
    result("c1", "late"),
  ]);
  assert.deepEqual(paired.repairs, [
    {
      _tag: "DroppedToolResult",
      callId: "x",
      reason: "unknown",
      messageIndex: 0,
      blockIndex: 0,
    },
    {
      _tag: "DroppedToolResult",
      callId: "c1",
      reason: "duplicate",
      messageIndex: 3,
      blockIndex: 0,
    },
    {
      _tag: "DroppedToolResult",
      callId: "c1",
      reason: "late",
      messageIndex: 5,
      blockIndex: 0,
    },
  ]);
  assert.deepEqual(paired.messages.map((m) => m.id), ["a1", "r-c1", "a2"]);
});

Deno.test("pairToolCalls() drops a repeated call id and calls or results in the wrong role", () => {
  const misplaced = user("u", [
    { type: "tool-call", id: "c9", name: "n", arguments: "{}" },
    { type: "text", text: "q" },
  ]);
  const withResult: Message = {
    ...assistant("a2", "c1"),
    content: [{ type: "tool-result", toolCallId: "c0", content: [] }],
  };
  const paired = pairToolCalls([
    misplaced,
    assistant("a1", "c1"),
    result("c1"),
    assistant("a2", "c1"),
    withResult,
  ]);
  assert.deepEqual(paired.repairs, [
    {
      _tag: "DroppedToolCall",
      callId: "c9",
      reason: "outside-assistant-message",
      messageIndex: 0,
      blockIndex: 0,
    },
    {
      _tag: "DroppedToolCall",
      callId: "c1",
      reason: "duplicate",
      messageIndex: 3,
      blockIndex: 1,
    },
    {
      _tag: "DroppedToolResult",
      callId: "c0",
      reason: "in-assistant-message",
      messageIndex: 4,
      blockIndex: 0,
    },
  ]);
  assert.deepEqual(paired.messages.map((m) => m.content.map((b) => b.type)), [
    ["text"],
    ["text", "tool-call"],
    ["tool-result"],
    ["text"],
    [],
  ]);
});

Deno.test("pairToolCalls() moves a result ahead of the messages between its call and it", () => {
  const paired = pairToolCalls([
    assistant("a1", "c1", "c2"),
    user("steer"),
    result("c2"),
    result("c1"),
  ]);
  assert.deepEqual(paired.repairs, [
    { _tag: "MovedToolResult", callId: "c2", messageIndex: 2 },
    { _tag: "MovedToolResult", callId: "c1", messageIndex: 3 },
  ]);
  assert.deepEqual(paired.messages.map((m) => m.id), [
    "a1",
    "r-c1",
    "r-c2",
    "steer",
  ]);
});

Deno.test("pairToolCalls() splits a message mixing results and text", () => {
  const mixed = user("mix", [
    { type: "text", text: "also" },
    { type: "tool-result", toolCallId: "c1", content: [] },
  ]);
  const paired = pairToolCalls([assistant("a1", "c1"), mixed]);
  assert.deepEqual(paired.repairs, []);
  assert.deepEqual(
    paired.messages.map((m) => [m.id, m.content.map((b) => b.type)]),
    [
      ["a1", ["text", "tool-call"]],
      ["mix:c1", ["tool-result"]],
      ["mix", ["text"]],
    ],
  );
});

/** The law every adapter relies on: results right after their calls, in order. */
const assertPaired = (messages: ReadonlyArray<Message>): void => {
  assert.deepEqual(checkTranscript(messages), []);
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message?.role !== "assistant") {
      for (const b of message?.content ?? []) {
        assert.notEqual(b.type, "tool-call");
      }
      continue;
    }
    const calls = message.content.flatMap((b) =>
      b.type === "tool-call" ? [b.id] : []
    );
    calls.forEach((id, k) => {
      const next = messages[i + 1 + k];
      assert.equal(next?.role, "user");
      assert.deepEqual(
        next?.content.map((b) =>
          b.type === "tool-result" ? b.toolCallId : b.type
        ),
        [id],
      );
    });
  }
};

/**
 * Every result of the input is sent or reported dropped, never both, and
 * every result sent is the input's or a reported synthetic one.
 */
const assertAccounted = (
  messages: ReadonlyArray<Message>,
  paired: ReturnType<typeof pairToolCalls>,
): void => {
  const sent = new Set<unknown>();
  for (const m of paired.messages) {
    for (const b of m.content) if (b.type === "tool-result") sent.add(b);
  }
  const dropped = new Set<string>();
  for (const r of paired.repairs) {
    if (r._tag === "DroppedToolResult") {
      dropped.add(`${r.messageIndex}:${r.blockIndex}`);
    }
  }
  let kept = 0;
  messages.forEach((m, i) =>
    m.content.forEach((b, j) => {
      if (b.type !== "tool-result") return;
      const isSent = sent.has(b);
      if (isSent) kept++;
      assert.notEqual(isSent, dropped.has(`${i}:${j}`), `result ${i}:${j}`);
    })
  );
  const synthetic =
    paired.repairs.filter((r) => r._tag === "SyntheticToolResult").length;
  assert.equal(sent.size, kept + synthetic);
};

const checkPairing = (messages: ReadonlyArray<Message>): void => {
  const once = pairToolCalls(messages);
  assertPaired(once.messages);
  assertAccounted(messages, once);
  const twice = pairToolCalls(once.messages);
  assert.deepEqual(twice.repairs, []);
  assert.deepEqual(twice.messages, once.messages);
  const clean = checkTranscript(messages).length === 0;
  if (clean) {
    // checkTranscript looks only at calls in assistant messages and results
    // elsewhere: the other repairs are for blocks it does not look at.
    assert.ok(once.repairs.every((r) =>
      r._tag === "MovedToolResult" ||
      (r._tag === "DroppedToolCall" &&
        r.reason === "outside-assistant-message") ||
      (r._tag === "DroppedToolResult" && r.reason === "in-assistant-message")
    ));
  }
};

Deno.test("pairToolCalls() pairs generated logs cut at every position, and is idempotent", () => {
  fc.assert(
    fc.property(logCutsArb, (cuts) => cuts.forEach(checkPairing)),
    { seed: 13, numRuns: 150 },
  );
});

Deno.test("pairToolCalls() pairs generated sessions with rewrites cut at every position", () => {
  fc.assert(
    fc.property(sessionCutsArb, (cuts) => cuts.forEach(checkPairing)),
    { seed: 13, numRuns: 100 },
  );
});

Deno.test("pairToolCalls() pairs hostile hand-built lists", () => {
  fc.assert(
    fc.property(hostileMessagesArb, checkPairing),
    { seed: 13, numRuns: 500 },
  );
});
