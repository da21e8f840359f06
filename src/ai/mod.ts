/**
 * `@palimpsest/session/ai`: talking to a model through `effect/ai`, with
 * every tool call answered and every step of the conversation in the log.
 *
 * - {@link toPrompt} builds an `effect/ai` `Prompt.Prompt`, for any
 *   `LanguageModel`, after the same pairing pass as every provider's
 *   converter.
 * - {@link toolDefinitions} gives the definitions of an `effect/ai`
 *   `Toolkit`'s tools, which each provider's tool converter in
 *   `@palimpsest/session/providers` (`anthropicTools`, ...) takes, and
 *   {@link requestTools} the tools a request with these messages must
 *   define.
 * - {@link recordAnswer} turns the `effect/ai` stream parts of one answer
 *   into the events that keep it: an `assistant/message` embedding the
 *   stream (or an `assistant/attempt` when nothing came out) and one
 *   `tool/call` per call, each call's id made new when the session
 *   already uses it ({@link sessionCallIds}).
 * - {@link runTurn} runs one agent turn on any `LanguageModel` and a
 *   `Toolkit`: the prompt derived from the surface, the answer recorded,
 *   each tool run with its handler, every step persisted through the
 *   session store as it happens; interruption at any point leaves a log
 *   that the store's `repair` closes, and the next `runTurn` closes it
 *   first on its own.
 * - {@link compactIfNeeded} is the compaction engine: a token budget, a
 *   durable lock (an abandoned one closed first), a model-written summary
 *   refused when empty or not smaller, a stability check, and overflow recovery in the turn loop
 *   ({@link isContextOverflow}).
 *
 * The provider request converters, their tools and validators, and the
 * pairing pass are `@palimpsest/session/providers`, not re-exported here: a
 * program that only builds requests imports that entry point and never
 * loads `effect/ai`.
 *
 * @example Pair, then build the prompt
 * ```ts
 * import { toPrompt } from "@palimpsest/session/ai";
 * import { pairToolCalls } from "@palimpsest/session/providers";
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
export { toPrompt } from "./prompt.ts";
export { requestTools, toolDefinitions, type Tools } from "./tools.ts";
export {
  type AssistantAttemptDraft,
  recordAnswer,
  type RecordedAnswer,
  type RecordOptions,
  sessionCallIds,
  type TimedPart,
} from "./record.ts";
export { runTurn } from "./turn.ts";
export { streamTurn } from "./turn_stream.ts";
export {
  type CompactionRefusal,
  type CompactionReport,
  INVALID_ARGUMENTS,
  type PartialOptions,
  type RequestRepairs,
  type RunTurnOptions,
  TOOL_FAILED,
  TOOL_NOT_FOUND,
  type TurnError,
  type TurnEvent,
  type TurnOutcome,
  type TurnUsage,
} from "./turn_types.ts";
export {
  compactIfNeeded,
  type CompactIfNeededOptions,
  type CompactionEngineError,
  type CompactionOutcome,
  type CompactionPolicy,
  type CompactionStarted,
  DEFAULT_SUMMARY_INSTRUCTIONS,
  isContextOverflow,
  type OnOpen,
  OVERFLOW_KEEP_FRACTION,
  releaseStaleCompaction,
} from "./compaction.ts";
export {
  DEFAULT_MODEL_RETRIES,
  isTransientError,
  MAX_RETRY_AFTER_MILLIS,
  type ModelRetry,
  type ModelRetryAttempt,
  retryAfterMillis,
  retrySchedule,
} from "./retry.ts";
export { estimateTokensByChars, type TokenEstimate } from "../core/tokens.ts";
export * from "./errors.ts";
