/**
 * `thenFails`: the one way a test checks a refusal, by its tag and its
 * fields, never by message text; and `failureOf` / `successOf`, which
 * take the outcome out of an exit (or a result).
 *
 * @module
 */
import assert from "node:assert/strict";
import { Cause, Exit, Result } from "effect";

/** The fields of the member of `E` tagged `T`. */
export type FieldsOf<E, T> = {
  readonly [K in keyof Extract<E, { readonly _tag: T }>]?: unknown;
};

/**
 * Asserts that `error` is tagged `tag` and that each given field deep-equals
 * its value, and returns it narrowed to that member.
 *
 * @param error The error a test got.
 * @param tag The expected tag.
 * @param fields Expected field values (only those given are compared).
 * @returns The error, narrowed.
 */
export function thenFails<
  E extends { readonly _tag: string },
  T extends E["_tag"],
>(
  error: E,
  tag: T,
  fields?: FieldsOf<E, T>,
): Extract<E, { readonly _tag: T }> {
  assert.equal(error._tag, tag);
  for (const [key, value] of Object.entries(fields ?? {})) {
    assert.deepEqual(Reflect.get(error, key), value, `field ${key} of ${tag}`);
  }
  return narrow<E, T>(error);
}

// The tag was checked just above.
const narrow = <E, T>(error: E): Extract<E, { readonly _tag: T }> =>
  error as Extract<E, { readonly _tag: T }>;

/**
 * The typed failure of an exit or a result; throws when it succeeded or
 * when an exit holds a defect.
 */
export const failureOf = <A, E>(
  outcome: Exit.Exit<A, E> | Result.Result<A, E>,
): E => {
  if (!Exit.isExit(outcome)) {
    if (Result.isSuccess(outcome)) {
      throw new Error(`Expected a failure but the result is a success`);
    }
    return outcome.failure;
  }
  const exit = outcome;
  if (Exit.isSuccess(exit)) {
    throw new Error(`Expected a failure but the effect succeeded`);
  }
  if (Cause.hasDies(exit.cause)) {
    throw new Error(
      `Expected a typed failure but found a defect: ${
        Cause.pretty(exit.cause)
      }`,
    );
  }
  const found = exit.cause.reasons.find((r) => r._tag === "Fail");
  if (found === undefined || found._tag !== "Fail") {
    throw new Error(`Expected a typed failure but found ${String(exit.cause)}`);
  }
  return found.error;
};

/** The value of a successful exit, or throws with its cause. */
export const successOf = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value;
  throw new Error(`Expected a success but found ${String(exit.cause)}`);
};
