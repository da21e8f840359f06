/**
 * Session sequence numbers: the position of an event in its log.
 *
 * This module owns the {@link SessionSeq} brand and the one predicate every
 * seq check in the library goes through. It does not know about events.
 *
 * @module
 */
import type * as Brand from "effect/Brand";
import * as Schema from "effect/Schema";

/**
 * A non-negative safe integer naming the position of an event in a session
 * log. The n-th event of a log has seq n (a window may start at a base seq).
 * A plain `number` is not assignable to it: values come from decoding or from
 * `SessionSeq.make`.
 */
export type SessionSeq = number & Brand.Brand<"SessionSeq">;

/**
 * Returns true when `value` is a valid seq: a non-negative safe integer that
 * is not `-0`.
 *
 * @param value Any value.
 * @returns Whether `value` may be branded as a {@link SessionSeq}.
 *
 * @example Checking candidate seqs
 * ```ts
 * import { isSessionSeq } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isSessionSeq(3), true);
 * assert.equal(isSessionSeq(-0), false);
 * assert.equal(isSessionSeq(1.5), false);
 * ```
 */
export function isSessionSeq(value: unknown): value is SessionSeq {
  return typeof value === "number" && Number.isSafeInteger(value) &&
    value >= 0 && !Object.is(value, -0);
}

/**
 * The branded schema of session sequence numbers.
 *
 * @example Decoding and making seqs
 * ```ts
 * import { SessionSeq } from "@palimpsest/session";
 * import { type Brand, Schema } from "effect";
 * import assert from "node:assert/strict";
 *
 * const seq: SessionSeq = SessionSeq.make(4);
 * assert.equal(seq, 4);
 * assert.equal(Schema.is(SessionSeq)(-1), false);
 * assert.throws(() => SessionSeq.make(-0));
 * ```
 */
export const SessionSeq: Schema.brand<Schema.Int, "SessionSeq"> = Schema.Int
  .check(
    Schema.isGreaterThanOrEqualTo(0),
    Schema.makeFilter((n: number) => !Object.is(n, -0), {
      expected: "a seq that is not -0",
    }),
  ).pipe(Schema.brand("SessionSeq"));
