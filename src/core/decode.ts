/**
 * Event-local decoding: a parsed JSON value in, a {@link SessionEvent} or the
 * first broken rule out; and the canonical encoding back.
 *
 * Rules are checked in the order of the format's rule table, so a value that
 * breaks several reports the first. Core data objects are validated, not
 * rebuilt: keys beyond a schema's are kept, and the decoded event shares the
 * input's `data`. Relational rules (what is on the surface) are the fold's,
 * in `surface.ts`.
 *
 * @module
 */
import type * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as Schema from "effect/Schema";
import * as SchemaIssue from "effect/SchemaIssue";
import * as SchemaJITCompiler from "effect/schema/SchemaJITCompiler";
import { isSessionSeq, type SessionSeq } from "./seq.ts";
import {
  type CoreEvent,
  type ExtensionEvent,
  isForeignEvent,
  isLogOnlyType,
  isSurfaceType,
  logOnlyDataSchemas,
  type OpaqueEvent,
  type SessionEvent,
  surfaceDataSchemas,
  type SurfaceOp,
} from "./event.ts";
import {
  DuplicateSource,
  EmptySourceList,
  type EventDecodeError,
  InvalidEnvelope,
  InvalidEventData,
  InvalidSessionSeq,
  InvalidSourceList,
  InvalidSurfaceOp,
  PrependNotSystemMessage,
  ReplaceEndpointNotEarlier,
  RetiredHeaderSystem,
  RewindNotUserMessage,
  RewindPointNotEarlier,
  SourceNotEarlier,
  SourcesOnAssistantMessage,
  SurfaceMetadataOnLogOnlyEvent,
  SurfaceOpMissing,
  ToolErrorWithoutIsError,
  UnknownEventType,
} from "./errors.ts";
import { isObject } from "./json.ts";
import { lazyCall } from "./lazy_exit.ts";

/**
 * Extra log-only event types a caller decodes besides the core vocabulary,
 * each with its data schema. Build it with {@link makeVocabulary}.
 */
export interface Vocabulary {
  /** The data schema of each extra type. */
  readonly types: ReadonlyMap<string, Schema.Codec<unknown, unknown>>;
}

/**
 * Builds a {@link Vocabulary} of extra log-only types.
 *
 * @param types Each extra type with its data schema (a JSON codec).
 * @returns The vocabulary, for {@link DecodeOptions}.
 * @throws {TypeError} When a name is empty or is a core type: the names are
 * the caller's own constants, so this is a programming error, seen on the
 * first run, not a condition to handle.
 *
 * @example Decoding a harness's own event type
 * ```ts
 * import { makeVocabulary } from "@palimpsest/session";
 * import { decodeEvent } from "@palimpsest/session/schema";
 * import { Effect, Schema } from "effect";
 * import assert from "node:assert/strict";
 *
 * const vocabulary = makeVocabulary({
 *   "harness/checkpoint": Schema.Struct({ label: Schema.String }),
 * });
 * const event = Effect.runSync(decodeEvent(
 *   { type: "harness/checkpoint", seq: 0, time: 0, data: { label: "a" } },
 *   { vocabulary },
 * ));
 * assert.deepEqual(event.data, { label: "a" });
 * ```
 */
export function makeVocabulary(
  types: Readonly<Record<string, Schema.Codec<unknown, unknown>>>,
): Vocabulary {
  const map = new Map<string, Schema.Codec<unknown, unknown>>();
  for (const [name, schema] of Object.entries(types)) {
    if (name.length === 0 || isSurfaceType(name) || isLogOnlyType(name)) {
      throw new TypeError(
        `Expected an extra event type to be a new non-empty name but found "${name}"`,
      );
    }
    map.set(name, schema);
  }
  return { types: map };
}

/** Options of {@link decodeEvent}. */
export interface DecodeOptions {
  /** Extra log-only types to accept besides the core vocabulary. */
  readonly vocabulary?: Vocabulary;
}

/**
 * The keys an event envelope may have: `type`, `seq`, `time`, `data`,
 * `ignorable`, `surfaceOp` and `sourceEventSeqs`. Every released format
 * version has the same set, so the frozen decoders of `./migrations` check
 * against this one.
 */
