/**
 * The JSONL line codec: the header line, event lines in canonical key order,
 * and the on-disk `[start, end]` form of source runs.
 *
 * A file is a header line then one event per line, `\n` after every line.
 * On disk only, `sourceEventSeqs` may hold a run of 3 or more consecutive
 * seqs as a `[start, end]` pair; the writer compresses runs of a strictly
 * increasing list, and the reader expands and validates pairs before the
 * event is decoded. Opaque events (ignorable, of unknown types) are written
 * back exactly as they were read: the codec keeps each one's line text.
 *
 * This module owns lines, not files: reading a file is `reader.ts`, writing
 * one is `store.ts`.
 *
 * @module
 */
import * as Result from "effect/Result";
import { isSessionSeq, type SessionSeq } from "../core/seq.ts";
import {
  FORMAT_VERSION,
  isSurfaceType,
  type SessionEvent,
} from "../core/event.ts";
import {
  decodeEventResult,
  isOpaqueEvent,
  type Vocabulary,
} from "../core/decode.ts";
import { encodeEvent, type EncodeOptions } from "../core/encode.ts";
import type { EventDecodeError } from "../core/errors.ts";
import type { SessionHeader } from "../session/session.ts";
import {
  InvalidHeader,
  InvalidJson,
  InvalidSourceRange,
  type LineError,
} from "./errors.ts";
import { isObject, stringifyJson } from "../core/json.ts";

// ---------------------------------------------------------------------------
// Header

/** A header line whose `type` and `version` were read; the rest is raw. */
export interface HeaderLine {
  /** The format version. */
  readonly version: number;
  /** The parsed line, as read. */
  readonly raw: { readonly [key: string]: unknown };
}

/**
 * The keys a header line may have: `type`, `version`, `id`, `createdAt`,
 * `isSeeded`, `parentSession` and `meta`. Every released format version has
 * the same set, so the migrations' header check uses this one.
 */
export const HEADER_KEYS: ReadonlySet<string> = new Set([
  "type",
  "version",
  "id",
  "createdAt",
  "isSeeded",
  "parentSession",
  "meta",
]);

/**
 * Reads the `type` and `version` of a parsed header line, without judging
 * the rest (older versions have other fields).
 *
 * @param value A parsed JSON value.
 * @returns The version and the raw header, or `InvalidHeader`.
 *
 * @example Reading a header's version
 * ```ts
 * import { decodeHeaderLine } from "@palimpsest/session/jsonl";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const line = Result.getOrThrow(decodeHeaderLine({ type: "session", version: 2, id: "a" }));
 * assert.equal(line.version, 2);
 * ```
 */
export function decodeHeaderLine(
  value: unknown,
): Result.Result<HeaderLine, InvalidHeader> {
  if (!isObject(value)) {
    return Result.fail(
      new InvalidHeader({ problem: "not-an-object", key: undefined, value }),
    );
  }
  if (value.type !== "session") {
    return Result.fail(
      new InvalidHeader({
        problem: "not-a-session",
        key: "type",
        value: value.type,
      }),
    );
  }
  const version = value.version;
  if (
    typeof version !== "number" || !Number.isSafeInteger(version) ||
    version < 0
  ) {
    return Result.fail(
      new InvalidHeader({
        problem: "invalid-version",
        key: "version",
        value: version,
      }),
    );
  }
  return Result.succeed({ version, raw: value });
}

const invalidField = (key: string, value: unknown): Result.Result<
  SessionHeader,
  InvalidHeader
> => Result.fail(new InvalidHeader({ problem: "invalid-field", key, value }));

/**
 * Decodes the fields of a current-version header: `id`, `createdAt`,
 * `isSeeded`, optional `parentSession` and `meta`; any other key is refused.
 *
 * @param raw The raw header of a {@link HeaderLine}.
 * @returns The session header, or `InvalidHeader`.
 *
 * @example A v3 header
 * ```ts
 * import { decodeSessionHeader } from "@palimpsest/session/jsonl";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const raw = { type: "session", version: 3, id: "a", createdAt: 0, isSeeded: false };
 * assert.equal(Result.getOrThrow(decodeSessionHeader(raw)).id, "a");
 * ```
 */
