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
 * Decisions where SPEC §5 is silent: surface types (`user/message`, `assistant/message`,
 * `tool/result`) require `surfaceOp`; an `assistant/message` data has no `stream` key (the v1→v2
 * edge adds it); data keys beyond the checked ones are kept and left to the v3 decoder.
 *
 * @module
 */
import type * as Result from "effect/Result";
import type { LegacyDecodeError } from "./errors.ts";
import {
  anyJson,
  arrayOf,
  type DataCheck,
  decodeLegacyEvent,
  forbidden,
  type LegacyEvent,
  type LegacyVocabulary,
  literal,
  message,
  nat,
  nonEmpty,
  str,
  struct,
} from "./legacy.ts";

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
    [
      "tool/result",
      struct({ turn: nat, step: nat, message: message("user") }, {
        error: struct({ name: str, code: str }),
        meta: anyJson,
      }),
    ],
    [
      "assistant/message",
      struct({ turn: nat, step: nat, message: message("assistant") }, {
        usage: anyJson,
        interrupted: anyJson,
        stream: forbidden,
      }),
    ],
    ["assistant/chunk", struct({ turn: nat, step: nat, chunk: anyJson })],
    ["turn/start", struct({ turn: nat })],
    [
      "turn/end",
      struct({
        turn: nat,
        reason: struct({
          kind: literal(
            "completed",
            "aborted",
            "blocked",
            "error",
            "max-tokens",
            "interrupted",
          ),
        }),
      }),
    ],
    ["step/start", struct({ turn: nat, step: nat })],
    ["step/end", struct({ turn: nat, step: nat })],
    [
      "tool/call",
      struct({
        turn: nat,
        step: nat,
        callId: nonEmpty,
        name: str,
        arguments: str,
      }),
    ],
    [
      "request/header",
      struct({
        header: struct({ config: struct({ provider: str, model: str }) }, {
          system: str,
        }),
        reason: anyJson,
      }),
    ],
    [
      "request/context",
      struct({ provider: str, model: str }, { contextWindow: nat }),
    ],
    ["session/end-seed", struct({}, { inherited: literal(true) })],
    ["compaction/start", struct({ compactionId: str, turn: nat })],
    [
      "compaction/summary",
      struct({
        compactionId: str,
        summary: str,
        shadowedSeqs: arrayOf(nat, true),
      }),
    ],
    ["compaction/prune", struct({ shadowedSeqs: arrayOf(nat, true) })],
    ["compaction/end", struct({ compactionId: str }, { error: anyJson })],
  ]),
};

/**
 * Decode one event line of a v1 log.
 *
 * @param input The parsed JSON line.
 * @param line Its 1-based line in the file (the header is line 1).
 * @returns The event with its data untouched, or the first v1 rule it breaks.
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
export function decodeV1Event(
  input: unknown,
  line: number,
): Result.Result<LegacyEvent, LegacyDecodeError> {
  return decodeLegacyEvent(v1Vocabulary, input, line);
}
