/**
 * Session sequence numbers: the position of an event in its log.
 *
 * This module owns the {@link SessionSeq} brand and the one predicate every
 * seq check in the library goes through. It does not know about events.
 *
 * @module
 */
import type * as Brand from "effect/Brand";
import * as Result from "effect/Result";
import * as Schema from "effect/Schema";
import { InvalidSessionSeq } from "./errors.ts";

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
 * The branded schema of session sequence numbers. `SessionSeq.make(n)` is
 * the constructor for seqs written in code: it throws for a number that is
 * not a seq (a programming error). A number from outside goes through
 * {@link seqInput}, a `Result`; the functions that take a seq take a plain
 * number and return `InvalidSessionSeq` as a value.
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

/**
 * Checks a seq a caller gave as a plain number: the public inputs that take
 * a seq (`Session.events`, `Session.eventAt`, `surfaceAt`, `lineage`,
 * `shadowedBy`, `fork`, `compact`, `pruneToolResult`) accept any
 * non-negative safe integer and refuse the rest with `InvalidSessionSeq`;
 * what they return stays branded.
 *
 * @param value The number given.
 * @returns The seq, or the `InvalidSessionSeq` refusal.
 *
 * @example
 * ```ts
 * import { seqInput } from "@palimpsest/session";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * assert.equal(Result.getOrThrow(seqInput(28)), 28);
 * assert.equal(Result.isFailure(seqInput(-1)), true);
 * ```
 */
export function seqInput(
  value: number,
): Result.Result<SessionSeq, InvalidSessionSeq> {
  return isSessionSeq(value)
    ? Result.succeed(value)
    : Result.fail(new InvalidSessionSeq({ value, type: undefined }));
}
