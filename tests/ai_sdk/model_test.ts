import { checkTranscript, deriveMessages, Session } from "@palimpsest/session";
import { isContextOverflow } from "@palimpsest/session/ai";
import {
  fromStreamPart,
  layerAiSdkModel,
  toAiError,
} from "@palimpsest/session/ai-sdk";
import { Effect, Exit, Fiber, Layer, Result, Stream } from "effect";
import { TOOL_NOT_STARTED } from "@palimpsest/session/internal";
import { AiError, LanguageModel } from "effect/ai";
import {
  APICallError,
  type LanguageModelV4StreamPart,
  type LanguageModelV4Usage,
  LoadAPIKeyError,
} from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import assert from "node:assert/strict";
import { tempStore } from "../ai/_scripted.ts";
import { turnOnNewSession } from "../ai/_session.ts";
import { mockModel, toolLayer, tools } from "./_tools.ts";

const usage = (input: number, output: number): LanguageModelV4Usage => ({
  inputTokens: {
    total: input,
    noCache: input,
    cacheRead: undefined,
    cacheWrite: undefined,
  },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

const finish = (
  unified: "stop" | "tool-calls" | "length" | "interrupted",
): LanguageModelV4StreamPart => ({
  type: "finish",
  finishReason: { unified, raw: unified },
  usage: usage(10, 4),
});

const streamOf = (chunks: LanguageModelV4StreamPart[]) => ({
  stream: simulateReadableStream({ chunks }),
});

/** What a mock model answers a stream request with. */
type DoStream = NonNullable<
  NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>["doStream"]
>;

/**
 * The error a `streamText` call fails with over a model answering with
 * `doStream`, asserted to be an `AiError` with the reason `tag`.
 */
const streamFailsWith = async (
  doStream: DoStream,
  tag: AiError.AiError["reason"]["_tag"],
): Promise<AiError.AiError> => {
  const error = await Effect.runPromise(
    LanguageModel.streamText({ prompt: "hi" }).pipe(
      Stream.runCollect,
      Effect.flip,
      Effect.provide(layerAiSdkModel(new MockLanguageModelV4({ doStream }))),
    ),
  );
  assert.ok(AiError.isAiError(error));
  assert.equal(error.reason._tag, tag);
  return error;
};

Deno.test("streamText maps text, reasoning, tool input, tool calls, usage and finish", async () => {
  const model = new MockLanguageModelV4({
    doStream: streamOf([
      { type: "stream-start", warnings: [] },
      { type: "response-metadata", id: "r1", modelId: "m-1" },
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-delta", id: "r", delta: "thinking" },
      { type: "reasoning-end", id: "r" },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hel" },
      { type: "text-delta", id: "t", delta: "lo" },
      { type: "text-end", id: "t" },
      { type: "tool-input-start", id: "c1", toolName: "read" },
      { type: "tool-input-delta", id: "c1", delta: '{"path":' },
      { type: "tool-input-delta", id: "c1", delta: '"a.txt"}' },
      { type: "tool-input-end", id: "c1" },
      {
        type: "tool-call",
        toolCallId: "c1",
        toolName: "read",
        input: '{"path":"a.txt"}',
      },
      { type: "ping" },
      finish("tool-calls"),
    ]),
  });
  const parts = await Effect.runPromise(
    LanguageModel.streamText({
      prompt: "hi",
      toolkit: tools,
      disableToolCallResolution: true,
    }).pipe(
      Stream.runCollect,
      Effect.provide(Layer.merge(layerAiSdkModel(model), toolLayer)),
    ),
  );
  assert.deepEqual(parts.map((p) => p.type), [
    "response-metadata",
    "reasoning-start",
    "reasoning-delta",
    "reasoning-end",
    "text-start",
    "text-delta",
    "text-delta",
    "text-end",
    "tool-params-start",
    "tool-params-delta",
    "tool-params-delta",
    "tool-params-end",
    "tool-call",
    "finish",
  ]);
  const call = parts.find((p) => p.type === "tool-call");
  assert.deepEqual(call?.type === "tool-call" ? call.params : undefined, {
    path: "a.txt",
  });
  const end = parts.at(-1);
  assert.equal(end?.type === "finish" ? end.reason : undefined, "tool-calls");
  assert.equal(
    end?.type === "finish" ? end.usage.inputTokens.total : undefined,
    10,
  );
  const sent = model.doStreamCalls[0];
  assert.deepEqual(sent?.prompt, [{
    role: "user",
    content: [{ type: "text", text: "hi" }],
  }]);
  assert.deepEqual(sent?.tools?.map((t) => t.name), ["read"]);
  const tool = sent?.tools?.[0];
  assert.deepEqual(
    tool?.type === "function" ? tool.inputSchema["required"] : undefined,
    ["path"],
  );
  assert.equal(
    tool?.type === "function" ? tool.description : "",
    "Reads a file",
  );
  assert.deepEqual(sent?.toolChoice, { type: "auto" });
});

Deno.test("fromStreamPart maps every finish reason, interrupted as unknown", () => {
  const reasons = ["stop", "tool-calls", "length", "interrupted"] as const;
  assert.deepEqual(
    reasons.map((r) => {
      const part = fromStreamPart(finish(r));
      return part?.type === "finish" ? part.reason : undefined;
    }),
    ["stop", "tool-calls", "length", "unknown"],
  );
  assert.deepEqual(
    fromStreamPart({
      type: "tool-call",
      toolCallId: "c",
      toolName: "read",
      input: "not json",
    }),
    {
      type: "tool-call",
      id: "c",
      name: "read",
      params: { invalid_json_arguments: "not json" },
    },
  );
});

Deno.test("generateText maps the content and the finish", async () => {
  const model = new MockLanguageModelV4({
    doGenerate: {
      content: [
        { type: "reasoning", text: "hm" },
        { type: "text", text: "A summary." },
      ],
      finishReason: { unified: "stop", raw: "stop" },
      usage: usage(100, 5),
      warnings: [],
    },
  });
  const response = await Effect.runPromise(
    LanguageModel.generateText({ prompt: "summarize" }).pipe(
      Effect.provide(layerAiSdkModel(model)),
    ),
  );
  assert.equal(response.text, "A summary.");
  assert.equal(response.finishReason, "stop");
  assert.equal(response.usage.inputTokens.total, 100);
  assert.deepEqual(response.content.map((p) => p.type), [
    "reasoning",
    "text",
    "finish",
  ]);
});

Deno.test("runTurn runs on an AI SDK model: parallel calls, results sent back, a clean transcript", async () => {
  const model = mockModel({
    doStream: [
      streamOf([
        {
          type: "tool-call",
          toolCallId: "c1",
          toolName: "read",
          input: '{"path":"a"}',
        },
        {
          type: "tool-call",
          toolCallId: "c2",
          toolName: "read",
          input: '{"path":"b"}',
        },
        finish("tool-calls"),
      ]),
      streamOf([
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Both read." },
        { type: "text-end", id: "t" },
        finish("stop"),
      ]),
    ],
  });
  const program = Effect.gen(function* () {
    const { store, handle, turn } = yield* turnOnNewSession(tools, {
      model: { provider: model.provider, model: model.modelId },
      input: "read a and b",
    });
    const outcome = yield* turn;
    yield* store.close(handle);
    return outcome;
  });
  const outcome = await Effect.runPromise(
    Effect.scoped(program).pipe(
      Effect.provide(
        Layer.mergeAll(layerAiSdkModel(model), tempStore(), toolLayer),
      ),
    ),
  );
  assert.equal(outcome.steps, 2);
  assert.equal(outcome.reason, "completed");
  const messages = deriveMessages(outcome.session.surface);
  assert.deepEqual(checkTranscript(messages), []);
  assert.deepEqual(messages.map((m) => m.role), [
    "user",
    "assistant",
    "user",
    "user",
    "assistant",
  ]);
  const second = model.doStreamCalls[1]?.prompt;
  assert.deepEqual(second?.map((m) => m.role), [
    "user",
    "assistant",
    "tool",
  ]);
  const results = second?.[2];
  assert.deepEqual(
    results?.role === "tool"
      ? results.content.map((p) =>
        p.type === "tool-result" ? [p.toolCallId, p.output] : []
      )
      : [],
    [
      ["c1", { type: "text", value: "contents of a" }],
      ["c2", { type: "text", value: "contents of b" }],
    ],
  );
  const answer = Result.getOrThrow(Session.events(outcome.session)).find((e) =>
    e.type === "assistant/message" && e.data.stream !== undefined
  );
  assert.ok(answer !== undefined);
});

const errorOf = (error: unknown) => toAiError(error, "streamText");

Deno.test("provider errors become effect/ai errors; an overflow is recognisable", () => {
  const api = (
    statusCode: number | undefined,
    message: string,
    body?: string,
  ) =>
    new APICallError({
      message,
      url: "http://127.0.0.1/v1/messages",
      requestBodyValues: {},
      ...(statusCode === undefined ? {} : { statusCode }),
      ...(body === undefined ? {} : { responseBody: body }),
    });
  const anthropicOverflow = errorOf(api(
    400,
    "prompt is too long: 210000 tokens > 200000 maximum",
    JSON.stringify({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "prompt is too long: 210000 tokens > 200000 maximum",
      },
    }),
  ));
  assert.equal(anthropicOverflow.reason._tag, "InvalidRequestError");
  assert.equal(isContextOverflow(anthropicOverflow), true);
  // A 200 whose body broke off: the connection, not the request.
  const reset = errorOf(api(200, "Failed to process successful response"));
  assert.equal(reset.reason._tag, "NetworkError");
  assert.equal(reset.isRetryable, true);
  const openaiOverflow = errorOf(api(
    400,
    "Your input exceeds the context window of this model.",
    JSON.stringify({
      error: {
        message: "Your input exceeds the context window of this model.",
        type: "invalid_request_error",
        code: "context_length_exceeded",
      },
    }),
  ));
  assert.equal(isContextOverflow(openaiOverflow), true);
  const badRequest = errorOf(api(400, "temperature must be at most 2"));
  assert.equal(badRequest.reason._tag, "InvalidRequestError");
  assert.equal(isContextOverflow(badRequest), false);
  assert.equal(errorOf(api(401, "bad key")).reason._tag, "AuthenticationError");
  assert.equal(errorOf(api(429, "slow down")).reason._tag, "RateLimitError");
  assert.equal(
    errorOf(api(500, "boom")).reason._tag,
    "InternalProviderError",
  );
  assert.equal(
    errorOf(api(529, "overloaded")).reason._tag,
    "InternalProviderError",
  );
  assert.equal(
    errorOf(api(undefined, "fetch failed")).reason._tag,
    "NetworkError",
  );
  assert.equal(
    errorOf(new TypeError("error sending request: connection refused"))
      .reason._tag,
    "NetworkError",
  );
  const missing = errorOf(new LoadAPIKeyError({ message: "no key" })).reason;
  assert.equal(
    missing._tag === "AuthenticationError" ? missing.kind : "",
    "MissingKey",
  );
  assert.equal(
    errorOf({ type: "overloaded_error", message: "Overloaded" }).reason._tag,
    "InternalProviderError",
  );
  assert.equal(
    errorOf({ type: "error", code: "rate_limit_exceeded", message: "x" })
      .reason._tag,
    "RateLimitError",
  );
});

Deno.test("an error part in the stream fails the request with the mapped error", async () => {
  const partial = streamOf([
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "partial" },
    {
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    },
  ]);
  await streamFailsWith(partial, "InternalProviderError");
});