export function decodeSessionHeader(
  raw: { readonly [key: string]: unknown },
): Result.Result<SessionHeader, InvalidHeader> {
  for (const key of Object.keys(raw)) {
    if (!HEADER_KEYS.has(key)) {
      return Result.fail(
        new InvalidHeader({ problem: "unknown-key", key, value: raw[key] }),
      );
    }
  }
  const { id, createdAt, isSeeded, parentSession, meta } = raw;
  if (typeof id !== "string" || id.length === 0) return invalidField("id", id);
  if (typeof createdAt !== "number" || !Number.isSafeInteger(createdAt)) {
    return invalidField("createdAt", createdAt);
  }
  if (typeof isSeeded !== "boolean") return invalidField("isSeeded", isSeeded);
  const header: {
    id: string;
    createdAt: number;
    isSeeded: boolean;
    parentSession?: string;
    meta?: { readonly [key: string]: unknown };
  } = { id, createdAt, isSeeded };
  if ("parentSession" in raw) {
    if (typeof parentSession !== "string" || parentSession.length === 0) {
      return invalidField("parentSession", parentSession);
    }
    header.parentSession = parentSession;
  }
  if ("meta" in raw) {
    if (!isObject(meta)) return invalidField("meta", meta);
    header.meta = meta;
  }
  return Result.succeed(header);
}

/**
 * Encodes a header as line 1 of a current-version file, `\n` included.
 *
 * @param header The session header.
 * @returns The header line.
 *
 * @example The header line
 * ```ts
 * import { encodeHeaderLine } from "@palimpsest/session/jsonl";
 * import assert from "node:assert/strict";
 *
 * assert.equal(
 *   encodeHeaderLine({ id: "a", createdAt: 5, isSeeded: false }),
 *   '{"type":"session","version":3,"id":"a","createdAt":5,"isSeeded":false}\n',
 * );
 * ```
 */
export function encodeHeaderLine(header: SessionHeader): string {
  const out: Record<string, unknown> = {
    type: "session",
    version: FORMAT_VERSION,
    id: header.id,
    createdAt: header.createdAt,
    isSeeded: header.isSeeded,
  };
  if (header.parentSession !== undefined) {
    out.parentSession = header.parentSession;
  }
  if (header.meta !== undefined) out.meta = header.meta;
  return `${stringifyJson(out)}\n`;
}

// ---------------------------------------------------------------------------
// Source runs

/** A stored source: a seq, or an inclusive `[start, end]` run. */
export type StoredSource = number | readonly [number, number];

/**
 * Compresses a strictly increasing source list for disk: each run of 3 or
 * more consecutive seqs becomes `[start, end]`. A list that is not strictly
 * increasing is returned as it is.
 *
 * @param seqs The sources.
 * @returns The stored form.
 *
 * @example Compressing a compaction's sources
 * ```ts
 * import { SessionSeq } from "@palimpsest/session";
 * import { compressSourceSeqs } from "@palimpsest/session/jsonl";
 * import assert from "node:assert/strict";
 *
 * const seqs = [1, 2, 4, 5, 6, 7, 9].map((n) => SessionSeq.make(n));
 * assert.deepEqual(compressSourceSeqs(seqs), [1, 2, [4, 7], 9]);
 * ```
 */
export function compressSourceSeqs(
  seqs: ReadonlyArray<SessionSeq>,
): ReadonlyArray<StoredSource> {
  const length = seqs.length;
  if (length < 3) return seqs;
  for (let i = 1; i < length; i++) {
    if ((seqs[i] ?? 0) <= (seqs[i - 1] ?? 0)) return seqs;
  }
  const out: StoredSource[] = [];
  let i = 0;
  while (i < length) {
    const start = seqs[i] ?? 0;
    let j = i;
    while (j + 1 < length && seqs[j + 1] === (seqs[j] ?? 0) + 1) j++;
    if (j - i >= 2) {
      out.push([start, seqs[j] ?? start]);
    } else {
      for (let k = i; k <= j; k++) out.push(seqs[k] ?? 0);
    }
    i = j + 1;
  }
  return out;
}

