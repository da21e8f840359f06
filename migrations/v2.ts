/**
 * Frozen decoder of format v2 (released; never edit).
 *
 * v2 embeds the provider stream in `assistant/message.data.stream` (an array of `{time, chunk}`)
 * and forbids `sourceEventSeqs` on it; a settled attempt that produced no message is an
 * `assistant/attempt {turn, step, stream}`. Replace objects are `{op: "replace", start, end}`.
 * The system prompt lives in `request/header.data.header.system` (a string; absent means no
 * system prompt, the same as `""`); there is no `system/message` type, so a v2 `system/message`
 * line is an unknown type.
 *
 * Decisions the edges make (docs/migrations.md): surface types (`user/message`, `assistant/message`,
 * `tool/result`) require `surfaceOp`; data keys beyond the checked ones are kept and left to the
 * v3 decoder.
 *
 * @module
 */
import {
  anyJson,
  arrayOf,
  type DataCheck,
  int,
  legacyDecoder,
  type LegacyLineDecoder,
  type LegacyVocabulary,
  message,
  nat,
  struct,
} from "./legacy.ts";
import {
  compactionEntries,
  toolResultData,
  turnAndRequestEntries,
} from "./legacy_checks.ts";

/**
 * The frozen vocabulary of format v2.
 *
 * @example Listing the v2 surface types
 * ```ts
 * import { v2Vocabulary } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * assert.equal(v2Vocabulary.surface.has("user/message"), true);
 * ```
 */
export const v2Vocabulary: LegacyVocabulary = {
  version: 2,
  surface: new Set(["user/message", "assistant/message", "tool/result"]),
  noSources: new Set<string>(["assistant/message"]),
  data: new Map<string, DataCheck>([
    ["user/message", message("user")],
    ["tool/result", toolResultData],
    [
      "assistant/message",
      struct({
        turn: nat,
        step: nat,
        message: message("assistant"),
        stream: arrayOf(struct({ time: int, chunk: anyJson })),
      }, {
        usage: anyJson,
        interrupted: anyJson,
      }),
    ],
    [
      "assistant/attempt",
      struct({
        turn: nat,
        step: nat,
        stream: arrayOf(struct({ time: int, chunk: anyJson })),
      }),
    ],
    ...turnAndRequestEntries,
    ...compactionEntries("compaction"),
  ]),
};

/**
 * Decode one event line of a v2 log: the event with its data untouched, or the first v2
 * rule it breaks (the line number given is 1-based, the header being line 1).
 *
 * @example Decoding a v2 line
 * ```ts
 * import { decodeV2Event } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = decodeV2Event({ type: "request/header", seq: 2, time: 1, data: { header: { config: { provider: "p", model: "m" }, system: "Be brief" }, reason: "step" } }, 5);
 * assert.equal(Result.isSuccess(event), true);
 * ```
 */
export const decodeV2Event: LegacyLineDecoder = legacyDecoder(
  v2Vocabulary,
);
