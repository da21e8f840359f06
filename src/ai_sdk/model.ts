/**
 * Any AI SDK provider model as an `effect/ai` `LanguageModel`: the
 * `LanguageModelV4` that `ai` 7 and its providers (`@ai-sdk/openai`,
 * `@ai-sdk/anthropic`, `@ai-sdk/google`, ...) export, behind the service
 * `runTurn` and the compaction engine talk to.
 *
 * {@link makeAiSdkModel} builds the service and {@link layerAiSdkModel} the
 * layer. Each request turns the `effect/ai` prompt, tools and tool choice
 * into the model's call options ({@link toCallOptions}), calls `doStream`
 * (for `streamText`) or `doGenerate` (for `generateText`), and turns what
 * comes back into `effect/ai` parts ({@link fromStreamPart},
 * {@link fromContent}): text and reasoning deltas, tool input deltas and
 * calls, sources, files, response metadata, and a `finish` part with the
 * usage and the finish reason. Errors become `AiError`s
 * ({@link toAiError}).
 *
 * Decisions:
 *
 * - A tool call's input is parsed with the library's `parseToolArguments`:
 *   input that is not a JSON object is kept under `invalid_json_arguments`
 *   rather than failing the answer.
 * - The AI SDK's finish reason `interrupted` (the stream ended without the
 *   provider's end) becomes `unknown`; every other reason has the same name
 *   in `effect/ai`.
 * - `stream-start` (warnings), `ping`, `raw`, `custom` and
 *   `reasoning-file` parts carry nothing the log keeps and are left out.
 * - Each request owns an `AbortController`, aborted when the request's
 *   scope closes: interrupting the fiber that reads the stream aborts the
 *   HTTP request, as does a failure.
 * - Tool names are sent as the library's other adapters send them: an empty
 *   name as `unnamed_tool`, one over 64 characters cut with a hash.
 *
 * This module imports only `@ai-sdk/provider` (for the error classes): the
 * package's other entry points never load it.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Schema from "effect/Schema";
import * as Stream from "effect/Stream";
import {
  AiError,
  LanguageModel,
  type Prompt,
  type Response,
  Tool,
} from "effect/ai";
import {
  APICallError,
  type JSONObject,
  type JSONValue,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4Content,
  type LanguageModelV4FinishReason,
  type LanguageModelV4FunctionTool,
  type LanguageModelV4Message,
  type LanguageModelV4StreamPart,
  type LanguageModelV4ToolChoice,
  type LanguageModelV4ToolResultOutput,
  type LanguageModelV4Usage,
  LoadAPIKeyError,
  type SharedV4ProviderMetadata,
  type SharedV4ProviderOptions,
} from "@ai-sdk/provider";
import { parseToolArguments, sentToolName } from "../providers/content.ts";

const MODULE = "AiSdk";
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

/** Options of {@link makeAiSdkModel} and {@link layerAiSdkModel}. */
export interface AiSdkModelOptions {
  /** Settings sent with every request (for example `maxOutputTokens`). */
  readonly settings?: AiSdkCallSettings;
}

/** An `effect/ai` provider hook's options, as this module reads them. */
type RequestOptions = LanguageModel.ProviderOptions;

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