Deno.test("a stream that ends without the provider's end fails as a connection reset", async () => {
  const cut = streamOf([
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "partial" },
    finish("interrupted"),
  ]);
  const error = await streamFailsWith(cut, "NetworkError");
  assert.equal(error.isRetryable, true);
});

Deno.test("a stream that ends with no finish part at all fails as a connection reset", async () => {
  await streamFailsWith(
    streamOf([{ type: "stream-start", warnings: [] }]),
    "NetworkError",
  );
});

Deno.test("runTurn records a stream that ended without the provider's end as cut and runs none of its calls", async () => {
  const model = new MockLanguageModelV4({
    doStream: streamOf([
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Reading" },
      {
        type: "tool-call",
        toolCallId: "c1",
        toolName: "read",
        input: '{"path":"pa',
      },
      finish("interrupted"),
    ]),
  });
  const runs: string[] = [];
  const program = Effect.gen(function* () {
    const { store, handle, turn } = yield* turnOnNewSession(tools, {
      model: { provider: model.provider, model: model.modelId },
      input: "read",
    });
    const exit = yield* Effect.exit(turn);
    const session = handle.session;
    yield* store.close(handle);
    return { exit, session };
  });
  const { exit, session } = await Effect.runPromise(
    Effect.scoped(program).pipe(
      Effect.provide(Layer.mergeAll(
        layerAiSdkModel(model),
        tempStore(),
        tools.toLayer({
          read: ({ path }) =>
            Effect.sync(() => {
              runs.push(path);
              return "";
            }),
        }),
      )),
    ),
  );
  assert.ok(Exit.isFailure(exit));
  assert.deepEqual(runs, []);
  const events = Result.getOrThrow(Session.events(session));
  const answer = events.find((e) => e.type === "assistant/message");
  assert.ok(answer?.type === "assistant/message");
  assert.equal(answer.data.interrupted, true);
  assert.deepEqual(
    events.flatMap((e) => e.type === "tool/result" ? [e.data.error?.code] : []),
    [TOOL_NOT_STARTED],
  );
  assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
});

