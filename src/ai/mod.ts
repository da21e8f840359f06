/**
 * `@palimpsest/session/ai`: derived messages in the shape each model API
 * accepts, with every tool call answered.
 *
 * - {@link pairToolCalls} is the one pairing pass every adapter runs first:
 *   each call answered once, right after the message that made it, and the
 *   repairs reported as data.
 * - {@link toPrompt} builds an `effect/ai` `Prompt.Prompt`, for any
 *   `LanguageModel`.
 * - {@link parseToolArguments} and {@link resolveAttachment} are the
 *   policies the adapters share for tool arguments and attachments.
 *
 * @example Pair, then build the prompt
 * ```ts
 * import { pairToolCalls, toPrompt } from "@palimpsest/session/ai";
 * import type { Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const messages: Message[] = [
 *   { id: "u0", role: "user", source: { kind: "user" },
 *     content: [{ type: "text", text: "hi" }] },
 * ];
 * assert.deepEqual(pairToolCalls(messages).repairs, []);
 * assert.equal(toPrompt(messages).content.length, 1);
 * ```
 *
 * @module
 */
export {
  type DroppedCallReason,
  type DroppedResultReason,
  type DroppedToolCall,
  type DroppedToolResult,
  MISSING_RESULT_TEXT,
  type MovedToolResult,
  type PairedMessages,
  type PairingRepair,
  pairToolCalls,
  type SyntheticToolResult,
} from "./pairing.ts";
export {
  type AdapterOptions,
  type AttachmentResolver,
  type InlineAttachment,
  INVALID_ARGUMENTS_KEY,
  type JsonObject,
  omittedText,
  parseToolArguments,
  resolveAttachment,
  type ResolvedAttachment,
  type UrlAttachment,
} from "./content.ts";
export { toPrompt } from "./prompt.ts";
