/**
 * Plain JSON values as the migration edges see them, and the small guards the frozen decoders
 * share.
 *
 * Edges work on parsed JSON values, never on decoded v3 events: an old log is data of an old
 * version, and only the end of the chain is handed to the current decoder. This module owns no
 * format rule of any version; the frozen decoders own those.
 *
 * @module
 */

/** A JSON value (what `JSON.parse` returns). */
export type Json =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<Json>
  | JsonObject;

/** A JSON object. */
export interface JsonObject {
  /** Any key holds a JSON value. */
  readonly [key: string]: Json;
}

/**
 * Whether a value is a plain JSON object (not `null`, not an array).
 *
 * @param value Any value.
 * @returns `true` when `value` is a non-null, non-array object.
 *
 * @example Telling objects from arrays
 * ```ts
 * import { isJsonObject } from "./json.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isJsonObject({ a: 1 }), true);
 * assert.equal(isJsonObject([1]), false);
 * assert.equal(isJsonObject(null), false);
 * ```
 */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Whether a value is a seq as every released version spells it: a non-negative safe integer that
 * is not `-0`.
 *
 * @param value Any value.
 * @returns `true` for a valid seq.
 *
 * @example Checking seqs
 * ```ts
 * import { isSeq } from "./json.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isSeq(3), true);
 * assert.equal(isSeq(-0), false);
 * assert.equal(isSeq(1.5), false);
 * ```
 */
export function isSeq(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) &&
    value >= 0 &&
    !Object.is(value, -0);
}

/**
 * Whether a value is a safe integer (a `time`, say).
 *
 * @param value Any value.
 * @returns `true` for a safe integer.
 *
 * @example Checking times
 * ```ts
 * import { isSafeInt } from "./json.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isSafeInt(1700000000000), true);
 * assert.equal(isSafeInt(Number.NaN), false);
 * ```
 */
export function isSafeInt(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}
