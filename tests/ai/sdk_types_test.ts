/**
 * The adapters' output types, checked against the official SDKs' request
 * types at type-check time. The SDKs are type-only development imports,
 * pinned in deno.json: nothing here is loaded at run time, and the package
 * does not depend on them.
 */
import assert from "node:assert/strict";
import type OpenAI from "openai";
import type Anthropic from "@anthropic-ai/sdk";
import type * as Gemini from "@google/genai";
import {
  type AnthropicMessage,
  anthropicTools,
  type GeminiContent,
  geminiTools,
  type OpenAIChatMessage,
  openAIChatTools,
  type OpenAIResponsesItem,
  openAIResponsesTools,
  toAnthropic,
  toGemini,
  toOpenAIChat,
  toOpenAIResponses,
} from "@palimpsest/session/providers";
import { transcript } from "../_helpers/ai_fixture.ts";

/** `true` when every `T` is a `U`; `false` (a type error below) otherwise. */
type Assignable<T, U> = [T] extends [U] ? true : false;

const chat: Assignable<
  OpenAIChatMessage,
  OpenAI.Chat.Completions.ChatCompletionMessageParam
> = true;
const responses: Assignable<
  OpenAIResponsesItem,
  OpenAI.Responses.ResponseInputItem
> = true;
const anthropic: Assignable<AnthropicMessage, Anthropic.MessageParam> = true;
const gemini: Assignable<GeminiContent, Gemini.Content> = true;

Deno.test("each adapter's output is its SDK's request type", () => {
  assert.deepEqual([chat, responses, anthropic, gemini], [
    true,
    true,
    true,
    true,
  ]);
  const chatBody:
    OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
      model: "m",
      ...toOpenAIChat(transcript),
    };
  const responsesBody: OpenAI.Responses.ResponseCreateParamsNonStreaming = {
    model: "m",
    ...toOpenAIResponses(transcript),
  };
  const anthropicBody: Anthropic.MessageCreateParamsNonStreaming = {
    model: "m",
    max_tokens: 16,
    ...toAnthropic(transcript),
  };
  const geminiRequest = toGemini(transcript);
  const geminiBody: Gemini.GenerateContentParameters = {
    model: "m",
    contents: geminiRequest.contents,
    ...(geminiRequest.systemInstruction === undefined
      ? {}
      : { config: { systemInstruction: geminiRequest.systemInstruction } }),
  };
  assert.ok(chatBody.messages.length > 0);
  assert.ok(Array.isArray(responsesBody.input));
  assert.equal(anthropicBody.system, "be brief");
  assert.ok(Array.isArray(geminiBody.contents));
});

const readTool = {
  name: "read",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } } },
};

Deno.test("each tools converter's output is its SDK's request type", () => {
  const chatBody:
    OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
      model: "m",
      ...toOpenAIChat(transcript),
      ...openAIChatTools([readTool], { tool: "read" }),
    };
  const responsesBody: OpenAI.Responses.ResponseCreateParamsNonStreaming = {
    model: "m",
    ...toOpenAIResponses(transcript),
    ...openAIResponsesTools([readTool], { tool: "read" }),
  };
  const anthropicBody: Anthropic.MessageCreateParamsNonStreaming = {
    model: "m",
    max_tokens: 16,
    ...toAnthropic(transcript),
    ...anthropicTools([readTool], { tool: "read" }),
  };
  const gemini = geminiTools([readTool], { tool: "read" });
  const geminiBody: Gemini.GenerateContentParameters = {
    model: "m",
    contents: toGemini(transcript).contents,
    config: {
      ...(gemini.tools === undefined ? {} : { tools: gemini.tools }),
      ...(gemini.toolConfig === undefined
        ? {}
        : { toolConfig: gemini.toolConfig as Gemini.ToolConfig }),
    },
  };
  assert.equal(chatBody.tools?.length, 1);
  assert.equal(responsesBody.tools?.length, 1);
  assert.deepEqual(anthropicBody.tool_choice, { type: "tool", name: "read" });
  assert.equal(geminiBody.config?.tools?.length, 1);
});
