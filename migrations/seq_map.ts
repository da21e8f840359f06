/**
 * The old→new seq map an edge keeps while it renumbers.
 *
 * Old seqs arrive dense from 0 (the edges check it), so the map is an append-only `Int32Array`
 * indexed by old seq that doubles when full: 4 bytes per event, no per-entry objects, so a
 * 1M-event log costs 4–8 MB of map whatever the events hold. Negative values are markers an edge
 * defines (v1→v2 marks consumed chunks). Old seqs above 2^31 − 1 are out of range for the table;
 * no released log comes near that.
 *
 * This is the one mutable structure of the chain: copying a map per event would be quadratic.
 *
 * @module
 */

/** A growable old→new seq table. Mutated in place by {@link pushSeq}. */
export interface SeqMap {
  /** Backing table; only the first `size` entries are meaningful. */
  table: Int32Array;
  /** How many old seqs are mapped (the next old seq to map). */
  size: number;
}

/**
 * A new, empty map.
 *
 * @returns An empty map.
 *
 * @example Mapping two seqs
 * ```ts
 * import { getSeq, makeSeqMap, pushSeq } from "./seq_map.ts";
 * import assert from "node:assert/strict";
 *
 * const map = makeSeqMap();
 * pushSeq(map, 0);
 * pushSeq(map, 2);
 * assert.equal(getSeq(map, 1), 2);
 * assert.equal(getSeq(map, 2), undefined);
 * ```
 */
export function makeSeqMap(): SeqMap {
  return { table: new Int32Array(1024), size: 0 };
}

/**
 * Map the next old seq (`map.size`) to `value`.
 *
 * @param map The map, mutated.
 * @param value The new seq, or a negative marker.
 * @returns Nothing.
 */
export function pushSeq(map: SeqMap, value: number): void {
  if (map.size === map.table.length) {
    const grown = new Int32Array(map.table.length * 2);
    grown.set(map.table);
    map.table = grown;
  }
  map.table[map.size] = value;
  map.size += 1;
}

/**
 * Change the value of an already mapped old seq (to a marker, say).
 *
 * @param map The map, mutated.
 * @param old An old seq below `map.size`.
 * @param value The new value.
 * @returns Nothing.
 *
 * @example Marking a seq
 * ```ts
 * import { getSeq, makeSeqMap, pushSeq, setSeq } from "./seq_map.ts";
 * import assert from "node:assert/strict";
 *
 * const map = makeSeqMap();
 * pushSeq(map, 0);
 * setSeq(map, 0, -1);
 * assert.equal(getSeq(map, 0), -1);
 * ```
 */
export function setSeq(map: SeqMap, old: number, value: number): void {
  if (old < map.size) map.table[old] = value;
}

/**
 * The value mapped to an old seq, `undefined` when that seq is not mapped yet.
 *
 * @param map The map.
 * @param old The old seq.
 * @returns The new seq or marker.
 */
export function getSeq(map: SeqMap, old: number): number | undefined {
  return old < map.size ? map.table[old] : undefined;
}
