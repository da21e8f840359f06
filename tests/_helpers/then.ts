/**
 * `thenFails`: the one way a test checks a refusal, by its tag and its
 * fields, never by message text; and `failureOf` / `failureOrValue`, which
 * take the outcome out of an exit.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Exit } from "effect";

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

/** The failure of an exit, or throws when it succeeded or died. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) {
    throw new Error(`Expected a failure but the effect succeeded`);
  }
  const found = exit.cause.reasons.find((r) => r._tag === "Fail");
  if (found === undefined || found._tag !== "Fail") {
    throw new Error(`Expected a typed failure but found ${String(exit.cause)}`);
  }
  return found.error;
};

/** The value of an exit, or throws with its cause. */
export const failureOrValue = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value;
  throw new Error(`Expected a success but found ${String(exit.cause)}`);
};
