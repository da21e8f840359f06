/**
 * `@palimpsest/session/ai`: talking to a model through `effect/ai`, with
 * every tool call answered and every step of the conversation in the log.
 *
 * - {@link pairToolCalls} is the one pairing pass every adapter runs first:
 *   each call answered once, right after the message that made it, and the
 *   repairs reported as data.
 * - {@link toPrompt} builds an `effect/ai` `Prompt.Prompt`, for any
 *   `LanguageModel`.
 * - {@link parseToolArguments} and {@link resolveAttachment} are the
 *   policies the adapters share for tool arguments and attachments.
 * - {@link recordAnswer} turns the `effect/ai` stream parts of one answer
 *   into the events that keep it: an `assistant/message` embedding the
 *   stream (or an `assistant/attempt` when nothing came out) and one
 *   `tool/call` per call.
 * - {@link runTurn} runs one agent turn on any `LanguageModel` and a
 *   `Toolkit`: the prompt derived from the surface, the answer recorded,
 *   each tool run with its handler, every step persisted through the
 *   session store as it happens; interruption at any point leaves a log
 *   that the store's `repair` closes.
 * - {@link compactIfNeeded} is the compaction engine: a token budget, a
 *   durable lock, a model-written summary refused unless smaller, a
 *   stability check, and overflow recovery in the turn loop
 *   ({@link isContextOverflow}).
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
export {
  type AssistantAttemptDraft,
  recordAnswer,
  type RecordedAnswer,
  type RecordOptions,
  type TimedPart,
} from "./record.ts";
export {
  INVALID_ARGUMENTS,
  runTurn,
  type RunTurnOptions,
  TOOL_FAILED,
  TOOL_NOT_FOUND,
  type TurnError,
  type TurnOutcome,
} from "./turn.ts";
export {
  compactIfNeeded,
  type CompactIfNeededOptions,
  type CompactionEngineError,
  type CompactionOutcome,
  type CompactionPolicy,
  DEFAULT_SUMMARY_INSTRUCTIONS,
  estimateTokensByChars,
  isContextOverflow,
  releaseStaleCompaction,
  type TokenEstimate,
} from "./compaction.ts";
export {
  CompactionInProgress,
  CompactionRangeChanged,
  SummaryNotSmaller,
} from "./errors.ts";
