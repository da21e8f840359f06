/**
 * `effect/ai` requests as AI SDK calls: the prompt as the provider's
 * messages ({@link toProviderPrompt}), the tools and tool choice, and the
 * call options ({@link toCallOptions}).
 *
 * @module
 */
import * as Schema from "effect/Schema";
import { type LanguageModel, type Prompt, Tool } from "effect/ai";
import type {
  JSONObject,
  JSONValue,
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4ToolChoice,
  LanguageModelV4ToolResultOutput,
  SharedV4ProviderOptions,
} from "@ai-sdk/provider";
import { sentToolName } from "../providers/content.ts";
import {
  calledToolDefinitions,
  namedTool,
} from "../providers/tool_definitions.ts";

/** The module name `AiError`s carry. */
export const MODULE = "AiSdk";
/** The longest tool name a provider accepts. */
const MAX_TOOL_NAME = 64;

/**
 * Call settings sent with every request of the layer: limits, sampling,
 * reasoning effort, headers and provider options. The prompt, tools, tool
 * choice, response format and abort signal come from each request.
 */
export type AiSdkCallSettings = Omit<
  LanguageModelV4CallOptions,
  "prompt" | "tools" | "toolChoice" | "responseFormat" | "abortSignal"
>;

/** An `effect/ai` provider hook's options, as this module reads them. */
export type RequestOptions = LanguageModel.ProviderOptions;

/* ----------------------------------------------------------------------- */
/* Request                                                                  */
/* ----------------------------------------------------------------------- */

const isJsonObject = (value: unknown): value is JSONObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `effect/ai` part options as the AI SDK's provider options. */
const providerOptionsOf = (
  options: Prompt.ProviderOptions,
): { providerOptions?: SharedV4ProviderOptions } => {
  const out: Record<string, JSONObject> = {};
  let any = false;
  for (const [key, value] of Object.entries(options)) {
    if (isJsonObject(value)) {
      out[key] = value;
      any = true;
    }
  }
  return any ? { providerOptions: out } : {};
};

export const base64Of = (bytes: Uint8Array): string => {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
};

const fileData = (
  data: string | Uint8Array | URL,
):
  | { type: "data"; data: string | Uint8Array }
  | { type: "url"; url: URL } => {
  if (data instanceof URL) return { type: "url", url: data };
  if (typeof data === "string" && data.startsWith("data:")) {
    const comma = data.indexOf(",");
    return { type: "data", data: comma < 0 ? "" : data.slice(comma + 1) };
  }
  return { type: "data", data };
};

const jsonValueOf = (value: unknown): JSONValue => {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
};

const toolOutputOf = (
  part: Prompt.ToolResultPart,
): LanguageModelV4ToolResultOutput => {
  if (part.modelOutput !== undefined && part.modelOutput.length > 0) {
    return {
      type: "content",
      value: part.modelOutput.map((p) =>
        p.type === "text" ? { type: "text" as const, text: p.text } : {
          type: "file" as const,
          mediaType: p.mediaType,
          data: fileData(p.data),
          ...(p.fileName === undefined ? {} : { filename: p.fileName }),
        }
      ),
    };
  }
  if (typeof part.result === "string") {
    return { type: part.isFailure ? "error-text" : "text", value: part.result };
  }
  return {
    type: part.isFailure ? "error-json" : "json",
    value: jsonValueOf(part.result),
  };
};

const toolResultPart = (part: Prompt.ToolResultPart) => ({
  type: "tool-result" as const,
  toolCallId: part.id,
  toolName: sentToolName(part.name, MAX_TOOL_NAME),
  output: toolOutputOf(part),
  ...providerOptionsOf(part.options),
});

const filePart = (part: Prompt.FilePart) => ({
  type: "file" as const,
  mediaType: part.mediaType,
  data: fileData(part.data),
  ...(part.fileName === undefined ? {} : { filename: part.fileName }),
  ...providerOptionsOf(part.options),
});

