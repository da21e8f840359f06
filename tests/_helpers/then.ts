/**
 * `thenFails`: the one way a test checks a refusal, by its tag and its
 * fields, never by message text; and `failureOf` / `successOf`, which
 * take the outcome out of an exit (or a result).
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
  if (!hasTag(error, tag)) return assert.fail(`Expected ${tag}`);
  for (const [key, value] of Object.entries(fields ?? {})) {
    assert.deepEqual(Reflect.get(error, key), value, `field ${key} of ${tag}`);
  }
  return error;
}

const hasTag = <E extends { readonly _tag: string }, T extends E["_tag"]>(
  error: E,
  tag: T,
): error is Extract<E, { readonly _tag: T }> => error._tag === tag;

export { failureOf } from "../../src/testing/conformance_kit.ts";

/** The value of a successful exit, or throws with its cause. */
export const successOf = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value;
  throw new Error(`Expected a success but found ${String(exit.cause)}`);
};
