import {
  checkTranscript,
  deriveMessages,
  Draft,
  Session,
  type SessionHandle,
  SessionStore,
} from "@palimpsest/session";
import { TOOL_FAILED } from "@palimpsest/session/ai";
import { MISSING_RESULT_TEXT } from "@palimpsest/session/providers";
import { recordAiSdkSteps, toModelMessages } from "@palimpsest/session/ai-sdk";
import { Effect, Result } from "effect";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import type {
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import assert from "node:assert/strict";
import { tempStore } from "../ai/_scripted.ts";
import { newSession } from "../ai/_session.ts";
import { fromModel, fromUser } from "../providers/_messages.ts";
import { mockModel } from "./_tools.ts";

const usage: LanguageModelV4GenerateResult["usage"] = {
  inputTokens: {
    total: 20,
    noCache: 20,
    cacheRead: undefined,
    cacheWrite: undefined,
  },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

const answer = (
  content: LanguageModelV4GenerateResult["content"],
): LanguageModelV4GenerateResult => ({
  content,
  finishReason: {
    unified: content.some((c) => c.type === "tool-call")
      ? "tool-calls"
      : "stop",
    raw: undefined,
  },
  usage,
  warnings: [],
});

const call = (id: string, path: string) => ({
  type: "tool-call" as const,
  toolCallId: id,
  toolName: "read",
  input: JSON.stringify({ path }),
});

const readTool = tool({
  description: "Reads a file",
  inputSchema: jsonSchema<{ path: string }>({
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"],
  }),
  execute: ({ path }) => {
    if (path === "missing") throw new Error(`No file ${path}`);
    return Promise.resolve(`contents of ${path}`);
  },
});

/** The tool calls and results of a prompt, in order, as `[type, callId]`. */
const callsAndResults = (
  prompt: ReadonlyArray<{
    readonly content:
      | string
      | ReadonlyArray<{ readonly type: string; readonly toolCallId?: string }>;
  }>,
) =>
  prompt.flatMap((m) =>
    typeof m.content === "string"
      ? []
      : m.content.flatMap((p) =>
        p.type === "tool-call" || p.type === "tool-result"
          ? [[p.type, p.toolCallId]]
          : []
      )
  );

/** Runs `body` on a fresh session of a temporary store. */
const withSession = <A>(
  body: (handle: SessionHandle) => Effect.Effect<A, unknown, SessionStore>,
): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const { store, handle } = yield* newSession();
      return yield* Effect.ensuring(body(handle), store.close(handle));
    }).pipe(Effect.scoped, Effect.provide(tempStore())),
  );

Deno.test("toModelMessages applies the pairing: an unanswered call gets its error result", () => {
  const messages = [
    fromUser("u0", "read a"),
    fromModel("a1", [{
      type: "tool-call",
      id: "c1",
      name: "read",
      arguments: '{"path":"a"}',
    }]),
    fromUser("u2", "never mind"),
  ];
  const out = toModelMessages(messages);
  assert.deepEqual(out.map((m) => m.role), [
    "user",
    "assistant",
    "tool",
    "user",
  ]);
  assert.deepEqual(out[2], {
    role: "tool",
    content: [{
      type: "tool-result",
      toolCallId: "c1",
      toolName: "read",
      output: { type: "error-text", value: MISSING_RESULT_TEXT },
    }],
  });
});

Deno.test("toModelMessages resolves attachments: an image becomes a file part", () => {
  const out = toModelMessages([{
    id: "u0",
    role: "user",
    source: { kind: "user" },
    content: [{
      type: "image",
      attachment: { mediaType: "image/png", data: "iVBORw0KGgo=" },
    }],
  }], {
    resolveAttachment: () => ({
      kind: "inline",
      mediaType: "image/png",
      data: "iVBORw0KGgo=",
    }),
  });
  assert.deepEqual(out, [{
    role: "user",
    content: [{
      type: "file",
      mediaType: "image/png",
      data: { type: "data", data: "iVBORw0KGgo=" },
    }],
  }]);
});