export const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  "type",
  "seq",
  "time",
  "data",
  "ignorable",
  "surfaceOp",
  "sourceEventSeqs",
]);

const opaqueEvents = new WeakSet<object>();

/**
 * Returns true when `event` was decoded as opaque: an `ignorable: true`
 * event of a type outside the vocabulary, kept exactly as read.
 *
 * @param event A decoded event.
 * @returns Whether the event is opaque.
 *
 * @example An unknown ignorable event stays opaque
 * ```ts
 * import { decodeEvent, isOpaqueEvent } from "@palimpsest/session/schema";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = Effect.runSync(decodeEvent({
 *   type: "future/thing", seq: 0, time: 0, data: null, ignorable: true,
 * }));
 * assert.equal(isOpaqueEvent(event), true);
 * ```
 */
export function isOpaqueEvent(event: SessionEvent): event is OpaqueEvent {
  return opaqueEvents.has(event);
}

/**
 * Returns true when `event` is of a type the caller's vocabulary declared
 * (an extension event): neither core nor opaque.
 *
 * @param event A decoded event.
 * @returns Whether the event is an extension event.
 *
 * @example Telling extension events from opaque ones
 * ```ts
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { isExtensionEvent, makeVocabulary } from "@palimpsest/session";
 * import { eventTypeName } from "@palimpsest/session/schema";
 * import { Result, Schema } from "effect";
 * import assert from "node:assert/strict";
 *
 * const vocabulary = makeVocabulary({
 *   "harness/checkpoint": Schema.Struct({ label: Schema.String }),
 * });
 * const decode = (value: unknown) => Result.getOrThrow(decodeEventResult(value, { vocabulary }));
 * const checkpoint = decode({ type: "harness/checkpoint", seq: 0, time: 0, data: { label: "a" } });
 * const future = decode({ type: "future/thing", seq: 1, time: 0, data: 1, ignorable: true });
 * assert.equal(isExtensionEvent(checkpoint) && eventTypeName(checkpoint), "harness/checkpoint");
 * assert.equal(isExtensionEvent(future), false);
 * ```
 */
export function isExtensionEvent(event: SessionEvent): event is ExtensionEvent {
  return isForeignEvent(event) && !opaqueEvents.has(event);
}

type Validator = (input: unknown) => boolean;
interface Diagnosis {
  readonly path: ReadonlyArray<string | number>;
  readonly issue: string;
}
type Diagnose = (input: unknown) => Diagnosis;

const formatter = SchemaIssue.makeFormatterStandardSchemaV1();

const firstIssue = (issue: SchemaIssue.Issue): Diagnosis => {
  const first = formatter(issue).issues[0];
  const path = (first?.path ?? []).map((segment): string | number => {
    const key = typeof segment === "object" ? segment.key : segment;
    return typeof key === "number" ? key : String(key);
  });
  return { path, issue: first?.message ?? "Invalid value" };
};

const diagnoser = (schema: Schema.Codec<unknown, unknown>): Diagnose => {
  const decode = Schema.decodeUnknownResult(schema);
  return (input) => {
    const result = decode(input);
    return Result.isSuccess(result)
      ? { path: [], issue: "Invalid value" }
      : firstIssue(result.failure.issue);
  };
};

interface Compiled {
  readonly is: Validator;
  readonly diagnose: Diagnose;
}

// Validation runs once per line read, so the data schemas are compiled to
// generated code (measured about 8x faster than the interpreter). Where code
// generation is unavailable, effect falls back to interpreting.
const compile = (schema: Schema.Codec<unknown, unknown>): Compiled => {
  SchemaJITCompiler.enable(schema.ast);
  return { is: Schema.is(schema), diagnose: diagnoser(schema) };
};

const coreCompiled: ReadonlyMap<string, Compiled> = new Map(
  [
    ...Object.entries(surfaceDataSchemas),
    ...Object.entries(logOnlyDataSchemas),
  ].map(([type, schema]) => [type, compile(schema)]),
);

type Decoded = Result.Result<SessionEvent, EventDecodeError>;

const fail = (error: EventDecodeError): Decoded => Result.fail(error);

/** The endpoints of a replace, in the order they are checked. */
const REPLACE_ENDPOINTS = ["startSeq", "endSeq"] as const;

