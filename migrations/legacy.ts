/**
 * The envelope shared by the released formats v0, v1 and v2, and the machinery their frozen
 * decoders are built from.
 *
 * Every released version spells an event line as `type, seq, time, data, ignorable?, surfaceOp?,
 * sourceEventSeqs?`, with replace objects `{op: "replace", start, end}`. What differs between
 * versions is the vocabulary (which types exist, which are surface types, and their data
 * schemas); each frozen decoder (`v0.ts`, `v1.ts`, `v2.ts`) declares its own and never changes
 * once released. This module owns the envelope checks only; it knows no event type.
 *
 * The checks are event-local. Density of seqs is checked by the edges, which see the sequence.
 *
 * @module
 */
import * as Result from "effect/Result";
import {
  InvalidLegacyEnvelope,
  InvalidLegacyEventData,
  InvalidLegacySourceList,
  type LegacyDecodeError,
  MalformedReplace,
  MissingSurfaceMarker,
  SurfaceMetadataOnLegacyLogOnly,
  UnknownLegacyEventType,
} from "./errors.ts";
import { ENVELOPE_KEYS } from "../src/core/decode.ts";
import { isJsonObject, isSafeInt, isSeq, type Json } from "./json.ts";

/** A v0–v2 replace: the inclusive range `start`..`end` of surface seqs. */
export type LegacyReplace = {
  readonly op: "replace";
  readonly start: number;
  readonly end: number;
};

/** Where a v0–v2 surface event goes on the surface. */
export type LegacySurfaceOp = "append" | LegacyReplace;

/** One event line of a released format (v0, v1 or v2) after its envelope was checked. */
export interface LegacyEvent {
  /** The event type. */
  readonly type: string;
  /** Its seq in the old log. */
  readonly seq: number;
  /** Epoch milliseconds. */
  readonly time: number;
  /** The data, exactly as read. */
  readonly data: Json;
  /** Present when the event may be skipped by readers that do not know its type. */
  readonly ignorable?: true;
  /** Where a surface event goes. */
  readonly surfaceOp?: LegacySurfaceOp;
  /** The earlier events it stands for. */
  readonly sourceEventSeqs?: ReadonlyArray<number>;
}

/** Where data failed its schema: a dotted path and what was expected there. */
export interface DataIssue {
  /** The dotted path of the value, from the event's `data`. */
  readonly path: string;
  /** What was expected there. */
  readonly issue: string;
}

/** A data schema: `undefined` when `value` matches, else the first issue. */
export type DataCheck = (value: Json, path: string) => DataIssue | undefined;

/** The frozen vocabulary of one released version. */
export interface LegacyVocabulary {
  /** The format version. */
  readonly version: number;
  /** The surface types: they require `surfaceOp` and may carry `sourceEventSeqs`. */
  readonly surface: ReadonlySet<string>;
  /** The data schema of every known type (surface and log-only). */
  readonly data: ReadonlyMap<string, DataCheck>;
  /** Surface types that may not carry `sourceEventSeqs`. */
  readonly noSources: ReadonlySet<string>;
}

const join = (path: string, key: string | number): string =>
  path === "" ? String(key) : `${path}.${key}`;

/**
 * A non-negative safe integer (`turn`, `step`).
 *
 * @param value The JSON value.
 * @param path Its dotted path in `data`.
 * @returns The issue, or `undefined`.
 *
 * @example Checking values
 * ```ts
 * import { nat } from "./legacy.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(nat(2, "turn"), undefined);
 * assert.equal(nat(-1, "turn")?.path, "turn");
 * ```
 */
export const nat: DataCheck = (value, path) =>
  isSeq(value) ? undefined : { path, issue: "expected a non-negative integer" };

/**
 * A safe integer (`time`).
 *
 * @param value The JSON value.
 * @param path Its dotted path in `data`.
 * @returns The issue, or `undefined`.
 *
 * @example Checking values
 * ```ts
 * import { int } from "./legacy.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(int(-5, "time"), undefined);
 * assert.equal(int(0.5, "time")?.path, "time");
 * ```
 */
export const int: DataCheck = (value, path) =>
  isSafeInt(value) ? undefined : { path, issue: "expected a safe integer" };

