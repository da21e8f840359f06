/**
 * Every adapter's full request body (messages, model, max tokens, tools and
 * tool choice) validates against the provider's own published request
 * schema and passes the library's validator (ordering rules, and tools
 * defined whenever tool calls or results are sent), over generated logs
 * cut at every position and crash-repaired, with call ids as other
 * harnesses write them, and over hostile lists.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { Schema } from "effect";
import { Tool, Toolkit } from "effect/ai";
import type { Message } from "@palimpsest/session";
import { requestTools, type Tools } from "@palimpsest/session/ai";
import {
  CALLED_TOOL_DESCRIPTION,
  EMPTY_CONVERSATION_TEXT,
  openAIResponsesCallId,
  type RequestViolation,
  toAnthropic,
  toGemini,
  type ToolChoice,
  type ToolDefinition,
  toOpenAIResponses,
  UNNAMED_TOOL,
  validateAnthropic,
  validateGemini,
  validateOpenAIChat,
  validateOpenAIResponses,
} from "@palimpsest/session/providers";
import {
  foreignLogCutsArb,
  foreignSessionCutsArb,
  hostileMessagesArb,
} from "../_helpers/message_gen.ts";
import {
  fullBody,
  schemaChecks,
  type Target,
  TARGETS,
} from "../_helpers/provider_schemas.ts";
import { fromModel, fromPlugin, fromUser } from "../providers/_messages.ts";
import {
  anthropicBody,
  geminiBody,
  openAIChatBody,
  openAIResponsesBody,
} from "../_helpers/request_bodies.ts";

const Read = Tool.make("read", {
  description: "Read a file",
  parameters: Schema.Struct({
    path: Schema.String,
    limit: Schema.optional(Schema.Int),
  }),
  success: Schema.String,
});
const Run = Tool.make("run", {
  parameters: Schema.Struct({ command: Schema.Array(Schema.String) }),
  success: Schema.String,
});
const Now = Tool.make("now", { success: Schema.String });
const toolkit = Toolkit.make(Read, Run, Now);

const plain: ReadonlyArray<ToolDefinition> = [
  {
    name: "read",
    description: "Read a file",
    parameters: {
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
      additionalProperties: false,
    },
  },
  { name: "grep", parameters: { type: "object", properties: {} } },
];

/** A tools list for hand-built requests that call a tool. */
const oneTool = [{ name: "read" }];

/** The tools and choices bodies are built with, in turn. */
const envelopes: ReadonlyArray<readonly [Tools, ToolChoice | undefined]> = [
  [toolkit, undefined],
  [plain, "auto"],
  [toolkit, "none"],
  [plain, "required"],
  [toolkit, { tool: "read" }],
  [[], undefined],
];

/** Bodies validated and failures, per target. */
const counts = new Map<Target, { bodies: number; failures: number }>(
  TARGETS.map((t) => [t, { bodies: 0, failures: 0 }]),
);

/** Each target's validator over the library's body of the messages. */
const rules: Record<
  Target,
  (
    messages: ReadonlyArray<Message>,
    tools: Tools,
    choice: ToolChoice | undefined,
  ) => ReadonlyArray<RequestViolation>
> = {
  "OpenAI Responses": (m, t, c) =>
    validateOpenAIResponses(openAIResponsesBody(m, t, c)),
  "OpenAI Chat": (m, t, c) => validateOpenAIChat(openAIChatBody(m, t, c)),
  "Anthropic Messages": (m, t, c) => validateAnthropic(anthropicBody(m, t, c)),
  "Gemini generateContent": (m, t, c) => validateGemini(geminiBody(m, t, c)),
};

/** Bodies with tool blocks built with no tools offered (minimal tools). */
let calledOnly = 0;

const check = (messages: ReadonlyArray<Message>, n: number): void => {
  const checks = schemaChecks();
  const [tools, choice] = envelopes[n % envelopes.length] ?? [[], undefined];
  if (
    Array.isArray(tools) && tools.length === 0 &&
    requestTools(messages, tools).choice === "none"
  ) calledOnly++;
  for (const target of TARGETS) {
    assert.deepEqual(
      rules[target](messages, tools, choice),
      [],
      `${target} rules: ${JSON.stringify(messages)}`,
    );
    const body = fullBody(target, messages, tools, choice);
    const errors = checks[target](body).slice(0, 4);
    const count = counts.get(target);
    if (count !== undefined) {
      count.bodies++;
      if (errors.length > 0) count.failures++;
    }
    assert.deepEqual(
      errors,
      [],
      `${target}: ${JSON.stringify(body)}\nfrom ${JSON.stringify(messages)}`,
    );
  }
};

/**
 * "go" from the user, one assistant message making `calls` (id and tool
 * name), then a result for each call in order, saying `resultText` if given.
 */