/** An input whose envelope passed: its type and seq, read once. */
interface Envelope {
  readonly input: Record<string, unknown>;
  readonly type: string;
  readonly seq: SessionSeq;
}

// `ownKeysKnown`: a draft's envelope, built with envelope keys only.
const checkEnvelope = (
  input: unknown,
  ownKeysKnown: boolean,
): EventDecodeError | Envelope => {
  if (!isObject(input)) {
    return new InvalidEnvelope({
      seq: undefined,
      problem: "not-an-object",
      key: undefined,
      value: input,
    });
  }
  const seq = isSessionSeq(input.seq) ? input.seq : undefined;
  if (!ownKeysKnown) {
    for (const key of Object.keys(input)) {
      if (!ENVELOPE_KEYS.has(key)) {
        return new InvalidEnvelope({
          seq,
          problem: "unknown-key",
          key,
          value: input[key],
        });
      }
    }
  }
  const type = input.type;
  if (typeof type !== "string" || type.length === 0) {
    return new InvalidEnvelope({
      seq,
      problem: "invalid-type",
      key: "type",
      value: type,
    });
  }
  if (!Number.isSafeInteger(input.time)) {
    return new InvalidEnvelope({
      seq,
      problem: "invalid-time",
      key: "time",
      value: input.time,
    });
  }
  if (!("data" in input) || input.data === undefined) {
    return new InvalidEnvelope({
      seq,
      problem: "missing-data",
      key: "data",
      value: undefined,
    });
  }
  if ("ignorable" in input && input.ignorable !== true) {
    return new InvalidEnvelope({
      seq,
      problem: "invalid-ignorable",
      key: "ignorable",
      value: input.ignorable,
    });
  }
  if (!isSessionSeq(input.seq)) {
    return new InvalidSessionSeq({ value: input.seq, type });
  }
  return { input, type, seq: input.seq };
};

const checkSurfaceOp = (op: unknown): op is SurfaceOp => {
  if (op === "append" || op === "prepend") return true;
  if (!isObject(op)) return false;
  let keys = 0;
  for (const _ in op) keys++;
  if (keys === 2) return op.op === "rewind" && isSessionSeq(op.toSeq);
  return keys === 3 && op.op === "replace" && isSessionSeq(op.startSeq) &&
    isSessionSeq(op.endSeq);
};

/** The first element equal to an earlier one, if any. */
const firstDuplicate = (
  sources: ReadonlyArray<SessionSeq>,
): SessionSeq | undefined => {
  // Quadratic-free past a small size.
  if (sources.length <= 8) {
    for (let i = 1; i < sources.length; i++) {
      for (let j = 0; j < i; j++) {
        if (sources[i] === sources[j]) return sources[i];
      }
    }
    return undefined;
  }
  const seen = new Set<number>();
  for (const s of sources) {
    if (seen.has(s)) return s;
    seen.add(s);
  }
  return undefined;
};

const checkSources = (
  seq: SessionSeq,
  type: string,
  sources: unknown,
): EventDecodeError | undefined => {
  if (!Array.isArray(sources)) {
    return new InvalidSourceList({
      seq,
      type,
      index: undefined,
      value: sources,
    });
  }
  const length = sources.length;
  // Strictly increasing lists (every expanded run, most lists) cannot hold a
  // duplicate: only the others need the search below.
  let increasing = true;
  let previous = -1;
  for (let i = 0; i < length; i++) {
    if (!(i in sources)) {
      return new InvalidSourceList({ seq, type, index: i, value: undefined });
    }
    const s: unknown = sources[i];
    if (!isSessionSeq(s)) {
      return new InvalidSourceList({ seq, type, index: i, value: s });
    }
    if (s <= previous) increasing = false;
    previous = s;
  }
  if (length === 0) return new EmptySourceList({ seq, type });
  if (!increasing) {
    const duplicate = firstDuplicate(sources);
    if (duplicate !== undefined) {
      return new DuplicateSource({ seq, type, source: duplicate });
    }
  }
  for (const s of sources) {
    if (s >= seq) return new SourceNotEarlier({ seq, type, source: s });
  }
  return undefined;
};