/**
 * Any string.
 *
 * @param value The JSON value.
 * @param path Its dotted path in `data`.
 * @returns The issue, or `undefined`.
 *
 * @example Checking values
 * ```ts
 * import { str } from "./legacy.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(str("", "name"), undefined);
 * assert.equal(str(1, "name")?.path, "name");
 * ```
 */
export const str: DataCheck = (value, path) =>
  typeof value === "string" ? undefined : { path, issue: "expected a string" };

/**
 * A non-empty string.
 *
 * @param value The JSON value.
 * @param path Its dotted path in `data`.
 * @returns The issue, or `undefined`.
 *
 * @example Checking values
 * ```ts
 * import { nonEmpty } from "./legacy.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(nonEmpty("a", "id"), undefined);
 * assert.equal(nonEmpty("", "id")?.path, "id");
 * ```
 */
export const nonEmpty: DataCheck = (value, path) =>
  typeof value === "string" && value.length > 0
    ? undefined
    : { path, issue: "expected a non-empty string" };

/**
 * Any JSON value.
 *
 * @returns Always `undefined`.
 *
 * @example Checking values
 * ```ts
 * import { anyJson } from "./legacy.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(anyJson(null, "chunk"), undefined);
 * ```
 */
export const anyJson: DataCheck = () => undefined;

/**
 * A key the version does not allow (use it among a struct's optional keys).
 *
 * @param _value The JSON value.
 * @param path Its dotted path in `data`.
 * @returns Always an issue.
 *
 * @example Checking values
 * ```ts
 * import { forbidden } from "./legacy.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(forbidden([], "stream")?.path, "stream");
 * ```
 */
export const forbidden: DataCheck = (_value, path) => ({
  path,
  issue: "is not allowed in this version",
});

/**
 * One of the given literal values.
 *
 * @param values The allowed values.
 * @returns The check.
 *
 * @example Checking values
 * ```ts
 * import { literal } from "./legacy.ts";
 * import assert from "node:assert/strict";
 *
 * const role = literal("user");
 * assert.equal(role("user", "role"), undefined);
 * assert.equal(role("system", "role")?.path, "role");
 * ```
 */
export function literal(...values: ReadonlyArray<Json>): DataCheck {
  return (value, path) =>
    values.includes(value) ? undefined : {
      path,
      issue: `expected one of ${
        values.map((v) => JSON.stringify(v)).join(", ")
      }`,
    };
}

/**
 * An array whose every element passes `item`.
 *
 * @param item The element check.
 * @param nonEmptyArray Whether an empty array is refused.
 * @returns The check.
 *
 * @example Checking values
 * ```ts
 * import { arrayOf, nat } from "./legacy.ts";
 * import assert from "node:assert/strict";
 *
 * const seqs = arrayOf(nat, true);
 * assert.equal(seqs([0, 1], "s"), undefined);
 * assert.equal(seqs([0, -1], "s")?.path, "s.1");
 * assert.equal(seqs([], "s")?.path, "s");
 * ```
 */
export function arrayOf(item: DataCheck, nonEmptyArray = false): DataCheck {
  return (value, path) => {
    if (!Array.isArray(value)) return { path, issue: "expected an array" };
    if (nonEmptyArray && value.length === 0) {
      return { path, issue: "expected a non-empty array" };
    }
    for (let i = 0; i < value.length; i++) {
      const issue = item(value[i] ?? null, join(path, i));
      if (issue !== undefined) return issue;
    }
    return undefined;
  };
}

/**
 * An object with the given required and optional keys (other keys are kept and not checked:
 * the v3 decoder has the last word on them).
 *
 * @param required Checks of the required keys.
 * @param optional Checks of the optional keys (absent is fine, `null` is not absent).
 * @returns The check.
 *
 * @example Checking values
 * ```ts
 * import { nat, str, struct } from "./legacy.ts";
 * import assert from "node:assert/strict";
 *
 * const check = struct({ turn: nat }, { note: str });
 * assert.equal(check({ turn: 0, extra: true }, ""), undefined);
 * assert.equal(check({ turn: 0, note: 1 }, "")?.path, "note");
 * assert.equal(check({}, "")?.issue, "is required");
 * ```
 */