const base64Of = (bytes: Uint8Array): string => {
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
              content.push({
                type: "tool-result",
                toolCallId: part.id,
                toolName: sentToolName(part.name, MAX_TOOL_NAME),
                output: toolOutputOf(part),
                ...partOptions,
              });
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
            part.type === "tool-result"
              ? {
                type: "tool-result" as const,
                toolCallId: part.id,
                toolName: sentToolName(part.name, MAX_TOOL_NAME),
                output: toolOutputOf(part),
                ...providerOptionsOf(part.options),
              }
              : {
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
  if (tools.length === 0) return {};
  return { tools: tools.map(functionTool), toolChoice };
};

/**
 * The AI SDK call options of one `effect/ai` request: the prompt
 * ({@link toProviderPrompt}), the tools that are not provider-defined with
 * their JSON Schema, the tool choice (`oneOf` narrows the tools), a JSON
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

/* ----------------------------------------------------------------------- */
/* Response                                                                 */
/* ----------------------------------------------------------------------- */

/** Provider metadata as the JSON `effect/ai` keeps (undefined fields dropped). */
const metadataOf = (
  metadata: SharedV4ProviderMetadata | undefined,
): { metadata?: Response.ProviderMetadata } =>
  metadata === undefined || Object.keys(metadata).length === 0
    ? {}
    : { metadata: JSON.parse(JSON.stringify(metadata)) };

const finishReasonOf = (
  reason: LanguageModelV4FinishReason,
): Response.FinishReason =>
  reason.unified === "interrupted" ? "unknown" : reason.unified;

/** The counts that are whole numbers; the others are left out. */
const counts = (
  entries: { readonly [key: string]: number | undefined },
): { [key: string]: number } => {
  const out: { [key: string]: number } = {};
  for (const [key, value] of Object.entries(entries)) {
    if (value !== undefined && Number.isSafeInteger(value)) out[key] = value;
  }
  return out;
};

/**
 * The AI SDK's usage as `effect/ai`'s: the same counts, `noCache` as
 * `uncached`; counts the provider did not send are left out.
 */
const usageOf = (
  usage: LanguageModelV4Usage,
): Response.FinishPartEncoded["usage"] => ({
  inputTokens: counts({
    uncached: usage.inputTokens.noCache,
    total: usage.inputTokens.total,
    cacheRead: usage.inputTokens.cacheRead,
    cacheWrite: usage.inputTokens.cacheWrite,
  }),
  outputTokens: counts({
    total: usage.outputTokens.total,
    text: usage.outputTokens.text,
    reasoning: usage.outputTokens.reasoning,
  }),
});

const toolCallOf = (
  call: Extract<LanguageModelV4Content, { type: "tool-call" }>,
): Response.ToolCallPartEncoded => ({
  type: "tool-call",
  id: call.toolCallId,
  name: call.toolName,
  params: parseToolArguments(call.input === "" ? "{}" : call.input),
  ...(call.providerExecuted === true ? { providerExecuted: true } : {}),
  ...metadataOf(call.providerMetadata),
});

/** The parts both `doStream` and `doGenerate` may return. */
const fromShared = (
  part: LanguageModelV4Content,
): Response.StreamPartEncoded | undefined => {
  switch (part.type) {
    case "tool-call":
      return toolCallOf(part);
    case "tool-result":
      return {
        type: "tool-result",
        id: part.toolCallId,
        name: part.toolName,
        result: part.result,
        isFailure: part.isError === true,
        providerExecuted: true,
        preliminary: part.preliminary === true,
        ...metadataOf(part.providerMetadata),
      };
    case "tool-approval-request":
      return {
        type: "tool-approval-request",
        approvalId: part.approvalId,
        toolCallId: part.toolCallId,
        ...metadataOf(part.providerMetadata),
      };
    case "file":
      return {
        type: "file",
        mediaType: part.mediaType,
        data: part.data.type === "url"
          ? part.data.url.toString()
          : typeof part.data.data === "string"
          ? part.data.data
          : base64Of(part.data.data),
        ...metadataOf(part.providerMetadata),
      };
    case "source":
      return part.sourceType === "url"
        ? {
          type: "source",
          sourceType: "url",
          id: part.id,
          url: part.url,
          title: part.title ?? part.url,
          ...metadataOf(part.providerMetadata),
        }
        : {
          type: "source",
          sourceType: "document",
          id: part.id,
          mediaType: part.mediaType,
          title: part.title,
          ...(part.filename === undefined ? {} : { fileName: part.filename }),
          ...metadataOf(part.providerMetadata),
        };
    default:
      return undefined;
  }
};

/**
 * One AI SDK stream part as the `effect/ai` stream part it stands for, or
 * `undefined` for parts the log does not keep (`stream-start`, `ping`,
 * `raw`, `custom`, `reasoning-file`) and for `error` parts, which
 * {@link makeAiSdkModel} turns into a failure.
 *
 * @param part The provider's stream part.
 * @returns The encoded `effect/ai` stream part, or `undefined`.
 *
 * @example A text delta and a finish
 * ```ts
 * import { fromStreamPart } from "@palimpsest/session/ai-sdk";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(fromStreamPart({ type: "text-delta", id: "t", delta: "Hi" }),
 *   { type: "text-delta", id: "t", delta: "Hi" });
 * assert.deepEqual(fromStreamPart({
 *   type: "finish",
 *   finishReason: { unified: "stop", raw: "end_turn" },
 *   usage: {
 *     inputTokens: { total: 9, noCache: 9, cacheRead: undefined, cacheWrite: undefined },
 *     outputTokens: { total: 2, text: 2, reasoning: undefined },
 *   },
 * }), {
 *   type: "finish", reason: "stop",
 *   usage: { inputTokens: { uncached: 9, total: 9 }, outputTokens: { total: 2, text: 2 } },
 * });
 * ```
 */
export function fromStreamPart(
  part: LanguageModelV4StreamPart,
): Response.StreamPartEncoded | undefined {
  switch (part.type) {
    case "text-start":
    case "text-end":
    case "reasoning-start":
    case "reasoning-end":
      return {
        type: part.type,
        id: part.id,
        ...metadataOf(part.providerMetadata),
      };
    case "text-delta":
    case "reasoning-delta":
      return {
        type: part.type,
        id: part.id,
        delta: part.delta,
        ...metadataOf(part.providerMetadata),
      };
    case "tool-input-start":
      return {
        type: "tool-params-start",
        id: part.id,
        name: part.toolName,
        ...(part.providerExecuted === true ? { providerExecuted: true } : {}),
        ...metadataOf(part.providerMetadata),
      };
    case "tool-input-delta":
      return {
        type: "tool-params-delta",
        id: part.id,
        delta: part.delta,
        ...metadataOf(part.providerMetadata),
      };
    case "tool-input-end":
      return {
        type: "tool-params-end",
        id: part.id,
        ...metadataOf(part.providerMetadata),
      };
    case "response-metadata":
      return {
        type: "response-metadata",
        ...(part.id === undefined ? {} : { id: part.id }),
        ...(part.modelId === undefined ? {} : { modelId: part.modelId }),
        ...(part.timestamp === undefined || isNaN(part.timestamp.getTime())
          ? {}
          : { timestamp: part.timestamp.toISOString() }),
      };
    case "finish":
      return {
        type: "finish",
        reason: finishReasonOf(part.finishReason),
        usage: usageOf(part.usage),
        ...metadataOf(part.providerMetadata),
      };
    case "stream-start":
    case "ping":
    case "raw":
    case "error":
    case "custom":
    case "reasoning-file":
      return undefined;
    default:
      return fromShared(part);
  }
}

/**
 * The content of a `doGenerate` result as `effect/ai` response parts, with
 * the response metadata and a `finish` part at the end.
 *
 * @param content The generated content, in order.
 * @param finish The finish reason and usage of the result.
 * @returns The encoded `effect/ai` parts.
 *
 * @example A text and its finish
 * ```ts
 * import { fromContent } from "@palimpsest/session/ai-sdk";
 * import assert from "node:assert/strict";
 *
 * const parts = fromContent([{ type: "text", text: "Done." }], {
 *   finishReason: { unified: "stop", raw: "end_turn" },
 *   usage: {
 *     inputTokens: { total: 5, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
 *     outputTokens: { total: 1, text: undefined, reasoning: undefined },
 *   },
 * });
 * assert.deepEqual(parts, [
 *   { type: "text", text: "Done." },
 *   { type: "finish", reason: "stop", usage: { inputTokens: { total: 5 }, outputTokens: { total: 1 } } },
 * ]);
 * ```
 */
export function fromContent(
  content: ReadonlyArray<LanguageModelV4Content>,
  finish: {
    readonly finishReason: LanguageModelV4FinishReason;
    readonly usage: LanguageModelV4Usage;
    readonly providerMetadata?: SharedV4ProviderMetadata;
  },
): Array<Response.PartEncoded> {
  const out: Array<Response.PartEncoded> = [];
  for (const part of content) {
    switch (part.type) {
      case "text":
      case "reasoning":
        out.push({
          type: part.type,
          text: part.text,
          ...metadataOf(part.providerMetadata),
        });
        break;
      default: {
        const shared = fromShared(part);
        if (shared !== undefined && isPart(shared)) out.push(shared);
      }
    }
  }
  out.push({
    type: "finish",
    reason: finishReasonOf(finish.finishReason),
    usage: usageOf(finish.usage),
    ...metadataOf(finish.providerMetadata),
  });
  return out;
}

const isPart = (
  part: Response.StreamPartEncoded,
): part is Response.StreamPartEncoded & Response.PartEncoded =>
  part.type === "tool-call" || part.type === "tool-result" ||
  part.type === "tool-approval-request" || part.type === "file" ||
  part.type === "source";

/* ----------------------------------------------------------------------- */
/* Errors                                                                   */
/* ----------------------------------------------------------------------- */

const OVERFLOW =
  /context.?(length|window)|too long|too many tokens|maximum (context|prompt)|token limit|exceeds the (context|max)|request_too_large|context_length_exceeded/i;

const textOf = (value: unknown): string | undefined => {
  if (typeof value === "string") return value;
  if (value instanceof Error) return value.message;
  if (typeof value !== "object" || value === null) return undefined;
  const text = JSON.stringify(value);
  return text === undefined ? undefined : text;
};

/** `{ type, code, message }` of a provider's error body, at any depth. */
const errorFields = (
  value: unknown,
): { type?: string; code?: string; message?: string } => {
  if (typeof value !== "object" || value === null) return {};
  const record: { [key: string]: unknown } = { ...value };
  const inner = record["error"];
  const nested = typeof inner === "object" && inner !== null
    ? errorFields(inner)
    : {};
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const type = nested.type ?? str(record["type"]);
  const code = nested.code ?? str(record["code"]);
  const message = nested.message ?? str(record["message"]);
  return {
    ...(type === undefined || type === "error" ? {} : { type }),
    ...(code === undefined ? {} : { code }),
    ...(message === undefined ? {} : { message }),
  };
};

const reasonOfFields = (
  fields: { type?: string; code?: string; message?: string },
  description: string,
): AiError.AiErrorReason | undefined => {
  const kind = `${fields.type ?? ""} ${fields.code ?? ""}`;
  if (OVERFLOW.test(`${kind} ${description}`)) {
    return new AiError.InvalidRequestError({
      ...(fields.code === undefined ? {} : { parameter: fields.code }),
      constraint: "context length",
      description,
    });
  }
  if (/overloaded|api_error|server_error|internal/i.test(kind)) {
    return new AiError.InternalProviderError({ description });
  }
  if (/rate_limit/i.test(kind)) return new AiError.RateLimitError({});
  if (/insufficient_quota|billing/i.test(kind)) {
    return new AiError.QuotaExhaustedError({});
  }
  if (/authentication|invalid_api_key/i.test(kind)) {
    return new AiError.AuthenticationError({ kind: "InvalidKey", description });
  }
  if (/permission/i.test(kind)) {
    return new AiError.AuthenticationError({
      kind: "InsufficientPermissions",
      description,
    });
  }
  if (/invalid_request|not_found|invalid/i.test(kind)) {
    return new AiError.InvalidRequestError({ description });
  }
  return undefined;
};

const reasonOf = (error: unknown): AiError.AiErrorReason => {
  if (AiError.isAiErrorReason(error)) return error;
  if (APICallError.isInstance(error)) {
    const body = error.responseBody;
    const fields = errorFields(error.data ?? parseJson(body));
    const description = fields.message ?? error.message;
    const status = error.statusCode;
    if (status === undefined) {
      return new AiError.NetworkError({
        reason: "TransportError",
        method: "POST",
        url: error.url,
        description: error.message,
      });
    }
    const http = {
      ...(body === undefined ? {} : { body }),
    };
    if (
      OVERFLOW.test(
        `${fields.type ?? ""} ${fields.code ?? ""} ${description}`,
      ) || status === 413
    ) {
      return new AiError.InvalidRequestError({
        ...(fields.code === undefined ? {} : { parameter: fields.code }),
        constraint: "context length",
        description,
        http,
      });
    }
    if (status === 529) {
      return new AiError.InternalProviderError({ description, http });
    }
    return AiError.reasonFromHttpStatus({ status, description, http });
  }
  if (LoadAPIKeyError.isInstance(error)) {
    return new AiError.AuthenticationError({
      kind: "MissingKey",
      description: error.message,
    });
  }
  if (error instanceof TypeError) {
    // What `fetch` throws when no response came (refused, reset, DNS).
    return new AiError.NetworkError({
      reason: "TransportError",
      method: "POST",
      url: "",
      description: error.message,
    });
  }
  const description = textOf(error) ?? "Unknown error";
  const fields = errorFields(error);
  const fromFields = reasonOfFields(fields, fields.message ?? description);
  if (fromFields !== undefined) return fromFields;
  if (error instanceof Error) {
    return new AiError.InvalidResponseError({ description });
  }
  return new AiError.UnknownError({ description });
};

const parseJson = (text: string | undefined): unknown => {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/**
 * An error of an AI SDK provider as an `effect/ai` `AiError`: an HTTP
 * error by its status (400 invalid request, 401/403 authentication, 429
 * rate limit, 5xx and Anthropic's 529 provider errors), a failure with no
 * status (or a `TypeError` from `fetch`) as a network error, a missing key as an authentication error, and
 * an `error` part of a stream by the provider's error type. A refusal for
 * the request's length (OpenAI's `context_length_exceeded`, Anthropic's
 * "prompt is too long", a 413) is an `InvalidRequestError` with constraint
 * `context length`, which `isContextOverflow` recognises.
 *
 * @param error What the AI SDK threw or streamed.
 * @param method The `effect/ai` method (`streamText` or `generateText`).
 * @returns The `AiError`.
 *
 * @example A context-overflow refusal
 * ```ts
 * import { toAiError } from "@palimpsest/session/ai-sdk";
 * import { isContextOverflow } from "@palimpsest/session/ai";
 * import { APICallError } from "@ai-sdk/provider";
 * import assert from "node:assert/strict";
 *
 * const error = toAiError(new APICallError({
 *   message: "prompt is too long: 210000 tokens > 200000 maximum",
 *   url: "https://api.anthropic.com/v1/messages", requestBodyValues: {}, statusCode: 400,
 * }), "streamText");
 * assert.equal(error.reason._tag, "InvalidRequestError");
 * assert.equal(isContextOverflow(error), true);
 * ```
 */
export function toAiError(error: unknown, method: string): AiError.AiError {
  if (AiError.isAiError(error)) return error;
  return AiError.make({ module: MODULE, method, reason: reasonOf(error) });
}

/* ----------------------------------------------------------------------- */
/* The service                                                              */
/* ----------------------------------------------------------------------- */

const abortController = Effect.acquireRelease(
  Effect.sync(() => new AbortController()),
  (controller) => Effect.sync(() => controller.abort()),
);

/**
 * The `effect/ai` `LanguageModel` service of an AI SDK provider model. Use
 * {@link layerAiSdkModel} to provide it.
 *
 * @param model The provider's model, for example `openai("gpt-5")` or
 * `anthropic("claude-sonnet-4-5")`.
 * @param options Settings sent with every request.
 * @returns The service.
 *
 * @example A summary from a mock model
 * ```ts
 * import { makeAiSdkModel } from "@palimpsest/session/ai-sdk";
 * import { MockLanguageModelV4 } from "ai/test";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const model = new MockLanguageModelV4({ doGenerate: {
 *   content: [{ type: "text", text: "Short." }], warnings: [],
 *   finishReason: { unified: "stop", raw: undefined },
 *   usage: { inputTokens: { total: 9, noCache: 9, cacheRead: undefined, cacheWrite: undefined },
 *            outputTokens: { total: 1, text: 1, reasoning: undefined } },
 * } });
 * const response = await Effect.runPromise(Effect.flatMap(
 *   makeAiSdkModel(model),
 *   (service) => service.generateText({ prompt: "summarize" }),
 * ));
 * assert.equal(response.text, "Short.");
 * ```
 */
export function makeAiSdkModel(
  model: LanguageModelV4,
  options: AiSdkModelOptions = {},
): Effect.Effect<LanguageModel.LanguageModel> {
  const settings = options.settings ?? {};
  return LanguageModel.make({
    generateText: (request) =>
      Effect.scoped(Effect.gen(function* () {
        const controller = yield* abortController;
        const result = yield* Effect.tryPromise({
          try: () =>
            Promise.resolve(
              model.doGenerate(
                toCallOptions(request, settings, controller.signal),
              ),
            ),
          catch: (error) => toAiError(error, "generateText"),
        });
        return fromContent(result.content, result);
      })),
    streamText: (request) =>
      Stream.unwrap(Effect.gen(function* () {
        const controller = yield* abortController;
        const result = yield* Effect.tryPromise({
          try: () =>
            Promise.resolve(
              model.doStream(
                toCallOptions(request, settings, controller.signal),
              ),
            ),
          catch: (error) => toAiError(error, "streamText"),
        });
        return Stream.fromReadableStream({
          evaluate: () => result.stream,
          onError: (error) => toAiError(error, "streamText"),
        }).pipe(
          Stream.mapEffect((part) =>
            part.type === "error"
              ? Effect.fail(toAiError(part.error, "streamText"))
              : Effect.succeed(fromStreamPart(part))
          ),
          Stream.filter((part) => part !== undefined),
        );
      })),
  });
}

/**
 * A layer providing `effect/ai`'s `LanguageModel` from an AI SDK provider
 * model, so `runTurn` and `compactIfNeeded` run on it.
 *
 * @param model The provider's model (a `LanguageModelV4`).
 * @param options Settings sent with every request.
 * @returns The layer.
 *
 * @example A mock model answering one streamed request
 * ```ts
 * import { layerAiSdkModel } from "@palimpsest/session/ai-sdk";
 * import { MockLanguageModelV4 } from "ai/test";
 * import { simulateReadableStream } from "ai";
 * import { Effect, Stream } from "effect";
 * import { LanguageModel } from "effect/ai";
 * import assert from "node:assert/strict";
 *
 * const model = new MockLanguageModelV4({
 *   doStream: {
 *     stream: simulateReadableStream({ chunks: [
 *       { type: "text-start", id: "t" },
 *       { type: "text-delta", id: "t", delta: "Hello" },
 *       { type: "text-end", id: "t" },
 *       { type: "finish", finishReason: { unified: "stop", raw: "stop" },
 *         usage: { inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
 *                  outputTokens: { total: 1, text: 1, reasoning: undefined } } },
 *     ] }),
 *   },
 * });
 * const parts = await Effect.runPromise(
 *   LanguageModel.streamText({ prompt: "hi" }).pipe(
 *     Stream.runCollect,
 *     Effect.provide(layerAiSdkModel(model)),
 *   ),
 * );
 * assert.deepEqual(parts.map((p) => p.type), ["text-start", "text-delta", "text-end", "finish"]);
 * ```
 */
export function layerAiSdkModel(
  model: LanguageModelV4,
  options: AiSdkModelOptions = {},
): Layer.Layer<LanguageModel.LanguageModel> {
  return Layer.effect(
    LanguageModel.LanguageModel,
    makeAiSdkModel(model, options),
  );
}