/**
 * An `effect/ai` prompt as the AI SDK's provider prompt
 * (`LanguageModelV4Prompt`).
 *
 * @param prompt The prompt.
 * @returns The messages, in order.
 *
 * @example A system message and a question
 * ```ts
 * import { toProviderPrompt } from "@palimpsest/session/ai-sdk";
 * import { Prompt } from "effect/ai";
 * import assert from "node:assert/strict";
 *
 * const prompt = Prompt.make([
 *   { role: "system", content: "Be brief." },
 *   { role: "user", content: "hi" },
 * ]);
 * assert.deepEqual(toProviderPrompt(prompt), [
 *   { role: "system", content: "Be brief." },
 *   { role: "user", content: [{ type: "text", text: "hi" }] },
 * ]);
 * ```
 */
export function toProviderPrompt(
  prompt: Prompt.Prompt,
): Array<LanguageModelV4Message> {
  const out: Array<LanguageModelV4Message> = [];
  for (const message of prompt.content) {
    const options = providerOptionsOf(message.options);
    switch (message.role) {
      case "system":
        out.push({ role: "system", content: message.content, ...options });
        break;
      case "user":
        out.push({
          role: "user",
          content: message.content.map((part) =>
            part.type === "text"
              ? {
                type: "text" as const,
                text: part.text,
                ...providerOptionsOf(part.options),
              }
              : filePart(part)
          ),
          ...options,
        });
        break;
      case "assistant": {
        const content: Extract<
          LanguageModelV4Message,
          { role: "assistant" }
        >["content"] = [];
        for (const part of message.content) {
          const partOptions = providerOptionsOf(part.options);
          switch (part.type) {
            case "text":
            case "reasoning":
              content.push({
                type: part.type,
                text: part.text,
                ...partOptions,
              });
              break;
            case "file":
              content.push(filePart(part));
              break;
            case "tool-call":
              content.push({
                type: "tool-call",
                toolCallId: part.id,
                toolName: sentToolName(part.name, MAX_TOOL_NAME),
                input: part.params,
                ...(part.providerExecuted ? { providerExecuted: true } : {}),
                ...partOptions,
              });
              break;
            case "tool-result":
              content.push(toolResultPart(part));
              break;
            case "tool-approval-request":
              break;
          }
        }
        out.push({ role: "assistant", content, ...options });
        break;
      }
      case "tool":
        out.push({
          role: "tool",
          content: message.content.map((part) =>
            part.type === "tool-result" ? toolResultPart(part) : {
              type: "tool-approval-response" as const,
              approvalId: part.approvalId,
              approved: part.approved,
              ...(part.reason === undefined ? {} : { reason: part.reason }),
              ...providerOptionsOf(part.options),
            }
          ),
          ...options,
        });
        break;
    }
  }
  return out;
}

const functionTool = (tool: Tool.Any): LanguageModelV4FunctionTool => {
  const description = Tool.getDescription(tool);
  const schema = Tool.getJsonSchema(tool);
  return {
    type: "function",
    name: sentToolName(tool.name, MAX_TOOL_NAME),
    ...(description === undefined ? {} : { description }),
    inputSchema: isJsonObject(schema) ? schema : { type: "object" },
  };
};

const toolsAndChoice = (
  options: RequestOptions,
): Pick<LanguageModelV4CallOptions, "tools" | "toolChoice"> => {
  let tools = options.tools.filter((tool) => !Tool.isProviderDefined(tool));
  const choice = options.toolChoice;
  let toolChoice: LanguageModelV4ToolChoice = { type: "auto" };
  if (choice === "none" || choice === "required" || choice === "auto") {
    toolChoice = { type: choice };
  } else if ("tool" in choice) {
    toolChoice = {
      type: "tool",
      toolName: sentToolName(choice.tool, MAX_TOOL_NAME),
    };
  } else {
    const allowed = new Set<string>(choice.oneOf);
    tools = tools.filter((tool) => allowed.has(tool.name));
    toolChoice = { type: choice.mode === "required" ? "required" : "auto" };
  }
  if (tools.length > 0) return { tools: tools.map(functionTool), toolChoice };
  // Tool calls or results with no tool defined are refused (Anthropic:
  // "Requests which include tool_use or tool_result blocks must define
  // tools"): the tools named in the prompt get minimal definitions, not to
  // be called.
  const called = calledToolDefinitions(calledNames(options.prompt));
  if (called.length === 0) return {};
  return {
    tools: called.map((d) => ({
      type: "function",
      ...namedTool(d),
      inputSchema: d.parameters,
    })),
    toolChoice: { type: "none" },
  };
};

