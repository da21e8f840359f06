/**
 * Data checks that formats v0, v1 and v2 share word for word (released; never edit).
 *
 * The frozen vocabularies (`v0.ts`, `v1.ts`, `v2.ts`) each list their own types; the schemas no
 * version changed between v0 and v2 live here once, so the three decoders cannot drift apart on
 * them. A version that changes one of these types spells its own check instead of editing this
 * file.
 *
 * @module
 */
import {
  anyJson,
  arrayOf,
  type DataCheck,
  forbidden,
  literal,
  message,
  nat,
  nonEmpty,
  str,
  struct,
} from "./legacy.ts";

/** One entry of a frozen vocabulary's data map: a type and the check of its data. */
export type DataEntry = readonly [type: string, check: DataCheck];

/** `tool/result` data in v0, v1 and v2. */
export const toolResultData: DataCheck = struct({
  turn: nat,
  step: nat,
  message: message("user"),
}, {
  error: struct({ name: str, code: str }),
  meta: anyJson,
});

/** `assistant/message` data in v0 and v1: chunks are separate events, so no `stream` key. */
export const unstreamedAssistantData: DataCheck = struct({
  turn: nat,
  step: nat,
  message: message("assistant"),
}, {
  usage: anyJson,
  interrupted: anyJson,
  stream: forbidden,
});

/** `assistant/chunk` data in v0 and v1. */
export const assistantChunkData: DataCheck = struct({
  turn: nat,
  step: nat,
  chunk: anyJson,
});

/** The log-only types of turns, steps, tool calls, requests and seeds, alike in v0, v1 and v2. */
export const turnAndRequestEntries: ReadonlyArray<DataEntry> = [
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
];

/**
 * The four compaction types under a version's spelling (v0 `compact/*`, v1 and v2
 * `compaction/*`); their data is the same in all three.
 *
 * @param prefix The type prefix the version spells.
 * @returns The `start`, `summary`, `prune` and `end` entries.
 */
export function compactionEntries(
  prefix: "compact" | "compaction",
): ReadonlyArray<DataEntry> {
  return [
    [`${prefix}/start`, struct({ compactionId: str, turn: nat })],
    [
      `${prefix}/summary`,
      struct({
        compactionId: str,
        summary: str,
        shadowedSeqs: arrayOf(nat, true),
      }),
    ],
    [`${prefix}/prune`, struct({ shadowedSeqs: arrayOf(nat, true) })],
    [`${prefix}/end`, struct({ compactionId: str }, { error: anyJson })],
  ];
}
