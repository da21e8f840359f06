/**
 * The lines the amplification inputs are made of, shared by the benchmark
 * (`bench/amplification.ts`) and the fuzz category
 * (`tests/fuzz/amplification_fuzz_test.ts`): a v3 header and a user message
 * whose `seq` and source list are whatever the input asks for.
 *
 * @module
 */

/** A v3 session header line. */
export const HEADER =
  '{"type":"session","version":3,"id":"a","createdAt":0,"isSeeded":false}';

/** The largest safe integer: the last seq a log can hold. */
export const LAST_SAFE: number = Number.MAX_SAFE_INTEGER;

/**
 * A `user/message` line with any `seq` and, if given, any stored source list
 * (runs included), unchecked.
 *
 * @param seq The `seq` field, valid or not.
 * @param sources The `sourceEventSeqs` field, when present.
 * @returns The JSON line.
 */
export const userLine = (seq: unknown, sources?: unknown): string =>
  JSON.stringify({
    type: "user/message",
    seq,
    time: 0,
    data: {
      id: `m${String(seq)}`,
      role: "user",
      content: [],
      source: { kind: "user" },
    },
    surfaceOp: "append",
    ...(sources === undefined ? {} : { sourceEventSeqs: sources }),
  });
