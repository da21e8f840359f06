/**
 * What an edge vN → vN+1 is, and the helpers the three edges share.
 *
 * An edge is started once per log (it may keep state: an open step, a seq map, pending chunks)
 * and then fed the old log's event lines one by one; each push returns the events of the next
 * version it can emit so far, tagged with the line they came from. It never holds the whole log.
 * Each edge decodes its input with its source version's frozen decoder, so an edge's output is
 * checked again by the next edge's decoder (and, at the end of the chain, by the v3 rules).
 *
 * @module
 */
import * as Result from "effect/Result";
import type { MigrationError } from "./errors.ts";
import { InvalidLegacyEventData, LegacySeqNotDense } from "./errors.ts";
import type { SessionHeaderJson } from "./header.ts";
import { isJsonObject, type Json, type JsonObject } from "./json.ts";
import type { LegacyEvent, LegacyLineDecoder } from "./legacy.ts";
import { getSeq, type SeqMap } from "./seq_map.ts";

/** One event emitted by an edge: its JSON object and the 1-based line of the old file it came from. */
export interface EdgeOutput {
  /** The 1-based line of the old file the event came from. */
  readonly line: number;
  /** The event, as a JSON object of the edge's target version. */
  readonly event: JsonObject;
}

/** The events an edge emits for one push, or why it refuses. */
export type EdgeResult = Result.Result<
  ReadonlyArray<EdgeOutput>,
  MigrationError
>;

/** One running edge over one log. `push` and `end` advance its internal state. */
export interface EdgeRun {
  /** Feed the next event line (a parsed JSON value of the source version). */
  readonly push: (input: unknown, line: number) => EdgeResult;
  /** The log ended: emit whatever is still pending. */
  readonly end: () => EdgeResult;
}

/** An edge vN → vN+1 of the catalog. */
export interface MigrationEdge {
  /** The version it reads. */
  readonly from: number;
  /** The version it writes (`from + 1`). */
  readonly to: number;
  /** Start a run over one log; the header gives the session id. */
  readonly start: (header: SessionHeaderJson) => EdgeRun;
}

/**
 * Decode an edge's input line with its source version's frozen decoder, and check that the event
 * is the next of a log dense from 0.
 *
 * @param decode The frozen decoder of the edge's source version.
 * @param version That version.
 * @param input The parsed JSON line.
 * @param line Its line.
 * @param expected The seq its position requires.
 * @returns The event, or the decoder's refusal, or `LegacySeqNotDense`.
 *
 * @example Decoding the next line
 * ```ts
 * import { decodeDense } from "./edge.ts";
 * import { decodeV1Event } from "./v1.ts";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const input = { type: "turn/start", seq: 2, time: 0, data: { turn: 0 } };
 * assert.equal(Result.isSuccess(decodeDense(decodeV1Event, 1, input, 4, 2)), true);
 * const gap = decodeDense(decodeV1Event, 1, input, 4, 1);
 * assert.equal(Result.isFailure(gap) && gap.failure._tag, "LegacySeqNotDense");
 * ```
 */
export function decodeDense(
  decode: LegacyLineDecoder,
  version: number,
  input: unknown,
  line: number,
  expected: number,
): Result.Result<LegacyEvent, MigrationError> {
  const decoded = decode(input, line);
  if (Result.isFailure(decoded)) return decoded;
  const actual = decoded.success.seq;
  return actual === expected
    ? decoded
    : Result.fail(new LegacySeqNotDense({ line, version, expected, actual }));
}

/**
 * Rewrite the `shadowedSeqs` of a compaction event through a seq map.
 *
 * @param event The event (its data has a `shadowedSeqs` array of seqs).
 * @param map The old→new map.
 * @param line Its line.
 * @param version The version of the edge input.
 * @param onMarker Called for a negative mapped value; returns the refusal.
 * @returns The new data, or the refusal.
 *
 * @example Remapping
 * ```ts
 * import { remapShadowed } from "./edge.ts";
 * import { ConsumedChunkReference } from "@palimpsest/session/migrations";
 * import { makeSeqMap, pushSeq } from "./seq_map.ts";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const map = makeSeqMap();
 * pushSeq(map, 0);
 * pushSeq(map, 5);
 * const event = { type: "compaction/prune", seq: 2, time: 0, data: { shadowedSeqs: [1] } };
 * const data = remapShadowed(event, map, 4, 1, (old) => new ConsumedChunkReference({ line: 4, seq: 2, chunkSeq: old, via: "shadowedSeqs" }));
 * assert.deepEqual(Result.getOrThrow(data), { shadowedSeqs: [5] });
 * ```
 */
export function remapShadowed(
  event: LegacyEvent,
  map: SeqMap,
  line: number,
  version: number,
  onMarker: (old: number) => MigrationError,
): Result.Result<Json, MigrationError> {
  const data = event.data;
  if (!isJsonObject(data)) return Result.succeed(data);
  const list = data["shadowedSeqs"];
  if (!Array.isArray(list)) return Result.succeed(data);
  const out: Array<number> = [];
  for (let i = 0; i < list.length; i++) {
    const old = list[i];
    const mapped = typeof old === "number" && old < event.seq
      ? getSeq(map, old)
      : undefined;
    if (mapped === undefined) {
      return Result.fail(
        new InvalidLegacyEventData({
          line,
          seq: event.seq,
          version,
          type: event.type,
          path: `shadowedSeqs.${i}`,
          issue: "expected a seq earlier than the event",
        }),
      );
    }
    if (mapped < 0) {
      return Result.fail(onMarker(typeof old === "number" ? old : -1));
    }
    out.push(mapped);
  }
  return Result.succeed({ ...data, shadowedSeqs: out });
}

/**
 * Rewrite a list of seqs through a seq map (every seq is earlier than the event, so mapped).
 *
 * @param list Old seqs.
 * @param map The old→new map.
 * @returns The new seqs, or the first old seq whose mapped value is a negative marker.
 *
 * @example Remapping
 * ```ts
 * import { remapList } from "./edge.ts";
 * import { makeSeqMap, pushSeq } from "./seq_map.ts";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const map = makeSeqMap();
 * pushSeq(map, 3);
 * pushSeq(map, -1);
 * assert.deepEqual(Result.getOrThrow(remapList([0], map)), [3]);
 * assert.equal(Result.isFailure(remapList([0, 1], map)), true);
 * ```
 */
export function remapList(
  list: ReadonlyArray<number>,
  map: SeqMap,
): Result.Result<ReadonlyArray<number>, number> {
  const out: Array<number> = [];
  for (const old of list) {
    const mapped = getSeq(map, old) ?? -1;
    if (mapped < 0) return Result.fail(old);
    out.push(mapped);
  }
  return Result.succeed(out);
}

/**
 * A mapped seq, or the old seq itself as a failure when it maps to a negative marker.
 *
 * @param old An old seq earlier than the current event.
 * @param map The old→new map.
 * @returns The new seq.
 *
 * @example Remapping
 * ```ts
 * import { remapOne } from "./edge.ts";
 * import { makeSeqMap, pushSeq } from "./seq_map.ts";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const map = makeSeqMap();
 * pushSeq(map, 7);
 * assert.equal(Result.getOrThrow(remapOne(0, map)), 7);
 * ```
 */
export function remapOne(
  old: number,
  map: SeqMap,
): Result.Result<number, number> {
  const mapped = getSeq(map, old) ?? -1;
  return mapped < 0 ? Result.fail(old) : Result.succeed(mapped);
}
