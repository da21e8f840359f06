/**
 * `jsonDiff` tells equal values apart by a recursive walk that allocates
 * nothing and hands every other pair to the iterative walk: both must give
 * the same answer for any pair, any skipped path and any nesting depth.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { jsonDiff, jsonDiffWalk } from "../../src/core/json_diff.ts";

// A small alphabet, so that equal and nearly equal pairs are common: keys
// that the skipped paths name, leaves JSON tells apart (and `undefined`
// members, which count as absent, and -0 and NaN, which `Object.is` judges).
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(undefined, null, 0, -0, 1, Number.NaN, "", "x", true),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(
      fc.constantFrom("a", "b", "message", "content"),
      tie("value"),
      { maxKeys: 3 },
    ),
  ),
}));

// Shaped like a tool result's data, so the skipped path is often there.
const shaped = fc.record({
  a: value,
  message: fc.record({
    b: value,
    content: fc.array(
      fc.dictionary(fc.constantFrom("a", "content"), value, { maxKeys: 2 }),
      { minLength: 1, maxLength: 2 },
    ),
  }),
});
const either = fc.oneof(value, shaped);

const skips: ReadonlyArray<ReadonlyArray<string | number>> = [
  [],
  ["a"],
  ["a", 0],
  ["message", "content", 0, "content"],
  ["content", 0],
];
const skip = fc.constantFrom(...skips);

/** A copy of `v` in which the value at `path` (when there is one) is `to`. */
const copyWith = (
  v: unknown,
  path: ReadonlyArray<string | number>,
  to: unknown,
): unknown => {
  if (typeof v !== "object" || v === null) return v;
  const [head, ...rest] = path;
  if (Array.isArray(v)) {
    return v.map((item, i) =>
      i === head
        ? (rest.length === 0 ? to : copyWith(item, rest, to))
        : copyWith(item, [], to)
    );
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(v)) {
    out[key] = key === head
      ? (rest.length === 0 ? to : copyWith(item, rest, to))
      : copyWith(item, [], to);
  }
  return out;
};

Deno.test("jsonDiff gives the iterative walk's answer for any two values", () => {
  fc.assert(
    fc.property(value, value, skip, (a, b, path) => {
      assert.deepEqual(jsonDiff(a, b, path), jsonDiffWalk(a, b, path));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("jsonDiff finds no change in a copy that differs only at the skipped path", () => {
  fc.assert(
    fc.property(either, skip, value, (a, path, to) => {
      const b = copyWith(a, path, to);
      assert.deepEqual(jsonDiff(a, b, path), jsonDiffWalk(a, b, path));
      if (path.length > 0) assert.equal(jsonDiff(a, b, path), undefined);
    }),
    { numRuns: 1000 },
  );
});

const edits: ReadonlyArray<ReadonlyArray<string | number>> = [
  ["a"],
  ["a", 1],
  ["b", 0],
  ["message"],
  ["message", "b"],
  ["message", "content", 1],
  ["message", "content", 0, "a"],
  ["content", 0, "a"],
];

Deno.test("jsonDiff finds a change beside the skipped path as the walk does", () => {
  fc.assert(
    fc.property(
      either,
      skip,
      fc.constantFrom(...edits),
      value,
      (a, path, at, to) => {
        const b = copyWith(a, at, to);
        assert.deepEqual(jsonDiff(a, b, path), jsonDiffWalk(a, b, path));
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("jsonDiff walks values nested past the recursive walk's depth", () => {
  const nest = (depth: number, leaf: unknown): unknown => {
    let v: unknown = leaf;
    for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { a: v } : [v];
    return v;
  };
  for (const depth of [31, 32, 33, 200, 200_000]) {
    assert.equal(jsonDiff(nest(depth, 1), nest(depth, 1), []), undefined);
    const path = jsonDiff(nest(depth, 1), nest(depth, 2), []);
    assert.deepEqual(path, jsonDiffWalk(nest(depth, 1), nest(depth, 2), []));
    assert.equal(path?.length, depth);
  }
});