export function struct(
  required: Readonly<Record<string, DataCheck>>,
  optional: Readonly<Record<string, DataCheck>> = {},
): DataCheck {
  const req = Object.entries(required);
  const opt = Object.entries(optional);
  return (value, path) => {
    if (!isJsonObject(value)) return { path, issue: "expected an object" };
    for (const [key, check] of req) {
      const field = value[key];
      if (field === undefined) {
        return { path: join(path, key), issue: "is required" };
      }
      const issue = check(field, join(path, key));
      if (issue !== undefined) return issue;
    }
    for (const [key, check] of opt) {
      const field = value[key];
      if (field === undefined) continue;
      const issue = check(field, join(path, key));
      if (issue !== undefined) return issue;
    }
    return undefined;
  };
}

/**
 * A message `{ id, role, content, source }` with the given role. Content blocks are checked to be
 * objects with a string `type`; their inner shape is the v3 decoder's to judge.
 *
 * @param role The required role.
 * @returns The check.
 *
 * @example Checking values
 * ```ts
 * import { message } from "./legacy.ts";
 * import assert from "node:assert/strict";
 *
 * const user = message("user");
 * assert.equal(user({ id: "u", role: "user", content: [], source: { kind: "user" } }, ""), undefined);
 * assert.equal(user({ id: "u", role: "user", content: [1], source: { kind: "user" } }, "")?.path, "content.0");
 * ```
 */
export function message(role: string): DataCheck {
  return struct({
    id: nonEmpty,
    role: literal(role),
    content: arrayOf(struct({ type: str })),
    source: struct({ kind: str }),
  });
}

/**
 * Whether a decoded event's type is outside its version's vocabulary (it is then opaque: it was
 * accepted only because it is `ignorable: true`).
 *
 * @param vocabulary The version's vocabulary.
 * @param event A decoded event of that version.
 * @returns `true` for an opaque event.
 *
 * @example Checking values
 * ```ts
 * import { isOpaque } from "./legacy.ts";
 * import { v2Vocabulary } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const event = { type: "x/note", seq: 0, time: 0, data: {}, ignorable: true } as const;
 * assert.equal(isOpaque(v2Vocabulary, event), true);
 * ```
 */
export function isOpaque(
  vocabulary: LegacyVocabulary,
  event: LegacyEvent,
): boolean {
  return !vocabulary.data.has(event.type);
}

const decodeReplace = (
  op: Json,
  seq: number,
  line: number,
  version: number,
): Result.Result<LegacySurfaceOp, MalformedReplace> => {
  if (op === "append") return Result.succeed("append");
  const bad = (reason: string) =>
    Result.fail(new MalformedReplace({ line, seq, version, reason }));
  if (!isJsonObject(op)) return bad("surfaceOp");
  for (const key of Object.keys(op)) {
    if (key !== "op" && key !== "start" && key !== "end") return bad(key);
  }
  if (op["op"] !== "replace") return bad("op");
  const start = op["start"];
  const end = op["end"];
  if (!isSeq(start) || start >= seq) return bad("start");
  if (!isSeq(end) || end >= seq) return bad("end");
  return Result.succeed({ op: "replace", start, end });
};

const decodeSources = (
  sources: Json,
  seq: number,
  line: number,
  version: number,
): Result.Result<ReadonlyArray<number>, InvalidLegacySourceList> => {
  const bad = (reason: string) =>
    Result.fail(new InvalidLegacySourceList({ line, seq, version, reason }));
  if (!Array.isArray(sources)) return bad("shape");
  if (sources.length === 0) return bad("empty");
  const out: Array<number> = [];
  const seen = new Set<number>();
  // A for-index loop (not for-of) so holes are seen as `undefined` and refused.
  for (let i = 0; i < sources.length; i++) {
    const s: unknown = sources[i];
    if (!isSeq(s)) return bad("shape");
    if (s >= seq) return bad("not-earlier");
    if (seen.has(s)) return bad("duplicate");
    seen.add(s);
    out.push(s);
  }
  return Result.succeed(out);
};

/**
 * Decode one event line of a released version: the envelope, the vocabulary, the surface
 * metadata and the data schema. The result keeps `data` exactly as given.
 *
 * @param vocabulary The frozen vocabulary of the line's version.
 * @param input The parsed JSON line.
 * @param line Its 1-based line in the file.
 * @returns The event, or the first rule it breaks.
 */