/** The tool names the prompt's calls and results name, in order. */
const calledNames = (prompt: Prompt.Prompt): string[] => {
  const names: string[] = [];
  for (const message of prompt.content) {
    if (message.role !== "assistant" && message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-call" || part.type === "tool-result") {
        names.push(part.name);
      }
    }
  }
  return names;
};

/**
 * The AI SDK call options of one `effect/ai` request: the prompt
 * ({@link toProviderPrompt}), the tools that are not provider-defined with
 * their JSON Schema, the tool choice (`oneOf` narrows the tools; with no
 * tool but tool calls or results in the prompt, a minimal definition per
 * tool name they name, `calledToolDefinitions`, and choice `none`), a JSON
 * response format with its schema, and the layer's settings.
 *
 * @param options The request as `effect/ai` hands it to a provider.
 * @param settings The layer's settings.
 * @param abortSignal The request's abort signal.
 * @returns The call options.
 *
 * @example What a provider model is sent
 * ```ts
 * import { layerAiSdkModel } from "@palimpsest/session/ai-sdk";
 * import { MockLanguageModelV4 } from "ai/test";
 * import { Effect, Schema } from "effect";
 * import { LanguageModel, Tool, Toolkit } from "effect/ai";
 * import assert from "node:assert/strict";
 *
 * const model = new MockLanguageModelV4({ doGenerate: {
 *   content: [], warnings: [], finishReason: { unified: "stop", raw: undefined },
 *   usage: { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
 *            outputTokens: { total: 0, text: 0, reasoning: undefined } },
 * } });
 * const toolkit = Toolkit.make(Tool.make("ls", { parameters: Schema.Struct({ dir: Schema.String }) }));
 * await Effect.runPromise(LanguageModel.generateText({ prompt: "list", toolkit, disableToolCallResolution: true }).pipe(
 *   Effect.provide(layerAiSdkModel(model, { settings: { maxOutputTokens: 64 } })),
 * ));
 * const sent = model.doGenerateCalls[0];
 * assert.equal(sent?.maxOutputTokens, 64);
 * assert.deepEqual(sent?.tools?.map((t) => t.name), ["ls"]);
 * assert.deepEqual(sent?.toolChoice, { type: "auto" });
 * ```
 */
export function toCallOptions(
  options: LanguageModel.ProviderOptions,
  settings: AiSdkCallSettings = {},
  abortSignal?: AbortSignal,
): LanguageModelV4CallOptions {
  const format = options.responseFormat;
  return {
    ...settings,
    prompt: toProviderPrompt(options.prompt),
    ...toolsAndChoice(options),
    ...(format.type === "json"
      ? {
        responseFormat: {
          type: "json",
          name: format.objectName,
          schema: jsonSchemaOf(format.schema),
        },
      }
      : {}),
    ...(abortSignal === undefined ? {} : { abortSignal }),
  };
}

const jsonSchemaOf = (schema: Schema.Top): JSONObject => {
  const document = Schema.toJsonSchemaDocument(schema);
  const root = jsonValueOf(document.schema);
  const out: JSONObject = isJsonObject(root) ? { ...root } : {};
  const definitions = jsonValueOf(document.definitions);
  if (isJsonObject(definitions) && Object.keys(definitions).length > 0) {
    out["$defs"] = definitions;
  }
  return out;
};
