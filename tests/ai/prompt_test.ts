import assert from "node:assert/strict";
import fc from "fast-check";
import { Schema } from "effect";
import * as Prompt from "effect/ai/Prompt";
import type { Message } from "@palimpsest/session";
import { toPrompt } from "@palimpsest/session/ai";
import { MISSING_RESULT_TEXT } from "@palimpsest/session/providers";
import {
  hostileMessagesArb,
  logCutsArb,
  sessionCutsArb,
} from "../_helpers/message_gen.ts";
import { transcript } from "../_helpers/ai_fixture.ts";

Deno.test("toPrompt() maps roles, parts, tool names and failures", () => {
  const prompt = toPrompt(transcript);
  // The steering message moves after the results it interrupted.
  assert.deepEqual(prompt.content.map((m) => m.role), [
    "system",
    "user",
    "assistant",
    "tool",
    "user",
    "system",
    "assistant",
  ]);
  const [system, user, assistant, tool] = prompt.content;
  assert.equal(system?.role === "system" && system.content, "be brief");
  assert.ok(user?.role === "user");
  assert.deepEqual(
    user.content.map((p) => p.type === "text" ? p.text : p.mediaType),
    [
      "look",
      "image/png",
      "image/bmp",
      "application/pdf",
      "application/octet-stream",
      "[file omitted]",
    ],
  );
  assert.ok(assistant?.role === "assistant");
  assert.deepEqual(
    assistant.content.map((p) =>
      p.type === "tool-call" ? [p.name, p.params] : [p.type]
    ),
    [
      ["reasoning"],
      ["text"],
      ["read", { path: "a" }],
      ["grep", { invalid_json_arguments: "{bad" }],
    ],
  );
  assert.ok(tool?.role === "tool");
  assert.deepEqual(
    tool.content.map((p) =>
      p.type === "tool-result"
        ? [p.id, p.name, p.isFailure, p.result, p.modelOutput?.length]
        : []
    ),
    [
      ["c.1", "read", false, "contents", 2],
      // The unanswered call gets the pairing pass's synthetic error result.
      ["c2", "grep", true, MISSING_RESULT_TEXT, undefined],
    ],
  );
});

/** Each assistant tool call is answered by the next message, a tool message, in order. */
const assertAnswered = (prompt: Prompt.Prompt): void => {
  const messages = prompt.content;
  messages.forEach((message, i) => {
    if (message.role === "tool") {
      assert.equal(messages[i - 1]?.role, "assistant");
    }
    if (message.role !== "assistant") return;
    const calls = message.content.flatMap((p) =>
      p.type === "tool-call" ? [p.id] : []
    );
    const next = messages[i + 1];
    if (calls.length === 0) {
      assert.notEqual(next?.role, "tool");
      return;
    }
    assert.ok(next?.role === "tool");
    assert.deepEqual(
      next.content.map((p) => p.type === "tool-result" ? p.id : p.type),
      calls,
    );
  });
  for (const message of messages) {
    if (message.role !== "system") assert.ok(message.content.length > 0);
  }
};

const checkPrompt = (messages: ReadonlyArray<Message>): void => {
  const prompt = toPrompt(messages);
  assertAnswered(prompt);
  Schema.encodeSync(Prompt.Prompt)(prompt);
};

Deno.test("toPrompt() answers every call, for generated logs cut at every position", () => {
  fc.assert(fc.property(logCutsArb, (cuts) => cuts.forEach(checkPrompt)), {
    seed: 13,
    numRuns: 100,
  });
  fc.assert(
    fc.property(sessionCutsArb, (cuts) => cuts.forEach(checkPrompt)),
    { seed: 13, numRuns: 60 },
  );
});

Deno.test("toPrompt() answers every call, for hostile hand-built lists", () => {
  fc.assert(fc.property(hostileMessagesArb, checkPrompt), {
    seed: 13,
    numRuns: 400,
  });
});