/**
 * Expands the `[start, end]` runs of a stored source list and validates
 * them: both ends seqs, `start <= end`, the whole list strictly increasing,
 * every source before the event's seq. A list without runs is returned as
 * it is, for the decoder to judge, and so is a list whose event has no
 * readable seq (the decoder refuses the seq first).
 *
 * Nothing is allocated before the whole list is judged: the runs are
 * checked and counted first, so a run can never expand past the event's own
 * seq, nor past `maxSeqs`.
 *
 * @param stored The stored `sourceEventSeqs` value.
 * @param seq The event's seq, when readable.
 * @param maxSeqs The most seqs the runs may expand to (the reader passes
 * how many events come before the line); unbounded but for `seq` by default.
 * @returns The expanded list, or `InvalidSourceRange`.
 *
 * @example Expanding a run
 * ```ts
 * import { expandSourceSeqs } from "@palimpsest/session/jsonl";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(Result.getOrThrow(expandSourceSeqs([1, [3, 5]], 9)), [1, 3, 4, 5]);
 * const bad = expandSourceSeqs([[5, 3]], 9);
 * assert.equal(Result.isFailure(bad) && bad.failure.problem, "inverted");
 * const long = expandSourceSeqs([[0, 8]], 9, 4);
 * assert.equal(Result.isFailure(long) && long.failure.problem, "too-many");
 * ```
 */
export function expandSourceSeqs(
  stored: unknown,
  seq: number | undefined,
  maxSeqs: number = Number.POSITIVE_INFINITY,
): Result.Result<unknown, InvalidSourceRange> {
  if (!Array.isArray(stored) || seq === undefined) {
    return Result.succeed(stored);
  }
  let hasRun = false;
  for (const element of stored) {
    if (Array.isArray(element)) {
      hasRun = true;
      break;
    }
  }
  if (!hasRun) return Result.succeed(stored);
  const fail = (
    index: number,
    value: unknown,
    problem: InvalidSourceRange["problem"],
  ) => Result.fail(new InvalidSourceRange({ seq, index, value, problem }));
  // Judge and count first: the expansion's size comes from the input.
  let previous = -1;
  let expanded = 0;
  for (let index = 0; index < stored.length; index++) {
    const element: unknown = stored[index];
    if (!Array.isArray(element)) {
      if (typeof element === "number") {
        if (element <= previous) return fail(index, element, "not-increasing");
        previous = element;
      }
      continue;
    }
    if (element.length !== 2) return fail(index, element, "not-a-pair");
    const [start, end]: unknown[] = element;
    if (!isSessionSeq(start) || !isSessionSeq(end)) {
      return fail(index, element, "not-a-seq");
    }
    if (start > end) return fail(index, element, "inverted");
    if (start <= previous) return fail(index, element, "not-increasing");
    if (end >= seq) return fail(index, element, "not-earlier");
    expanded += end - start + 1;
    if (expanded > maxSeqs) return fail(index, element, "too-many");
    previous = end;
  }
  const out: unknown[] = [];
  for (const element of stored) {
    if (!Array.isArray(element)) {
      out.push(element);
      continue;
    }
    const [start, end]: number[] = element;
    if (start === undefined || end === undefined) continue;
    for (let s = start; s <= end; s++) out.push(s);
  }
  return Result.succeed(out);
}

// ---------------------------------------------------------------------------
// Event lines

/** The line text of each opaque event read from disk, written back as is. */
const opaqueLines = new WeakMap<SessionEvent, string>();

/** Options of the event line codec. */
export interface LineCodecOptions {
  /** Extra log-only types to decode and encode. */
  readonly vocabulary?: Vocabulary;
  /**
   * The most seqs the line's `[start, end]` runs may expand to; bounded only
   * by the event's seq by default. The reader passes how many events come
   * before the line, less what earlier runs already expanded to beyond the
   * log's budget.
   */
  readonly maxRunSeqs?: number;
}

