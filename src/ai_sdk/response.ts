/**
 * AI SDK answers as `effect/ai` parts: each stream part
 * ({@link fromStreamPart}) and a whole answer's content ({@link fromContent}),
 * with usage, finish reasons and provider metadata.
 *
 * @module
 */
import type { Response } from "effect/ai";
import type {
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
  SharedV4ProviderMetadata,
} from "@ai-sdk/provider";
import { parseToolArguments } from "../providers/content.ts";
import { base64Of } from "./request.ts";

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

/**
 * The counts that are whole numbers; the others are left out.
 * @internal
 */
export const counts = (
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