const callsAnswered = (
  calls: ReadonlyArray<readonly [id: string, name: string]>,
  resultText?: string,
): Message[] => [
  fromUser("u0", "go"),
  fromModel(
    "a1",
    calls.map(([id, name]) => ({
      type: "tool-call",
      id,
      name,
      arguments: "{}",
    })),
  ),
  ...calls.map(([id], k): Message => ({
    id: `r${k}`,
    role: "user",
    source: { kind: "tool", callId: id },
    content: [{
      type: "tool-result",
      toolCallId: id,
      content: resultText === undefined
        ? []
        : [{ type: "text", text: resultText }],
    }],
  })),
];

let listed = 0;

const cutProperties = [
  {
    what: "generated logs",
    cutsArb: foreignLogCutsArb,
    numRuns: 60,
  },
  {
    what: "generated sessions with rewrites",
    cutsArb: foreignSessionCutsArb,
    numRuns: 15,
  },
];

for (const { what, cutsArb, numRuns } of cutProperties) {
  Deno.test(`${what} cut at every position, crash-repaired too, give bodies valid by the providers' schemas`, () => {
    fc.assert(
      fc.property(
        cutsArb,
        (cuts) => cuts.forEach((m) => check(m, listed++)),
      ),
      { seed: 22, numRuns },
    );
  });
}

Deno.test("hostile hand-built lists give bodies valid by the providers' schemas", () => {
  fc.assert(
    fc.property(hostileMessagesArb, (m) => check(m, listed++)),
    { seed: 22, numRuns: 400 },
  );
});

Deno.test("the generated lists hold over-long call ids, crash repairs and empty conversations", () => {
  const lists = [
    ...fc.sample(foreignLogCutsArb, { seed: 22, numRuns: 20 }).flat(),
    ...fc.sample(foreignSessionCutsArb, { seed: 22, numRuns: 20 }).flat(),
  ];
  const ids = lists.flatMap((m) =>
    m.flatMap((message) =>
      message.content.flatMap((b) => b.type === "tool-call" ? [b.id] : [])
    )
  );
  assert.ok(ids.some((id) => id.length > 64));
  assert.ok(ids.some((id) => id.length <= 64));
  const repaired = lists.some((m) =>
    m.some((message) =>
      message.content.some((b) =>
        b.type === "tool-result" &&
        b.content.some((c) =>
          c.type === "text" && /session was interrupted/.test(c.text)
        )
      )
    )
  );
  assert.ok(repaired, "some cuts are crash-repaired");
  assert.ok(lists.some((m) => m.length === 0));
});

Deno.test("bodies with tool calls and no tools offered were built and define minimal tools", () => {
  assert.ok(calledOnly > 100, `${calledOnly}`);
  const messages = callsAnswered([["c1", "read"], ["c2", "mcp.ls"]], "x");
  const body = fullBody("Anthropic Messages", messages, [], undefined);
  assert.deepEqual(body["tools"], [{
    name: "read",
    description: CALLED_TOOL_DESCRIPTION,
    input_schema: { type: "object", properties: {} },
  }]);
  assert.deepEqual(body["tool_choice"], { type: "none" });
  const odd = fullBody(
    "OpenAI Chat",
    callsAnswered([["c1", "mcp.ls"]], "x"),
    [],
    undefined,
  );
  assert.deepEqual(
    (odd["tools"] as Array<{ function: { name: string } }>).map((t) =>
      t.function.name
    ),
    [UNNAMED_TOOL],
  );
  assert.equal(odd["tool_choice"], "none");
  // Offered tools are sent as they are, with the caller's choice.
  const offered = fullBody("OpenAI Chat", messages, plain, "required");
  assert.equal(offered["tool_choice"], "required");
});

Deno.test("the counts per provider (every body valid)", () => {
  for (const [target, { bodies, failures }] of counts) {
    console.log(
      `provider schema ${target}: ${bodies} bodies validated, ${failures} failures`,
    );
    assert.ok(bodies > 1000, `${target}: ${bodies} bodies`);
    assert.equal(failures, 0);
  }
});

Deno.test("a long call id is sent to OpenAI Responses as one stable id of 64 characters, the same for the call and its output", () => {
  const long = `call_${"a".repeat(60)}|fc_${"b".repeat(60)}`;
  const other = `${long}2`;
  const messages = callsAnswered([[long, "read"], [other, "read"]], "x");
  const sent = toOpenAIResponses(messages).input.flatMap((item) =>
    item.type === "function_call" || item.type === "function_call_output"
      ? [[item.type, item.call_id]]
      : []
  );
  const short = openAIResponsesCallId(long);
  const shortOther = openAIResponsesCallId(other);
  assert.equal(short.length, 64);
  assert.notEqual(short, shortOther);
  assert.equal(openAIResponsesCallId(long), short);
  assert.deepEqual(sent, [
    ["function_call", short],
    ["function_call", shortOther],
    ["function_call_output", short],
    ["function_call_output", shortOther],
  ]);
  assert.equal(openAIResponsesCallId("call_1"), "call_1");
  assert.equal(openAIResponsesCallId("x".repeat(64)), "x".repeat(64));
  assert.deepEqual(
    validateOpenAIResponses({
      tools: oneTool,
      input: [
        { type: "function_call", call_id: long, name: "read", arguments: "{}" },
        { type: "function_call_output", call_id: long, output: "x" },
      ],
    }).map((v) => [v._tag, v.index]),
    [["InvalidToolCallId", 0], ["InvalidToolCallId", 1]],
  );
});

