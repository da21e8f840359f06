import assert from "node:assert/strict";
import { checkTranscript, type Message } from "@palimpsest/session";

const model = { kind: "model", provider: "p", model: "m" } as const;
const assistant = (id: string, ...calls: string[]): Message => ({
  id,
  role: "assistant",
  source: model,
  content: [
    { type: "text", text: "t" },
    ...calls.map((call) => ({
      type: "tool-call" as const,
      id: call,
      name: "n",
      arguments: "{}",
    })),
  ],
});
const result = (callId: string): Message => ({
  id: `r-${callId}`,
  role: "user",
  source: { kind: "tool", callId },
  content: [{ type: "tool-result", toolCallId: callId, content: [] }],
});
const user: Message = {
  id: "u",
  role: "user",
  source: { kind: "user" },
  content: [{ type: "text", text: "q" }],
};

/** The violation of a call (the message's block 1) left unanswered. */
const unanswered = (
  messageIndex: number,
  nextAssistantIndex: number | undefined,
) => ({
  _tag: "UnansweredToolCall",
  callId: "c1",
  messageIndex,
  blockIndex: 1,
  nextAssistantIndex,
});

/** The violation of a result (the message's block 0) no earlier call asked for. */
const unknownResult = (
  callId: string,
  messageIndex: number,
  late: boolean,
) => ({
  _tag: "UnknownToolResult",
  callId,
  messageIndex,
  blockIndex: 0,
  late,
});

Deno.test("checkTranscript names each call and result that is not paired", async (t) => {
  await t.step("a paired transcript is clean", () => {
    assert.deepEqual(
      checkTranscript([
        user,
        assistant("a0", "c1", "c2"),
        result("c2"),
        result("c1"),
        assistant("a1"),
        user,
      ]),
      [],
    );
    assert.deepEqual(checkTranscript([]), []);
  });
  await t.step("a call unanswered before the next assistant message", () => {
    assert.deepEqual(
      checkTranscript([assistant("a0", "c1"), user, assistant("a1")]),
      [unanswered(0, 2)],
    );
  });
  await t.step("a call unanswered at the end", () => {
    assert.deepEqual(checkTranscript([user, assistant("a0", "c1")]), [
      unanswered(1, undefined),
    ]);
  });
  await t.step("a second result for one call", () => {
    assert.deepEqual(
      checkTranscript([assistant("a0", "c1"), result("c1"), result("c1")]),
      [{
        _tag: "DuplicateToolResult",
        callId: "c1",
        messageIndex: 2,
        blockIndex: 0,
        firstMessageIndex: 1,
      }],
    );
  });
  await t.step("a result for an unknown call", () => {
    assert.deepEqual(checkTranscript([user, result("zz")]), [
      unknownResult("zz", 1, false),
    ]);
  });
  await t.step("a result after the next assistant message is late", () => {
    const violations = checkTranscript([
      assistant("a0", "c1"),
      assistant("a1"),
      result("c1"),
    ]);
    assert.deepEqual(violations, [
      unanswered(0, 1),
      unknownResult("c1", 2, true),
    ]);
  });
  await t.step("a call id used twice", () => {
    const violations = checkTranscript([
      assistant("a0", "c1"),
      result("c1"),
      assistant("a1", "c1"),
    ]);
    assert.deepEqual(violations, [{
      _tag: "DuplicateToolCall",
      callId: "c1",
      messageIndex: 2,
      blockIndex: 1,
    }]);
  });
});
