/**
 * Given / when / then for the fold, in the style of Emmett's decider
 * specification: `given([...lines]).when(line).then([...nodes])` or
 * `.thenFails("Tag", { field: value })`.
 *
 * Every failure case also checks that the rejected event left the input
 * surface unchanged and usable: same nodes, same counters, and a valid
 * append still folds onto it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Result } from "effect";
import {
  deriveMessages,
  emptySurface,
  type Surface,
  type SurfaceError,
} from "@palimpsest/session";
import type { DecodeOptions } from "@palimpsest/session/schema";
import { applyEventResult, surfaceNodes } from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { decoded, type Raw, turnStart } from "./build.ts";

/** What a `when` leads to. */
export interface Then {
  /** Expects the event to fold and the surface to hold these nodes. */
  readonly then: (nodes: ReadonlyArray<number>) => Surface;
  /** Expects the fold to fail with `tag` and these fields. */
  readonly thenFails: (
    tag: SurfaceError["_tag"],
    fields?: Readonly<Record<string, unknown>>,
  ) => SurfaceError;
}

/** A history to fold before the event under test. */
export interface Given {
  /** The event under test. */
  readonly when: (event: Raw) => Then;
}

interface Snapshot {
  readonly nodes: ReadonlyArray<number>;
  readonly nextSeq: number;
  readonly length: number;
  readonly replacements: number;
  readonly messages: string;
}

const snapshot = (surface: Surface): Snapshot => ({
  nodes: surfaceNodes(surface),
  nextSeq: surface.nextSeq,
  length: surface.length,
  replacements: surface.replacements,
  messages: JSON.stringify(deriveMessages(surface)),
});

/** Folds `lines` from `from` (the empty surface by default). */
export const fold = (
  lines: ReadonlyArray<Raw>,
  from: Surface = emptySurface,
  options?: DecodeOptions,
): Surface => {
  const result = replayResult(lines.map((l) => decoded(l, options)), from);
  if (Result.isFailure(result)) {
    throw new Error(
      `Expected the given events to fold but got ${result.failure.error._tag}`,
    );
  }
  return result.success;
};

/**
 * Starts a specification from the events already folded.
 *
 * @param history Lines folded first, in order.
 * @param from The surface they fold onto.
 * @param options The vocabulary to decode with.
 */
export const given = (
  history: ReadonlyArray<Raw>,
  from: Surface = emptySurface,
  options?: DecodeOptions,
): Given => ({
  when: (event) => {
    const before = fold(history, from, options);
    const expected = snapshot(before);
    const result = applyEventResult(before, decoded(event, options));
    return {
      then: (nodes) => {
        if (Result.isFailure(result)) {
          assert.fail(
            `Expected the event to fold but got ${result.failure._tag}`,
          );
        }
        assert.deepEqual(surfaceNodes(result.success), nodes);
        assert.equal(result.success.nextSeq, before.nextSeq + 1);
        // The surface the event was applied to is still what it was.
        assert.deepEqual(snapshot(before), expected);
        return result.success;
      },
      thenFails: (tag, fields) => {
        if (Result.isSuccess(result)) {
          assert.fail(
            `Expected ${tag} but the event folded to ${
              JSON.stringify(surfaceNodes(result.success))
            }`,
          );
        }
        const error = result.failure;
        assert.equal(error._tag, tag);
        for (const [key, value] of Object.entries(fields ?? {})) {
          assert.deepEqual(Reflect.get(error, key), value, `field ${key}`);
        }
        assert.deepEqual(snapshot(before), expected);
        // Still usable: a valid log-only event folds onto it.
        const next = applyEventResult(
          before,
          decoded(turnStart(before.nextSeq)),
        );
        assert.equal(Result.isSuccess(next), true);
        assert.deepEqual(snapshot(before), expected);
        return error;
      },
    };
  },
});
