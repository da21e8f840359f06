/**
 * The base classes of the tagged errors, shared by every error module.
 *
 * An error class names its tag once, in the type of its module's bases, and
 * extends the base of that tag: `class X extends Tagged.X<{ ...fields }>`.
 * The base sets `_tag` and the fields, as `Data.Error` does. Effect's own
 * `Data.TaggedError("X")` is a call, which an `extends` clause may not hold
 * under isolated declarations (JSR's "no slow types"); a property of an
 * explicitly typed object may. This module owns the bases, not the errors.
 *
 * @module
 */
import type * as Cause from "effect/Cause";
import * as Data from "effect/Data";
import type * as Types from "effect/Types";

/** The base class of the errors tagged `Tag`, generic in their fields. */
export type TaggedErrorBase<Tag extends string> = new <
  A extends Record<string, unknown>,
>(
  args: Types.VoidIfEmpty<{ readonly [P in keyof A]: A[P] }>,
) =>
  & Cause.YieldableError
  & {
    /** The tag. */
    readonly _tag: Tag;
  }
  & Readonly<A>;

/** One base class per tag. */
export type TaggedErrorBases<Tag extends string> = {
  readonly [T in Tag]: TaggedErrorBase<T>;
};

/**
 * The base classes of a module's tagged errors, one per tag, each made on
 * its first use.
 *
 * @returns An object holding the base class of each tag in `Tag`.
 * @example Declaring an error
 * ```ts ignore
 * const Tagged: TaggedErrorBases<"NotFound"> = taggedErrorBases();
 * export class NotFound extends Tagged.NotFound<{ readonly path: string }> {
 *   override readonly message: string = `Not found: ${this.path}`;
 * }
 * ```
 */
export function taggedErrorBases<Tag extends string>(): TaggedErrorBases<Tag>;
// The signature above is the contract; TypeScript cannot see that a class
// made for a property name has the generic constructor of that tag, so the
// implementation returns the looser record that signature narrows.
export function taggedErrorBases(): Record<string, unknown> {
  const bases: Record<string, unknown> = {};
  return new Proxy(bases, {
    get: (made, tag) =>
      typeof tag === "string" ? made[tag] ??= makeBase(tag) : undefined,
  });
}

const makeBase = (tag: string): unknown =>
  class extends Data.Error {
    readonly _tag: string = tag;
  };