/**
 * Decodes a parsed event line: expands stored source runs, then checks the
 * event-local rules with {@link decodeEventResult}.
 *
 * @param value A parsed JSON value.
 * @param options The vocabulary.
 * @returns The event, or the first rule it breaks.
 *
 * @example A stored run
 * ```ts
 * import { decodeEventValue } from "@palimpsest/session/jsonl";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const message = { id: "s", role: "user", content: [], source: { kind: "user" } };
 * const event = Result.getOrThrow(decodeEventValue({
 *   type: "user/message", seq: 4, time: 0, data: message,
 *   surfaceOp: { op: "replace", startSeq: 0, endSeq: 3 }, sourceEventSeqs: [[0, 3]],
 * }));
 * assert.deepEqual(event.sourceEventSeqs, [0, 1, 2, 3]);
 * ```
 */
export function decodeEventValue(
  value: unknown,
  options?: LineCodecOptions,
): Result.Result<SessionEvent, InvalidSourceRange | EventDecodeError> {
  let input = value;
  if (
    isObject(value) && value.sourceEventSeqs !== undefined &&
    typeof value.type === "string" && isSurfaceType(value.type)
  ) {
    const seq = isSessionSeq(value.seq) ? value.seq : undefined;
    const expanded = expandSourceSeqs(
      value.sourceEventSeqs,
      seq,
      options?.maxRunSeqs,
    );
    if (Result.isFailure(expanded)) return Result.fail(expanded.failure);
    if (expanded.success !== value.sourceEventSeqs) {
      input = { ...value, sourceEventSeqs: expanded.success };
    }
  }
  return decodeEventResult(input, options);
}

/**
 * Parses and decodes one event line (without its `\n`). An opaque event
 * remembers the line, so {@link encodeEventLine} writes it back byte for
 * byte.
 *
 * @param text The line text.
 * @param options The vocabulary.
 * @returns The event, or the line's error (`InvalidJson`, a source-range or
 * a decode error).
 *
 * @example Opaque lines round-trip
 * ```ts
 * import { decodeEventLine, encodeEventLine } from "@palimpsest/session/jsonl";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const line = '{"seq":0,"type":"x/y","time":0,"ignorable":true,"data":{"b":1,"a":2}}';
 * const event = Result.getOrThrow(decodeEventLine(line));
 * assert.equal(encodeEventLine(event), `${line}\n`);
 * ```
 */
export function decodeEventLine(
  text: string,
  options?: LineCodecOptions,
): Result.Result<SessionEvent, LineError> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return Result.fail(new InvalidJson({ problem: String(error) }));
  }
  const decoded = decodeEventValue(value, options);
  if (Result.isSuccess(decoded) && isOpaqueEvent(decoded.success)) {
    opaqueLines.set(decoded.success, text);
  }
  return decoded;
}

/**
 * Remembers the line an opaque event was read from.
 * @internal
 */
export function rememberOpaqueLine(event: SessionEvent, text: string): void {
  opaqueLines.set(event, text);
}

/**
 * Encodes one event as its line, `\n` included: canonical key order, source
 * runs compressed; an opaque event read from disk comes back as read.
 *
 * @param event A decoded event.
 * @param options The vocabulary whose schemas encode extra types' data.
 * @returns The line.
 *
 * @example An event line
 * ```ts
 * import { encodeEventLine } from "@palimpsest/session/jsonl";
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = Result.getOrThrow(decodeEventResult({ type: "turn/start", seq: 0, time: 1, data: { turn: 0 } }));
 * assert.equal(encodeEventLine(event), '{"type":"turn/start","seq":0,"time":1,"data":{"turn":0}}\n');
 * ```
 */
export function encodeEventLine(
  event: SessionEvent,
  options?: EncodeOptions,
): string {
  const kept = opaqueLines.get(event);
  if (kept !== undefined) return `${kept}\n`;
  const encoded = encodeEvent(event, options);
  if (
    !isOpaqueEvent(event) && isObject(encoded) &&
    Array.isArray(event.sourceEventSeqs) && event.sourceEventSeqs.length >= 3
  ) {
    encoded.sourceEventSeqs = compressSourceSeqs(event.sourceEventSeqs);
  }
  return `${stringifyJson(encoded)}\n`;
}
