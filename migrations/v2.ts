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
 * Decisions where SPEC §5 is silent: surface types (`user/message`, `assistant/message`,
 * `tool/result`) require `surfaceOp`; data keys beyond the checked ones are kept and left to the
 * v3 decoder.
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
  int,
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
    [
      "tool/result",
      struct({ turn: nat, step: nat, message: message("user") }, {
        error: struct({ name: str, code: str }),
        meta: anyJson,
      }),
    ],
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
 * Decode one event line of a v2 log.
 *
 * @param input The parsed JSON line.
 * @param line Its 1-based line in the file (the header is line 1).
 * @returns The event with its data untouched, or the first v2 rule it breaks.
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
export function decodeV2Event(
  input: unknown,
  line: number,
): Result.Result<LegacyEvent, LegacyDecodeError> {
  return decodeLegacyEvent(v2Vocabulary, input, line);
}