/** A log-only event may carry neither surface metadata field. */
const logOnlyMetadata = (
  input: Record<string, unknown>,
  seq: SessionSeq,
  type: string,
): SurfaceMetadataOnLogOnlyEvent | undefined =>
  "surfaceOp" in input
    ? new SurfaceMetadataOnLogOnlyEvent({ seq, type, field: "surfaceOp" })
    : "sourceEventSeqs" in input
    ? new SurfaceMetadataOnLogOnlyEvent({ seq, type, field: "sourceEventSeqs" })
    : undefined;

const buildEvent = (
  type: string,
  seq: SessionSeq,
  input: Record<string, unknown>,
  data: unknown,
): Record<string, unknown> => {
  const event: Record<string, unknown> = {
    type,
    seq,
    time: input.time,
    data,
  };
  if (input.ignorable === true) event.ignorable = true;
  if ("surfaceOp" in input) event.surfaceOp = input.surfaceOp;
  if ("sourceEventSeqs" in input) {
    event.sourceEventSeqs = input.sourceEventSeqs;
  }
  return event;
};

// The checks above prove the shape; this is the one place that says so to
// the compiler.
const asEvent = (value: Record<string, unknown>): SessionEvent =>
  value as never;

/**
 * Decodes one event synchronously, checking every event-local rule. The
 * same as {@link decodeEvent}, as a `Result`, for loops that decode many.
 *
 * @param value A parsed JSON value.
 * @param options The vocabulary to decode with.
 * @returns The event, or the first rule it breaks.
 *
 * @example Decoding a line without an Effect runtime
 * ```ts
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const result = decodeEventResult({ type: "turn/start", seq: -1, time: 0, data: { turn: 0 } });
 * assert.equal(Result.isFailure(result) && result.failure._tag, "InvalidSessionSeq");
 * ```
 */
export function decodeEventResult(
  value: unknown,
  options?: DecodeOptions,
): Result.Result<SessionEvent, EventDecodeError> {
  const envelope = checkEnvelope(value, false);
  if (envelope instanceof Error) return fail(envelope);
  return decodeChecked(envelope, options, false);
}

/**
 * Decodes an event the library assembled from a draft, with the same rules
 * in the same order as {@link decodeEventResult}. The input must be a fresh
 * object that nothing else holds, with envelope keys only, in the canonical
 * order (`type`, `seq`, `time`, `data`, then `ignorable`, `surfaceOp`,
 * `sourceEventSeqs` where present): it becomes the event itself instead of
 * being copied into a new one.
 *
 * @param input The assembled event.
 * @param options The vocabulary to decode with.
 * @returns The event, or the first rule it breaks.
 * @internal
 */
export function decodeDraftResult(
  input: Record<string, unknown>,
  options?: DecodeOptions,
): Result.Result<SessionEvent, EventDecodeError> {
  const envelope = checkEnvelope(input, true);
  if (envelope instanceof Error) return fail(envelope);
  return decodeChecked(envelope, options, true);
}

