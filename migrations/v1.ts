/**
 * Frozen decoder of format v1 (released; never edit).
 *
 * v1 records model output as top-level `assistant/chunk {turn, step, chunk}` log-only events; an
 * `assistant/message {turn, step, message, usage?, interrupted?}` cites its chunks, in order, in
 * `sourceEventSeqs` (and may cite nothing when the provider did not stream). Replace objects are
 * `{op: "replace", start, end}`; the system prompt lives in `request/header.data.header.system`
 * (a string; absent means no system prompt). There is no `system/message` and no
 * `assistant/attempt`.
 *
 * Decisions the edges make (docs/migrations.md): surface types (`user/message`, `assistant/message`,
 * `tool/result`) require `surfaceOp`; an `assistant/message` data has no `stream` key (the v1→v2
 * edge adds it); data keys beyond the checked ones are kept and left to the v3 decoder.
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
 * The frozen vocabulary of format v1.
 *
 * @example Listing the v1 surface types
 * ```ts
 * import { v1Vocabulary } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * assert.equal(v1Vocabulary.surface.has("user/message"), true);
 * ```
 */
export const v1Vocabulary: LegacyVocabulary = {
  version: 1,
  surface: new Set(["user/message", "assistant/message", "tool/result"]),
  noSources: new Set<string>([]),
  data: new Map<string, DataCheck>([
    ["user/message", message("user")],
    ["tool/result", toolResultData],
    ["assistant/message", unstreamedAssistantData],
    ["assistant/chunk", assistantChunkData],
    ...turnAndRequestEntries,
    ...compactionEntries("compaction"),
  ]),
};

/**
 * Decode one event line of a v1 log: the event with its data untouched, or the first v1
 * rule it breaks (the line number given is 1-based, the header being line 1).
 *
 * @example Decoding a v1 line
 * ```ts
 * import { decodeV1Event } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = decodeV1Event({ type: "assistant/chunk", seq: 3, time: 1, data: { turn: 0, step: 0, chunk: { text: "hi" } } }, 5);
 * assert.equal(Result.isSuccess(event), true);
 * ```
 */
export const decodeV1Event: LegacyLineDecoder = legacyDecoder(
  v1Vocabulary,
);