Deno.test("an empty conversation is sent as one placeholder user turn, and the validators refuse a request without one", () => {
  const blank = [fromPlugin("s", "p", "be brief"), fromUser("u0", "  ")];
  for (const messages of [[], blank.slice(0, 1)]) {
    const responses = fullBody("OpenAI Responses", messages, [], undefined);
    assert.deepEqual(responses.input, [{
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: EMPTY_CONVERSATION_TEXT }],
    }]);
    const chat = fullBody("OpenAI Chat", messages, [], undefined);
    assert.deepEqual((chat.messages as unknown[]).at(-1), {
      role: "user",
      content: [{ type: "text", text: EMPTY_CONVERSATION_TEXT }],
    });
    const anthropic = fullBody("Anthropic Messages", messages, [], undefined);
    assert.deepEqual(anthropic.messages, [{
      role: "user",
      content: [{ type: "text", text: EMPTY_CONVERSATION_TEXT }],
    }]);
    const gemini = fullBody("Gemini generateContent", messages, [], undefined);
    assert.deepEqual(gemini.contents, [{
      role: "user",
      parts: [{ text: EMPTY_CONVERSATION_TEXT }],
    }]);
  }
  // A blank user message is left out where the provider refuses blank text.
  for (const messages of [blank.slice(1), blank]) {
    const anthropic = fullBody("Anthropic Messages", messages, [], undefined);
    assert.deepEqual(anthropic.messages, [{
      role: "user",
      content: [{ type: "text", text: EMPTY_CONVERSATION_TEXT }],
    }]);
  }
  const tags = (violations: ReadonlyArray<{ _tag: string }>) =>
    violations.map((v) => v._tag);
  assert.deepEqual(tags(validateOpenAIResponses({ input: [] })), [
    "EmptyConversation",
  ]);
  assert.deepEqual(
    tags(validateOpenAIResponses({
      instructions: "be brief",
      input: [{ type: "message", role: "system", content: "and kind" }],
    })),
    ["EmptyConversation"],
  );
  assert.deepEqual(
    tags(validateOpenAIChat({
      messages: [{ role: "system", content: "be brief" }],
    })),
    ["EmptyConversation"],
  );
  assert.deepEqual(tags(validateAnthropic({ messages: [] })), [
    "EmptyConversation",
  ]);
  assert.deepEqual(tags(validateGemini({ contents: [] })), [
    "EmptyConversation",
  ]);
});

Deno.test("an empty or over-long tool name is sent as one Anthropic and Gemini accept, the same for the call and its result", () => {
  const call = (id: string, name: string) => callsAnswered([[id, name]]);
  const long = "n".repeat(201);
  const anthropicName = (name: string): unknown =>
    toAnthropic(call("c1", name)).messages[1]?.content[0];
  assert.deepEqual(anthropicName(""), {
    type: "tool_use",
    id: "c1",
    name: UNNAMED_TOOL,
    input: {},
  });
  const cut = (anthropicName(long) as { name: string }).name;
  assert.equal(cut.length, 200);
  assert.notEqual(cut, (anthropicName(`${long}x`) as { name: string }).name);
  assert.equal(
    (anthropicName("mcp.read") as { name: string }).name,
    "mcp.read",
  );
  const gemini = toGemini(call("c1", "")).contents;
  assert.deepEqual(gemini.slice(1).map((c) => c.parts[0]), [
    { functionCall: { id: "c1", name: UNNAMED_TOOL, args: {} } },
    {
      functionResponse: {
        id: "c1",
        name: UNNAMED_TOOL,
        response: { output: "" },
      },
    },
  ]);
  assert.deepEqual(
    validateAnthropic({
      tools: oneTool,
      messages: [
        { role: "user", content: [{ type: "text", text: "go" }] },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "c1", name: long, input: {} }],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "c1" }] },
      ],
    }).map((v) => [v._tag, v.index, v.callId]),
    [["InvalidToolName", 1, "c1"]],
  );
  assert.deepEqual(
    validateGemini({
      tools: oneTool,
      contents: [
        { role: "user", parts: [{ text: "go" }] },
        {
          role: "model",
          parts: [{ functionCall: { id: "c1", name: "", args: {} } }],
        },
        {
          role: "user",
          parts: [{
            functionResponse: { id: "c1", name: "", response: { output: "" } },
          }],
        },
      ],
    }).map((v) => [v._tag, v.index, v.callId]),
    [["InvalidToolName", 1, "c1"]],
  );
});
