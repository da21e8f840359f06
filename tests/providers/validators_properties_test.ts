import assert from "node:assert/strict";
import fc from "fast-check";
import type { Message } from "@palimpsest/session";
import {
  pairToolCalls,
  type RequestViolation,
  toAnthropic,
  toGemini,
  toOpenAIChat,
  toOpenAIResponses,
  validateAnthropic,
  validateGemini,
  validateOpenAIChat,
  validateOpenAIResponses,
} from "@palimpsest/session/providers";
import {
  hostileMessagesArb,
  logCutsArb,
  sessionCutsArb,
} from "../_helpers/message_gen.ts";
import {
  anthropicBody,
  geminiBody,
  openAIChatBody,
  openAIResponsesBody,
} from "../_helpers/request_bodies.ts";

type Check = (
  messages: ReadonlyArray<Message>,
) => ReadonlyArray<RequestViolation>;

/**
 * A provider's validator over its body of the messages: `withTools` as a
 * request with tools defined, `bare` the messages alone.
 */
const target = <B>(
  name: string,
  validate: (body: B) => ReadonlyArray<RequestViolation>,
  withTools: (messages: ReadonlyArray<Message>) => B,
  bare: (messages: ReadonlyArray<Message>) => B,
): { name: string; check: Check; checkBare: Check } => ({
  name,
  check: (m) => validate(withTools(m)),
  checkBare: (m) => validate(bare(m)),
});

const targets = [
  target("OpenAI Chat", validateOpenAIChat, openAIChatBody, toOpenAIChat),
  target(
    "OpenAI Responses",
    validateOpenAIResponses,
    openAIResponsesBody,
    toOpenAIResponses,
  ),
  target("Anthropic", validateAnthropic, anthropicBody, toAnthropic),
  target("Gemini", validateGemini, geminiBody, toGemini),
];

const calls = (messages: ReadonlyArray<Message>): number =>
  pairToolCalls(messages).messages.reduce(
    (n, m) =>
      m.role === "assistant"
        ? n + m.content.filter((b) => b.type === "tool-call").length
        : n,
    0,
  );

for (const { name, check } of targets) {
  const valid = (messages: ReadonlyArray<Message>): void =>
    assert.deepEqual(check(messages), [], JSON.stringify(messages));

  Deno.test(`${name}: generated logs cut at every position give valid requests`, () => {
    fc.assert(fc.property(logCutsArb, (cuts) => cuts.forEach(valid)), {
      seed: 13,
      numRuns: 120,
    });
  });

  Deno.test(`${name}: generated sessions with rewrites cut at every position give valid requests`, () => {
    fc.assert(fc.property(sessionCutsArb, (cuts) => cuts.forEach(valid)), {
      seed: 13,
      numRuns: 80,
    });
  });

  Deno.test(`${name}: hostile hand-built lists give valid requests`, () => {
    fc.assert(fc.property(hostileMessagesArb, valid), {
      seed: 13,
      numRuns: 600,
    });
  });
}

Deno.test("the generators exercise calls, so the pairing rules are tested", () => {
  const sample = fc.sample(logCutsArb, { seed: 13, numRuns: 50 }).flat();
  assert.ok(sample.some((messages) => calls(messages) > 0));
  const hostile = fc.sample(hostileMessagesArb, { seed: 13, numRuns: 50 });
  assert.ok(
    hostile.some((messages) => pairToolCalls(messages).repairs.length > 0),
  );
});

/** Whether the messages, once paired, hold a tool call or result. */
const holdsToolBlocks = (messages: ReadonlyArray<Message>): boolean =>
  pairToolCalls(messages).messages.some((m) =>
    m.content.some((b) => b.type === "tool-call" || b.type === "tool-result")
  );

for (const { name, checkBare: check } of targets) {
  Deno.test(`${name}: a body with tool calls or results and no tools is refused, and only then`, () => {
    let refused = 0;
    fc.assert(
      fc.property(logCutsArb, (cuts) =>
        cuts.forEach((messages) => {
          const tags = check(messages).map((v) => v._tag);
          assert.deepEqual(
            tags,
            holdsToolBlocks(messages) ? ["ToolsNotDefined"] : [],
            JSON.stringify(messages),
          );
          if (tags.length > 0) refused++;
        })),
      { seed: 13, numRuns: 60 },
    );
    assert.ok(refused > 0);
  });
}
