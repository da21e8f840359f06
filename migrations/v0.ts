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
 * Decisions where SPEC §5 is silent: both `user/message` and `steering/message` exist in v0;
 * surface types (`user/message`, `steering/message`, `assistant/message`, `tool/result`) require
 * `surfaceOp` (a missing marker is refused, never an implicit append); data keys beyond the
 * checked ones are kept and left to the v3 decoder.
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
    [
      "tool/result",
      struct({ turn: nat, step: nat, message: message("user") }, {
        error: struct({ name: str, code: str }),
        meta: anyJson,
      }),
    ],
    ["steering/message", message("user")],
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
    ["compact/start", struct({ compactionId: str, turn: nat })],
    [
      "compact/summary",
      struct({
        compactionId: str,
        summary: str,
        shadowedSeqs: arrayOf(nat, true),
      }),
    ],
    ["compact/prune", struct({ shadowedSeqs: arrayOf(nat, true) })],
    ["compact/end", struct({ compactionId: str }, { error: anyJson })],
  ]),
};

/**
 * Decode one event line of a v0 log.
 *
 * @param input The parsed JSON line.
 * @param line Its 1-based line in the file (the header is line 1).
 * @returns The event with its data untouched, or the first v0 rule it breaks.
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
export function decodeV0Event(
  input: unknown,
  line: number,
): Result.Result<LegacyEvent, LegacyDecodeError> {
  return decodeLegacyEvent(v0Vocabulary, input, line);
}