Deno.test("a failed request (doStream rejects) fails with the mapped error", async () => {
  const rejected = new APICallError({
    message: "prompt is too long",
    url: "u",
    requestBodyValues: {},
    statusCode: 400,
  });
  const error = await streamFailsWith(
    () => Promise.reject(rejected),
    "InvalidRequestError",
  );
  assert.equal(isContextOverflow(error), true);
});

Deno.test("interrupting the stream aborts the provider request", async () => {
  const signals: AbortSignal[] = [];
  let sent = (): void => {};
  const firstPart = new Promise<void>((resolve) => {
    sent = resolve;
  });
  const model = new MockLanguageModelV4({
    doStream: (options) => {
      if (options.abortSignal !== undefined) signals.push(options.abortSignal);
      return Promise.resolve({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: "text-start", id: "t" });
            controller.enqueue({ type: "text-delta", id: "t", delta: "a" });
          },
        }),
      });
    },
  });
  const program = Effect.gen(function* () {
    const fiber = yield* LanguageModel.streamText({ prompt: "hi" }).pipe(
      Stream.runForEach((part) =>
        Effect.sync(() => {
          if (part.type === "text-delta") sent();
        })
      ),
      Effect.forkChild,
    );
    yield* Effect.promise(() => firstPart);
    assert.equal(signals[0]?.aborted, false);
    yield* Fiber.interrupt(fiber);
  });
  await Effect.runPromise(
    program.pipe(Effect.provide(layerAiSdkModel(model))),
  );
  assert.equal(signals.length, 1);
  assert.equal(signals[0]?.aborted, true);
});
