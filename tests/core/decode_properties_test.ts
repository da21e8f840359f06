import assert from "node:assert/strict";
import fc from "fast-check";
import { Result } from "effect";
import { emptySurface } from "@palimpsest/session";
import { applyEventResult, emptySurfaceAt } from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { decodeEventResult, isOpaqueEvent } from "@palimpsest/session/schema";
import { decodeDraftResult, ENVELOPE_KEYS } from "../../src/core/decode.ts";
import { decoded, s } from "../_helpers/build.ts";
import { logArb } from "../_helpers/log_gen.ts";
import { DECODE_TAGS, FOLD_TAGS } from "../_helpers/fuzz_compare.ts";

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

/** A value a mutation puts in place of a field, or its removal. */
const replacement = fc.oneof(
  fc.constant(REMOVE),
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(-0, NaN, 1.5, 2 ** 53, -1, 0, 1, "", [], {}, null, true),
);

/**
 * A generated log, a line of it (`at` modulo its length) and a mutation of
 * that line: the path to a field and what goes there.
 */
const mutationArb = fc.tuple(
  logArb(30),
  fc.nat(),
  fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
  replacement,
);

Deno.test("mutated valid lines decode or fail with a tag, and fold or fail with a tag", () => {
  fc.assert(
    fc.property(
      mutationArb,
      ([log, at, path, value]) => {
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

/** The envelope keys in the order a draft's event is assembled in. */
const CANONICAL: ReadonlyArray<string> = [...ENVELOPE_KEYS];

Deno.test("an appended draft is judged as its line is, and becomes the event", () => {
  let accepted = 0;
  let refused = 0;
  fc.assert(
    fc.property(
      mutationArb,
      fc.boolean(),
      fc.option(fc.tuple(fc.constantFrom(...CANONICAL), replacement)),
      ([log, at, path, value], mutated, field) => {
        if (log.lines.length === 0) return;
        const original = log.lines[at % log.lines.length];
        let input = mutated ? mutate(original, path, value) : original;
        // Now and then one envelope field set or removed outright.
        if (field !== null && isRecord(input)) {
          const [key, to] = field;
          const edited: Record<string, unknown> = { ...input };
          if (to === REMOVE) delete edited[key];
          else edited[key] = to;
          input = edited;
        }
        // A draft's event has envelope keys only (others are never copied
        // from a draft), in the canonical order.
        if (!isRecord(input)) return;
        if (Object.keys(input).some((key) => !ENVELOPE_KEYS.has(key))) return;
        const assembled: Record<string, unknown> = {};
        for (const key of CANONICAL) {
          if (key in input) assembled[key] = input[key];
        }
        const line = decodeEventResult(input);
        const draft = decodeDraftResult(assembled);
        if (Result.isFailure(line)) {
          refused++;
          assert.ok(Result.isFailure(draft), "the draft was accepted");
          assert.deepStrictEqual(draft.failure, line.failure);
          return;
        }
        accepted++;
        assert.ok(Result.isSuccess(draft), "the draft was refused");
        assert.deepStrictEqual(draft.success, line.success);
        assert.equal(draft.success, assembled);
        // Both are laid out in the canonical key order (an opaque event is
        // the line's own object, in the line's order).
        if (!isOpaqueEvent(line.success)) {
          const keys = Object.keys(line.success);
          assert.deepEqual(keys, CANONICAL.filter((key) => keys.includes(key)));
        }
      },
    ),
    { seed: 23, numRuns: 600 },
  );
  assert.ok(accepted > 50 && refused > 50, `${accepted} / ${refused}`);
});
