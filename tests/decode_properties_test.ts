import assert from "node:assert/strict";
import fc from "fast-check";
import { Result } from "effect";
import { emptySurface } from "@palimpsest/session";
import {
  applyEventResult,
  emptySurfaceAt,
  replayResult,
} from "@palimpsest/session/internal";
import { decodeEventResult } from "@palimpsest/session/schema";
import { decoded, s } from "./_helpers/build.ts";
import { logArb } from "./_helpers/log_gen.ts";
import { DECODE_TAGS, FOLD_TAGS } from "./_helpers/fuzz_compare.ts";

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u);

const REMOVE = Symbol("remove");

/** Copies `value` with the node at a random path replaced or removed. */
const mutate = (
  value: unknown,
  path: ReadonlyArray<number>,
  replacement: unknown,
): unknown => {
  const [step, ...rest] = path;
  if (Array.isArray(value) && value.length > 0 && step !== undefined) {
    const copy: unknown[] = [...value];
    const i = step % copy.length;
    if (rest.length === 0 && replacement === REMOVE) copy.splice(i, 1);
    else copy[i] = mutate(copy[i], rest, replacement);
    return copy;
  }
  if (isRecord(value) && step !== undefined) {
    const keys = Object.keys(value);
    const key = keys[step % Math.max(keys.length, 1)];
    if (key === undefined) {
      return replacement === REMOVE ? value : { x: replacement };
    }
    const copy: Record<string, unknown> = { ...value };
    if (rest.length === 0 && replacement === REMOVE) delete copy[key];
    else copy[key] = mutate(copy[key], rest, replacement);
    return copy;
  }
  return replacement === REMOVE ? null : replacement;
};

Deno.test("decoding arbitrary JSON never throws and fails only with a rule's tag", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const result = decodeEventResult(value);
      if (Result.isFailure(result)) {
        assert.equal(DECODE_TAGS.includes(result.failure._tag), true);
      }
    }),
    { seed: 7, numRuns: 300 },
  );
});

Deno.test("mutated valid lines decode or fail with a tag, and fold or fail with a tag", () => {
  const replacement = fc.oneof(
    fc.constant(REMOVE),
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(-0, NaN, 1.5, 2 ** 53, -1, 0, 1, "", [], {}, null, true),
  );
  fc.assert(
    fc.property(
      logArb(30),
      fc.nat(),
      fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
      replacement,
      (log, at, path, value) => {
        if (log.lines.length === 0) return;
        const index = at % log.lines.length;
        const before = log.lines.slice(0, index).map((l) => decoded(l));
        const from = log.base === 0
          ? emptySurface
          : emptySurfaceAt(s(log.base));
        const folded = replayResult(before, from);
        if (Result.isFailure(folded)) assert.fail(folded.failure.error._tag);
        const input = mutate(log.lines[index], path, value);
        // Decoded as is: -0, NaN and 2^53 survive (a JSON round trip would
        // turn them into 0 and null).
        const result = decodeEventResult(input);
        if (Result.isFailure(result)) {
          assert.equal(DECODE_TAGS.includes(result.failure._tag), true);
          return;
        }
        const applied = applyEventResult(folded.success, result.success);
        if (Result.isFailure(applied)) {
          assert.equal(FOLD_TAGS.includes(applied.failure._tag), true);
        }
      },
    ),
    { seed: 11, numRuns: 400 },
  );
});