Deno.test("a generateText loop keeps its log: steps, parallel calls, results, usage, and the next prompt from the log", async () => {
  const model = mockModel({
    doGenerate: [
      answer([
        { type: "text", text: "Reading." },
        call("c1", "a"),
        call("c2", "missing"),
      ]),
      answer([{
        type: "text",
        text: "a holds its contents; missing is gone.",
      }]),
    ],
  });
  const { recorded, session, nextPrompt } = await withSession((handle) =>
    Effect.gen(function* () {
      const store = yield* SessionStore;
      yield* store.append(handle, [Draft.user("read a and missing")]);
      const result = yield* Effect.promise(() =>
        generateText({
          model,
          messages: toModelMessages(deriveMessages(handle.session.surface)),
          tools: { read: readTool },
          stopWhen: stepCountIs(5),
        })
      );
      const recorded = yield* recordAiSdkSteps({
        handle,
        steps: result.steps,
      });
      return {
        recorded,
        session: handle.session,
        nextPrompt: toModelMessages(deriveMessages(handle.session.surface)),
      };
    })
  );
  assert.deepEqual(
    [recorded.turn, recorded.steps, recorded.reason, recorded.openCalls],
    [0, 2, "completed", []],
  );
  assert.deepEqual(
    Result.getOrThrow(Session.events(session)).map((e) => e.type),
    [
      "user/message",
      "turn/start",
      "step/start",
      "assistant/message",
      "tool/call",
      "tool/call",
      "tool/result",
      "tool/result",
      "step/end",
      "step/start",
      "assistant/message",
      "step/end",
      "turn/end",
    ],
  );
  const messages = deriveMessages(session.surface);
  assert.deepEqual(checkTranscript(messages), []);
  const results = Result.getOrThrow(Session.events(session)).filter((e) =>
    e.type === "tool/result"
  );
  assert.deepEqual(
    results.map((e) =>
      e.type === "tool/result"
        ? [
          e.data.message.content[0]?.type === "tool-result"
            ? e.data.message.content[0].content
            : undefined,
          e.data.error,
        ]
        : []
    ),
    [
      [[{ type: "text", text: "contents of a" }], undefined],
      [[{ type: "text", text: "No file missing" }], {
        name: "Error",
        code: TOOL_FAILED,
      }],
    ],
  );
  const first = Result.getOrThrow(Session.events(session)).find((e) =>
    e.type === "assistant/message"
  );
  assert.deepEqual(
    first?.type === "assistant/message" ? first.data.usage : undefined,
    {
      inputTokens: { uncached: 20, total: 20 },
      outputTokens: { total: 5, text: 5 },
    },
  );
  assert.deepEqual(
    first?.type === "assistant/message" ? first.data.message.source : {},
    { kind: "model", provider: "mock", model: "mock-1" },
  );
  // What the AI SDK sent for its second step is what the log derives.
  const sent = model.doGenerateCalls[1]?.prompt ?? [];
  const fromLog = nextPrompt.slice(0, sent.length);
  assert.deepEqual(
    fromLog.map((m) => m.role),
    sent.map((m) => m.role),
  );
  assert.deepEqual(callsAndResults(fromLog), callsAndResults(sent));
});

/** A model whose one stream sends `parts`, then ends. */
const streamingModel = (
  parts: ReadonlyArray<LanguageModelV4StreamPart>,
): MockLanguageModelV4 =>
  new MockLanguageModelV4({
    doStream: {
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    },
  });

Deno.test("a streamText result is recorded from its steps", async () => {
  const finish: LanguageModelV4StreamPart = {
    type: "finish",
    finishReason: { unified: "stop", raw: "stop" },
    usage,
  };
  const model = streamingModel([
    { type: "reasoning-start", id: "r" },
    { type: "reasoning-delta", id: "r", delta: "thinking" },
    { type: "reasoning-end", id: "r" },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "Hi there." },
    { type: "text-end", id: "t" },
    finish,
  ]);
  const { session } = await withSession((handle) =>
    Effect.gen(function* () {
      const result = streamText({ model, prompt: "hi" });
      const steps = yield* Effect.promise(() => Promise.resolve(result.steps));
      return yield* recordAiSdkSteps({ handle, steps, input: "hi" });
    })
  );
  const messages = deriveMessages(session.surface);
  assert.deepEqual(messages.map((m) => [m.role, m.content]), [
    ["user", [{ type: "text", text: "hi" }]],
    ["assistant", [{ type: "reasoning", text: "thinking" }, {
      type: "text",
      text: "Hi there.",
    }]],
  ]);
});

