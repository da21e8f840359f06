/**
 * Frozen decoder of format v0 (released; never edit).
 *
 * v0 is v1 with legacy spellings: `steering/message` (a user-role message the harness injected
 * mid-turn; its data is the message itself, like `user/message`) and `compact/start`,
 * `compact/summary`, `compact/prune`, `compact/end` for the `compaction/*` types. Model output is
 * logged as `assistant/chunk {turn, step, chunk}` events cited, in order, by the
 * `assistant/message` that assembled them. Replace objects are `{op: "replace", start, end}`.
 * The system prompt lives in `request/header.data.header.system` (a string; absent means no
 * system prompt).
 *
 * Decisions the edges make (docs/migrations.md): both `user/message` and `steering/message` exist in v0;
 * surface types (`user/message`, `steering/message`, `assistant/message`, `tool/result`) require
 * `surfaceOp` (a missing marker is refused, never an implicit append); data keys beyond the
 * checked ones are kept and left to the v3 decoder.
 *
 * @module
 */
import {
  type DataCheck,
  legacyDecoder,
  type LegacyLineDecoder,
  type LegacyVocabulary,
  message,
} from "./legacy.ts";
import {
  assistantChunkData,
  compactionEntries,
  toolResultData,
  turnAndRequestEntries,
  unstreamedAssistantData,
} from "./legacy_checks.ts";

/**
 * The frozen vocabulary of format v0.
 *
 * @example Listing the v0 surface types
 * ```ts
 * import { v0Vocabulary } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * assert.equal(v0Vocabulary.surface.has("user/message"), true);
 * ```
 */
export const v0Vocabulary: LegacyVocabulary = {
  version: 0,
  surface: new Set([
    "user/message",
    "steering/message",
    "assistant/message",
    "tool/result",
  ]),
  noSources: new Set<string>([]),
  data: new Map<string, DataCheck>([
    ["user/message", message("user")],
    ["tool/result", toolResultData],
    ["steering/message", message("user")],
    ["assistant/message", unstreamedAssistantData],
    ["assistant/chunk", assistantChunkData],
    ...turnAndRequestEntries,
    ...compactionEntries("compact"),
  ]),
};

/**
 * Decode one event line of a v0 log: the event with its data untouched, or the first v0
 * rule it breaks (the line number given is 1-based, the header being line 1).
 *
 * @example Decoding a v0 line
 * ```ts
 * import { decodeV0Event } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = decodeV0Event({ type: "steering/message", seq: 4, time: 1, surfaceOp: "append", data: { id: "u1", role: "user", content: [], source: { kind: "user" } } }, 5);
 * assert.equal(Result.isSuccess(event), true);
 * ```
 */
export const decodeV0Event: LegacyLineDecoder = legacyDecoder(
  v0Vocabulary,
);
