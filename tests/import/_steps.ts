/**
 * What the importers' step tests share: a time for the lines, the types of the
 * events a state's builder holds, and the check that a step succeeded.
 *
 * @module
 */
import { Result } from "effect";
import assert from "node:assert/strict";
import type { Builder } from "../../src/import/builder.ts";

/** A timestamp the lines of a step test carry. */
export const T = "2026-01-01T00:00:01.000Z";

/** The types of the events the state's builder holds, in order. */
export const types = (
  s: { readonly b: Builder },
): ReadonlyArray<string> => s.b.events.map((e) => `${e.type}`);

/** Asserts that a step succeeded. */
export const succeeds = (step: Result.Result<unknown, unknown>): void => {
  assert.equal(Result.isSuccess(step), true);
};