Deno.test("a call the step left without a result leaves the turn open; repair closes it", async () => {
  const model = new MockLanguageModelV4({
    doGenerate: answer([call("c1", "a")]),
  });
  const { recorded, closers, transcript } = await withSession((handle) =>
    Effect.gen(function* () {
      const store = yield* SessionStore;
      const result = yield* Effect.promise(() =>
        generateText({
          model,
          prompt: "read a",
          // No execute: the harness runs the tool itself.
          tools: {
            read: tool({
              inputSchema: jsonSchema<{ path: string }>({ type: "object" }),
            }),
          },
        })
      );
      const recorded = yield* recordAiSdkSteps({
        handle,
        steps: result.steps,
        input: "read a",
      });
      const repaired = yield* store.repair(handle);
      return {
        recorded,
        closers: repaired.closers.map((e) => e.type),
        transcript: checkTranscript(deriveMessages(repaired.session.surface)),
      };
    })
  );
  assert.deepEqual(recorded.openCalls, ["c1"]);
  assert.equal(
    Result.getOrThrow(Session.events(recorded.session)).some((e) =>
      e.type === "turn/end"
    ),
    false,
  );
  assert.ok(closers.includes("tool/result"));
  assert.ok(closers.includes("turn/end"));
  assert.deepEqual(transcript, []);
});

Deno.test("a call id reused across steps is recorded under a fresh id with its own result", async () => {
  const model = new MockLanguageModelV4({
    doGenerate: [
      answer([call("call_0", "a")]),
      answer([call("call_0", "b")]),
      answer([{ type: "text", text: "Both read." }]),
    ],
  });
  const { session } = await withSession((handle) =>
    Effect.gen(function* () {
      const result = yield* Effect.promise(() =>
        generateText({
          model,
          prompt: "read a then b",
          tools: { read: readTool },
          stopWhen: stepCountIs(5),
        })
      );
      return yield* recordAiSdkSteps({ handle, steps: result.steps });
    })
  );
  const messages = deriveMessages(session.surface);
  assert.deepEqual(checkTranscript(messages), []);
  assert.deepEqual(
    messages.flatMap((m) =>
      m.content.flatMap((b) =>
        b.type === "tool-call"
          ? [[b.id, b.arguments]]
          : b.type === "tool-result"
          ? [[b.toolCallId, b.content[0]?.type === "text" && b.content[0].text]]
          : []
      )
    ),
    [
      ["call_0", '{"path":"a"}'],
      ["call_0", "contents of a"],
      ["call_0_1", '{"path":"b"}'],
      ["call_0_1", "contents of b"],
    ],
  );
});

Deno.test("a streamText step that ended without the provider's end is recorded as cut", async () => {
  const model = streamingModel([
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "Half an" },
    {
      type: "finish",
      finishReason: { unified: "interrupted", raw: undefined },
      usage,
    },
  ]);
  const { session, recorded } = await withSession((handle) =>
    Effect.gen(function* () {
      const result = streamText({ model, prompt: "hi" });
      const steps = yield* Effect.promise(() => Promise.resolve(result.steps));
      const recorded = yield* recordAiSdkSteps({ handle, steps, input: "hi" });
      return { session: handle.session, recorded };
    })
  );
  assert.equal(recorded.reason, "interrupted");
  const message = Result.getOrThrow(Session.events(session)).find((e) =>
    e.type === "assistant/message"
  );
  assert.ok(message?.type === "assistant/message");
  assert.equal(message.data.interrupted, true);
});