function decodeLegacyEvent(
  vocabulary: LegacyVocabulary,
  input: unknown,
  line: number,
): Result.Result<LegacyEvent, LegacyDecodeError> {
  const version = vocabulary.version;
  const envelope = (reason: string, seq: number | undefined) =>
    Result.fail(new InvalidLegacyEnvelope({ line, seq, version, reason }));
  if (!isJsonObject(input)) return envelope("event", undefined);
  const seq = input["seq"];
  if (!isSeq(seq)) return envelope("seq", undefined);
  for (const key of Object.keys(input)) {
    if (!ENVELOPE_KEYS.has(key)) return envelope(key, seq);
  }
  const type = input["type"];
  if (typeof type !== "string" || type.length === 0) {
    return envelope("type", seq);
  }
  const time = input["time"];
  if (!isSafeInt(time)) return envelope("time", seq);
  const data = input["data"];
  if (data === undefined) return envelope("data", seq);
  const ignorable = input["ignorable"];
  if (ignorable !== undefined && ignorable !== true) {
    return envelope("ignorable", seq);
  }
  const check = vocabulary.data.get(type);
  if (check === undefined && ignorable !== true) {
    return Result.fail(
      new UnknownLegacyEventType({ line, seq, version, type }),
    );
  }
  const rawOp = input["surfaceOp"];
  const rawSources = input["sourceEventSeqs"];
  if (check !== undefined && !vocabulary.surface.has(type)) {
    if (rawOp !== undefined || rawSources !== undefined) {
      return Result.fail(
        new SurfaceMetadataOnLegacyLogOnly({ line, seq, version, type }),
      );
    }
  }
  if (
    check !== undefined && vocabulary.surface.has(type) && rawOp === undefined
  ) {
    return Result.fail(new MissingSurfaceMarker({ line, seq, version, type }));
  }
  let surfaceOp: LegacySurfaceOp | undefined;
  if (rawOp !== undefined) {
    const op = decodeReplace(rawOp, seq, line, version);
    if (Result.isFailure(op)) return Result.fail(op.failure);
    surfaceOp = op.success;
  }
  let sourceEventSeqs: ReadonlyArray<number> | undefined;
  if (rawSources !== undefined) {
    if (vocabulary.noSources.has(type)) {
      return Result.fail(
        new InvalidLegacySourceList({
          line,
          seq,
          version,
          reason: "forbidden",
        }),
      );
    }
    const sources = decodeSources(rawSources, seq, line, version);
    if (Result.isFailure(sources)) return Result.fail(sources.failure);
    sourceEventSeqs = sources.success;
  }
  if (check !== undefined) {
    const issue = check(data, "");
    if (issue !== undefined) {
      return Result.fail(
        new InvalidLegacyEventData({
          line,
          seq,
          version,
          type,
          path: issue.path,
          issue: issue.issue,
        }),
      );
    }
  }
  return Result.succeed({
    type,
    seq,
    time,
    data,
    ...(ignorable === true ? { ignorable } : {}),
    ...(surfaceOp === undefined ? {} : { surfaceOp }),
    ...(sourceEventSeqs === undefined ? {} : { sourceEventSeqs }),
  });
}

/**
 * Decodes one event line of one released version: the parsed JSON line and its 1-based line in
 * the file give the event with its data untouched, or the first rule of that version it breaks.
 */
export type LegacyLineDecoder = (
  input: unknown,
  line: number,
) => Result.Result<LegacyEvent, LegacyDecodeError>;

/**
 * The line decoder of one frozen vocabulary: {@link decodeLegacyEvent} bound to it.
 *
 * @param vocabulary The frozen vocabulary of one version.
 * @returns A decoder of that version's event lines.
 *
 * @example Binding a tiny vocabulary
 * ```ts
 * import { legacyDecoder, nat, struct } from "./legacy.ts";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const decode = legacyDecoder({
 *   version: 9,
 *   surface: new Set<string>(),
 *   noSources: new Set<string>(),
 *   data: new Map([["turn/start", struct({ turn: nat })]]),
 * });
 * assert.equal(Result.isSuccess(decode({ type: "turn/start", seq: 0, time: 1, data: { turn: 0 } }, 2)), true);
 * const bad = decode({ type: "nope", seq: 0, time: 1, data: {} }, 2);
 * assert.equal(Result.isFailure(bad) && bad.failure._tag, "UnknownLegacyEventType");
 * ```
 */
export function legacyDecoder(
  vocabulary: LegacyVocabulary,
): LegacyLineDecoder {
  return (input, line) => decodeLegacyEvent(vocabulary, input, line);
}
