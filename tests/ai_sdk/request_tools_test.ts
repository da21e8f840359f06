/**
 * What the AI SDK bridge sends that the providers' schemas do not check:
 * a request holding tool calls or results always defines tools, and an
 * HTTP error keeps the status and headers the retry policy reads.
 */
import assert from "node:assert/strict";
import { Effect, Schema } from "effect";
import { LanguageModel, Tool, Toolkit } from "effect/ai";
import { APICallError } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { layerAiSdkModel, toAiError } from "@palimpsest/session/ai-sdk";
import {
  isTransientError,
  retryAfterMillis,
  toPrompt,
} from "@palimpsest/session/ai";
import { CALLED_TOOL_DESCRIPTION } from "@palimpsest/session/providers";
import { fromModel, fromTool, fromUser } from "../providers/_messages.ts";

const generated = {
  content: [{ type: "text" as const, text: "ok" }],
  warnings: [],
  finishReason: { unified: "stop" as const, raw: undefined },
  usage: {
    inputTokens: {
      total: 1,
      noCache: 1,
      cacheRead: undefined,
      cacheWrite: undefined,
    },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  },
};

const history = toPrompt([
  fromUser("u0", "list"),
  fromModel("a1", [
    { type: "tool-call", id: "c1", name: "ls", arguments: "{}" },
  ]),
  fromTool("r2", "c1", [{ type: "text", text: "a.txt" }]),
  fromUser("u3", "summarize"),
]);

Deno.test("a request with tool calls and no tools defines each tool it names, with tool choice none", async () => {
  const model = new MockLanguageModelV4({ doGenerate: generated });
  await Effect.runPromise(
    LanguageModel.generateText({ prompt: history }).pipe(
      Effect.provide(layerAiSdkModel(model)),
    ),
  );
  const sent = model.doGenerateCalls[0];
  assert.deepEqual(sent?.tools, [{
    type: "function",
    name: "ls",
    description: CALLED_TOOL_DESCRIPTION,
    inputSchema: { type: "object", properties: {} },
  }]);
  assert.deepEqual(sent?.toolChoice, { type: "none" });
});

Deno.test("a request with tools offered sends them as they are, and one without tool blocks sends none", async () => {
  const model = new MockLanguageModelV4({ doGenerate: generated });
  const toolkit = Toolkit.make(
    Tool.make("read", { parameters: Schema.Struct({ path: Schema.String }) }),
  );
  const layer = layerAiSdkModel(model);
  await Effect.runPromise(
    LanguageModel.generateText({
      prompt: history,
      toolkit,
      disableToolCallResolution: true,
    }).pipe(Effect.provide(layer)),
  );
  await Effect.runPromise(
    LanguageModel.generateText({ prompt: "hi" }).pipe(Effect.provide(layer)),
  );
  const [offered, plain] = model.doGenerateCalls;
  assert.deepEqual(offered?.tools?.map((t) => t.name), ["read"]);
  assert.deepEqual(offered?.toolChoice, { type: "auto" });
  assert.equal(plain?.tools, undefined);
  assert.equal(plain?.toolChoice, undefined);
});

Deno.test("an HTTP error keeps its status and headers: a 529 is transient and its retry-after is read", () => {
  const error = toAiError(
    new APICallError({
      message: "Overloaded",
      url: "https://api.anthropic.com/v1/messages",
      requestBodyValues: {},
      statusCode: 529,
      responseHeaders: { "retry-after": "4" },
      responseBody:
        '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    }),
    "streamText",
  );
  const reason = error.reason;
  assert.equal(reason._tag, "InternalProviderError");
  assert.equal(
    "http" in reason ? reason.http?.response?.status : undefined,
    529,
  );
  assert.equal(isTransientError(error), true);
  assert.equal(retryAfterMillis(error, 0), 4000);
  const conflict = toAiError(
    new APICallError({
      message: "Conflict",
      url: "https://api.openai.com/v1/responses",
      requestBodyValues: {},
      statusCode: 409,
    }),
    "streamText",
  );
  assert.equal(isTransientError(conflict), true);
  const reset = toAiError(new TypeError("connection reset"), "streamText");
  assert.equal(isTransientError(reset), true);
});