// The rules after the envelope's; `owned`: see decodeDraftResult.
const decodeChecked = (
  envelope: Envelope,
  options: DecodeOptions | undefined,
  owned: boolean,
): Result.Result<SessionEvent, EventDecodeError> => {
  const { input, type, seq } = envelope;
  const surface = isSurfaceType(type);
  const compiled = coreCompiled.get(type);
  if (compiled === undefined) {
    const extra = options?.vocabulary?.types.get(type);
    if (extra === undefined) {
      if (input.ignorable === true) {
        opaqueEvents.add(input);
        return Result.succeed(asEvent(input));
      }
      return fail(new UnknownEventType({ seq, type }));
    }
    const decoded = Schema.decodeUnknownResult(extra)(input.data);
    if (Result.isFailure(decoded)) {
      const { path, issue } = firstIssue(decoded.failure.issue);
      return fail(new InvalidEventData({ seq, type, path, issue }));
    }
    const metadataError = logOnlyMetadata(input, seq, type);
    if (metadataError !== undefined) return fail(metadataError);
    return Result.succeed(
      asEvent(buildEvent(type, seq, input, decoded.success)),
    );
  }
  const data = input.data;
  if (!compiled.is(data)) {
    const { path, issue } = compiled.diagnose(data);
    return fail(new InvalidEventData({ seq, type, path, issue }));
  }
  if (surface) {
    if (!("surfaceOp" in input)) {
      return fail(new SurfaceOpMissing({ seq, type }));
    }
    const op = input.surfaceOp;
    if (!checkSurfaceOp(op)) {
      return fail(new InvalidSurfaceOp({ seq, type, surfaceOp: op }));
    }
    if (op === "prepend" && type !== "system/message") {
      return fail(new PrependNotSystemMessage({ seq, type }));
    }
    if (
      typeof op === "object" && op.op === "rewind" && type !== "user/message"
    ) {
      return fail(new RewindNotUserMessage({ seq, type }));
    }
    if ("sourceEventSeqs" in input) {
      if (type === "assistant/message") {
        return fail(new SourcesOnAssistantMessage({ seq }));
      }
      const sourceError = checkSources(seq, type, input.sourceEventSeqs);
      if (sourceError !== undefined) return fail(sourceError);
    }
    if (typeof op === "object" && op.op === "rewind") {
      if (op.toSeq >= seq) {
        return fail(new RewindPointNotEarlier({ seq, toSeq: op.toSeq }));
      }
    } else if (typeof op === "object") {
      for (const endpoint of REPLACE_ENDPOINTS) {
        if (op[endpoint] >= seq) {
          return fail(
            new ReplaceEndpointNotEarlier({
              seq,
              type,
              endpoint,
              value: op[endpoint],
            }),
          );
        }
      }
    }
    if (type === "tool/result" && isObject(data) && "error" in data) {
      const message = isObject(data.message) ? data.message : {};
      const content = Array.isArray(message.content) ? message.content : [];
      const block: unknown = content[0];
      if (!isObject(block) || block.isError !== true) {
        const source = isObject(message.source) ? message.source : {};
        return fail(
          new ToolErrorWithoutIsError({ seq, callId: String(source.callId) }),
        );
      }
    }
  } else {
    const metadataError = logOnlyMetadata(input, seq, type);
    if (metadataError !== undefined) return fail(metadataError);
    if (
      type === "request/header" && isObject(data) && isObject(data.header) &&
      Object.hasOwn(data.header, "system")
    ) {
      return fail(new RetiredHeaderSystem({ seq }));
    }
  }
  return Result.succeed(
    asEvent(owned ? input : buildEvent(type, seq, input, data)),
  );
};

/**
 * Decodes one parsed JSON value into a {@link SessionEvent}, checking every
 * event-local rule of the format in the rule table's order.
 *
 * @param input A parsed JSON value (`unknown`).
 * @param options The vocabulary to decode with (extra log-only types).
 * @returns `Effect<SessionEvent, EventDecodeError>`: fails with the first
 * broken rule's tag (`InvalidEnvelope`, `InvalidSessionSeq`,
 * `UnknownEventType`, `InvalidEventData`, `SurfaceOpMissing`,
 * `InvalidSurfaceOp`, `PrependNotSystemMessage`, `RewindNotUserMessage`,
 * `SurfaceMetadataOnLogOnlyEvent`, `SourcesOnAssistantMessage`,
 * `InvalidSourceList`, `EmptySourceList`, `DuplicateSource`,
 * `SourceNotEarlier`, `ReplaceEndpointNotEarlier`, `RewindPointNotEarlier`,
 * `ToolErrorWithoutIsError`, `RetiredHeaderSystem`).
 *
 * @example Decoding a user message and catching a rule
 * ```ts
 * import { decodeEvent } from "@palimpsest/session/schema";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const line = {
 *   type: "user/message", seq: 0, time: 0,
 *   data: { id: "u0", role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user" } },
 * };
 * const ok = Effect.runSync(decodeEvent({ ...line, surfaceOp: "append" }));
 * assert.equal(ok.type, "user/message");
 *
 * const tag = Effect.runSync(decodeEvent(line).pipe(
 *   Effect.map(() => "decoded"),
 *   Effect.catchTag("SurfaceOpMissing", (e) => Effect.succeed(e._tag)),
 * ));
 * assert.equal(tag, "SurfaceOpMissing");
 * ```
 */
export function decodeEvent(
  input: unknown,
  options?: DecodeOptions,
): Effect.Effect<SessionEvent, EventDecodeError> {
  return lazyCall(decodeEventResult, input, options);
}

/** A core event, for callers that matched on a core type. */
export type { CoreEvent };
