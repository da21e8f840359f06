/**
 * `@palimpsest/session/ai`: talking to a model through `effect/ai`.
 *
 * - {@link recordAnswer} turns the `effect/ai` stream parts of one answer
 *   into the events that keep it: an `assistant/message` embedding the
 *   stream (or an `assistant/attempt` when nothing came out) and one
 *   `tool/call` per call.
 * - {@link runTurn} runs one agent turn on any `LanguageModel` and a
 *   `Toolkit`: the prompt derived from the surface, the answer recorded,
 *   each tool run with its handler, every step persisted through the
 *   session store as it happens, interruption at any point leaving a log
 *   that the store's `repair` closes.
 * - {@link compactIfNeeded} is the compaction engine: a token budget, a
 *   durable lock, a model-written summary refused unless smaller, a
 *   stability check, and overflow recovery in the turn loop
 *   ({@link isContextOverflow}).
 *
 * @module
 */
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
