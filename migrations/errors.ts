/**
 * Every refusal of the migration chain, one class per reason.
 *
 * Each error has a literal `_tag` (so `Effect.catchTag` narrows it) and carries the position as
 * fields: `line` is the 1-based JSONL line (the header is line 1) and `seq` the event's seq in the
 * version that refused it. Message text is for people and is not the contract.
 *
 * @module
 */
import * as Data from "effect/Data";
import type { EventDecodeError, SurfaceError } from "../src/errors.ts";
import { FormatTooNew } from "../src/log/errors.ts";

/** The header names a newer format version: the reader's own error. */
export { FormatTooNew };

/**
 * The first line of an old log is not a session header of a released version.
 *
 * Fields:
 * - `line`: 1-based JSONL line (the header is line 1)
 * - `reason`: what is wrong, e.g. `"id"`
 *
 * @example Refusing a header with an empty id
 * ```ts
 * import { makeMigrator } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const made = makeMigrator({ type: "session", version: 1, id: "", createdAt: 0, isSeeded: false });
 * assert.ok(Result.isFailure(made));
 * assert.equal(made.failure._tag, "InvalidLegacyHeader");
 * assert.equal(made.failure._tag === "InvalidLegacyHeader" && made.failure.reason, "id");
 * ```
 */
export class InvalidLegacyHeader extends Data.Error<{
  readonly line: number;
  readonly reason: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "InvalidLegacyHeader" = "InvalidLegacyHeader";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: expected a session header but found a bad ${
      JSON.stringify(this.reason)
    }`;
}

/**
 * A catalog was built (or asked for a chain) with a gap: no edge leaves `from`.
 *
 * Fields:
 * - `from`: the version no edge converts from
 * - `to`: the version the chain needed to reach
 *
 * @example A catalog without the v1 → v2 edge
 * ```ts
 * import { makeCatalog, v0ToV1, v2ToV3 } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const catalog = makeCatalog([v0ToV1, v2ToV3]);
 * assert.ok(Result.isFailure(catalog));
 * assert.equal(catalog.failure._tag, "MissingMigrationEdge");
 * assert.deepEqual([catalog.failure.from, catalog.failure.to], [1, 3]);
 * ```
 */
export class MissingMigrationEdge extends Data.Error<{
  readonly from: number;
  readonly to: number;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "MissingMigrationEdge" = "MissingMigrationEdge";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `No migration edge from version "${this.from}" towards version "${this.to}"; register the missing edge`;
}

/**
 * A catalog was built with two edges leaving the same version.
 *
 * Fields:
 * - `from`: the version two edges convert from
 *
 * @example A catalog given the v1 → v2 edge twice
 * ```ts
 * import { makeCatalog, v0ToV1, v1ToV2, v2ToV3 } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const catalog = makeCatalog([v0ToV1, v1ToV2, v1ToV2, v2ToV3]);
 * assert.ok(Result.isFailure(catalog));
 * assert.equal(catalog.failure._tag, "DuplicateMigrationEdge");
 * assert.equal(catalog.failure._tag === "DuplicateMigrationEdge" && catalog.failure.from, 1);
 * ```
 */
export class DuplicateMigrationEdge extends Data.Error<{
  readonly from: number;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "DuplicateMigrationEdge" = "DuplicateMigrationEdge";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Two migration edges convert from version "${this.from}"; keep one`;
}

/**
 * A complete line of an old log is not JSON.
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `excerpt`: the start of the line
 *
 * @example Migrating a file whose second line is cut off
 * ```ts
 * import { migrateFile } from "@palimpsest/session/migrations";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/s.jsonl`, [
 *   '{"type":"session","version":1,"id":"s","createdAt":0,"isSeeded":false}',
 *   '{"type":',
 *   "",
 * ].join("\n"));
 * const error = Effect.runSync(Effect.flip(migrateFile(`${dir}/s.jsonl`)));
 * assert.equal(error._tag, "CorruptLegacyLine");
 * assert.deepEqual(
 *   error._tag === "CorruptLegacyLine" && [error.line, error.excerpt],
 *   [2, '{"type":'],
 * );
 * assert.deepEqual(Deno.readDirSync(dir).toArray().map((e) => e.name), ["s.jsonl"]);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export class CorruptLegacyLine extends Data.Error<{
  readonly line: number;
  readonly excerpt: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "CorruptLegacyLine" = "CorruptLegacyLine";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line} is not JSON: "${this.excerpt}"`;
}

/**
 * An event line breaks its version's envelope (keys, `type`, `seq`, `time`, `data`, `ignorable`).
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the event's seq when it could be read
 * - `version`: the format version whose decoder refused it
 * - `reason`: the offending key or rule, e.g. `"time"`
 *
 * @example A line that is not an event
 * ```ts
 * import { makeMigrator } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const migrator = Result.getOrThrow(makeMigrator({ type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false }));
 * const out = migrator.push({ seq: 0, time: 0, data: {} }, 2);
 * assert.ok(Result.isFailure(out));
 * assert.equal(out.failure._tag, "InvalidLegacyEnvelope");
 * ```
 */
export class InvalidLegacyEnvelope extends Data.Error<{
  readonly line: number;
  readonly seq: number | undefined;
  readonly version: number;
  readonly reason: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "InvalidLegacyEnvelope" = "InvalidLegacyEnvelope";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: invalid v${this.version} envelope at "${this.reason}"`;
}

/**
 * An event type outside its version's vocabulary without `ignorable: true`.
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the event's seq
 * - `version`: the format version whose decoder refused it
 * - `type`: the unknown type
 *
 * @example An event type version 2 did not have
 * ```ts
 * import { makeMigrator } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const migrator = Result.getOrThrow(makeMigrator({ type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false }));
 * const out = migrator.push({ type: "x/y", seq: 0, time: 0, data: {} }, 2);
 * assert.ok(Result.isFailure(out));
 * assert.equal(out.failure._tag, "UnknownLegacyEventType");
 * assert.equal(out.failure.line, 2);
 * ```
 */
export class UnknownLegacyEventType extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly type: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "UnknownLegacyEventType" = "UnknownLegacyEventType";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: unknown v${this.version} event type "${this.type}"; mark it ignorable or remove it`;
}

/**
 * A surface event (message or tool result) without `surfaceOp`: never an implicit append.
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the event's seq
 * - `version`: the format version whose decoder refused it
 * - `type`: the surface type
 *
 * @example A version-2 user message without surfaceOp
 * ```ts
 * import { makeMigrator } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const migrator = Result.getOrThrow(makeMigrator({ type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false }));
 * const out = migrator.push({
 *   type: "user/message", seq: 0, time: 0,
 *   data: { id: "u", role: "user", content: [], source: { kind: "user" } },
 * }, 2);
 * assert.ok(Result.isFailure(out));
 * assert.equal(out.failure._tag, "MissingSurfaceMarker");
 * ```
 */
export class MissingSurfaceMarker extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly type: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "MissingSurfaceMarker" = "MissingSurfaceMarker";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: "${this.type}" event "${this.seq}" has no surfaceOp`;
}

/**
 * A `surfaceOp` that is neither `"append"` nor an exact replace object of its version (v0–v2: `{op, start, end}` with earlier endpoints).
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the event's seq
 * - `version`: the format version whose decoder refused it
 * - `reason`: the offending key or rule
 *
 * @example A version-1 replace written with version-3 keys
 * ```ts
 * import { makeMigrator } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const migrator = Result.getOrThrow(makeMigrator({ type: "session", version: 1, id: "s", createdAt: 0, isSeeded: false }));
 * const user = (seq: number, id: string) => ({
 *   type: "user/message", seq, time: seq,
 *   data: { id, role: "user", content: [{ type: "text", text: id }], source: { kind: "user" } },
 * });
 * Result.getOrThrow(migrator.push({ type: "turn/start", seq: 0, time: 0, data: { turn: 0 } }, 2));
 * Result.getOrThrow(migrator.push({ type: "step/start", seq: 1, time: 1, data: { turn: 0, step: 0 } }, 3));
 * Result.getOrThrow(migrator.push({ ...user(2, "u1"), surfaceOp: "append" }, 4));
 * const out = migrator.push({
 *   ...user(3, "u2"),
 *   surfaceOp: { op: "replace", startSeq: 2, endSeq: 2 },
 *   sourceEventSeqs: [2],
 * }, 5);
 * assert.ok(Result.isFailure(out));
 * assert.equal(out.failure._tag, "MalformedReplace");
 * assert.deepEqual(
 *   out.failure._tag === "MalformedReplace" && [out.failure.line, out.failure.version],
 *   [5, 1],
 * );
 * ```
 */
export class MalformedReplace extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly reason: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "MalformedReplace" = "MalformedReplace";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: malformed v${this.version} surfaceOp on event "${this.seq}" at "${this.reason}"`;
}

/**
 * A known log-only event carrying `surfaceOp` or `sourceEventSeqs`.
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the event's seq
 * - `version`: the format version whose decoder refused it
 * - `type`: the log-only type
 *
 * @example A version-1 turn marker placed on the surface
 * ```ts
 * import { makeMigrator } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const migrator = Result.getOrThrow(makeMigrator({ type: "session", version: 1, id: "s", createdAt: 0, isSeeded: false }));
 * const out = migrator.push({ type: "turn/start", seq: 0, time: 0, data: { turn: 0 }, surfaceOp: "append" }, 2);
 * assert.ok(Result.isFailure(out));
 * assert.equal(out.failure._tag, "SurfaceMetadataOnLegacyLogOnly");
 * assert.equal(out.failure._tag === "SurfaceMetadataOnLegacyLogOnly" && out.failure.type, "turn/start");
 * ```
 */
export class SurfaceMetadataOnLegacyLogOnly extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly type: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "SurfaceMetadataOnLegacyLogOnly" =
    "SurfaceMetadataOnLegacyLogOnly";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: log-only "${this.type}" event "${this.seq}" carries surface metadata`;
}

/**
 * A `sourceEventSeqs` that is not a non-empty list of unique earlier seqs, or that its version forbids on this type.
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the event's seq
 * - `version`: the format version whose decoder refused it
 * - `reason`: `"shape"`, `"empty"`, `"duplicate"`, `"not-earlier"` or `"forbidden"`
 *
 * @example A version-2 message citing nothing
 * ```ts
 * import { makeMigrator } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const migrator = Result.getOrThrow(makeMigrator({ type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false }));
 * const out = migrator.push({
 *   type: "user/message", seq: 0, time: 0, surfaceOp: "append", sourceEventSeqs: [],
 *   data: { id: "u", role: "user", content: [], source: { kind: "user" } },
 * }, 2);
 * assert.ok(Result.isFailure(out));
 * assert.equal(out.failure._tag, "InvalidLegacySourceList");
 * assert.equal(out.failure._tag === "InvalidLegacySourceList" && out.failure.reason, "empty");
 * ```
 */
export class InvalidLegacySourceList extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly reason: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "InvalidLegacySourceList" = "InvalidLegacySourceList";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: invalid sourceEventSeqs on event "${this.seq}" ("${this.reason}")`;
}

/**
 * `data` does not match its type's schema in that version.
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the event's seq
 * - `version`: the format version whose decoder refused it
 * - `type`: the event type
 * - `path`: where in `data`, e.g. `"message.role"`
 * - `issue`: what was expected there
 *
 * @example A version-1 turn marker with a negative turn
 * ```ts
 * import { makeMigrator } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const migrator = Result.getOrThrow(makeMigrator({ type: "session", version: 1, id: "s", createdAt: 0, isSeeded: false }));
 * const out = migrator.push({ type: "turn/start", seq: 0, time: 0, data: { turn: -1 } }, 2);
 * assert.ok(Result.isFailure(out));
 * assert.equal(out.failure._tag, "InvalidLegacyEventData");
 * assert.deepEqual(
 *   out.failure._tag === "InvalidLegacyEventData" && [out.failure.line, out.failure.type, out.failure.path],
 *   [2, "turn/start", "turn"],
 * );
 * ```
 */
export class InvalidLegacyEventData extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly type: string;
  readonly path: string;
  readonly issue: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "InvalidLegacyEventData" = "InvalidLegacyEventData";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: "${this.type}" data at "${this.path}": ${this.issue}`;
}

/**
 * Event seqs of an old log are not dense from 0 (the n-th event must have seq n).
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `version`: the version of the edge input
 * - `expected`: the seq the position requires
 * - `actual`: the seq found
 *
 * @example A log whose first event is not seq 0
 * ```ts
 * import { makeMigrator } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const migrator = Result.getOrThrow(makeMigrator({ type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false }));
 * const out = migrator.push({ type: "turn/start", seq: 4, time: 0, data: { turn: 0 } }, 2);
 * assert.ok(Result.isFailure(out));
 * assert.equal(out.failure._tag, "LegacySeqNotDense");
 * assert.deepEqual(
 *   out.failure._tag === "LegacySeqNotDense" && [out.failure.expected, out.failure.actual],
 *   [0, 4],
 * );
 * ```
 */
export class LegacySeqNotDense extends Data.Error<{
  readonly line: number;
  readonly version: number;
  readonly expected: number;
  readonly actual: number;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "LegacySeqNotDense" = "LegacySeqNotDense";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: expected seq "${this.expected}" but found "${this.actual}"`;
}

/**
 * v1→v2: a reference to an `assistant/chunk` that the edge folded into a message or an attempt (chunks do not exist in v2).
 *
 * Fields:
 * - `line`: 1-based JSONL line of the referring event
 * - `seq`: the referring event's v1 seq
 * - `chunkSeq`: the v1 seq of the chunk
 * - `via`: where the reference sits
 *
 * @example A version-1 compaction that shadows a chunk folded into its message
 * ```ts
 * import { migrate } from "@palimpsest/session/migrations";
 * import { Effect, Stream } from "effect";
 * import assert from "node:assert/strict";
 *
 * const lines = [
 *   { type: "session", version: 1, id: "s", createdAt: 0, isSeeded: false },
 *   { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
 *   { type: "step/start", seq: 1, time: 1, data: { turn: 0, step: 0 } },
 *   { type: "assistant/chunk", seq: 2, time: 2, data: { turn: 0, step: 0, chunk: "a" } },
 *   {
 *     type: "assistant/message", seq: 3, time: 3, surfaceOp: "append", sourceEventSeqs: [2],
 *     data: {
 *       turn: 0, step: 0,
 *       message: { id: "a1", role: "assistant", content: [{ type: "text", text: "a" }], source: { kind: "model", provider: "p", model: "m" } },
 *     },
 *   },
 *   { type: "step/end", seq: 4, time: 4, data: { turn: 0, step: 0 } },
 *   { type: "compaction/start", seq: 5, time: 5, data: { compactionId: "k", turn: 0 } },
 *   { type: "compaction/summary", seq: 6, time: 6, data: { compactionId: "k", summary: "s", shadowedSeqs: [2] } },
 * ];
 * const error = Effect.runSync(Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))));
 * assert.equal(error._tag, "ConsumedChunkReference");
 * assert.deepEqual(
 *   error._tag === "ConsumedChunkReference" && [error.line, error.chunkSeq, error.via],
 *   [8, 2, "shadowedSeqs"],
 * );
 * ```
 */
export class ConsumedChunkReference extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly chunkSeq: number;
  readonly via: "sourceEventSeqs" | "surfaceOp" | "shadowedSeqs";
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "ConsumedChunkReference" = "ConsumedChunkReference";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: event "${this.seq}" refers to consumed chunk "${this.chunkSeq}" in ${this.via}`;
}

/**
 * v1→v2: an `assistant/message` whose sources are not pending chunks of its open message, in order.
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the message's v1 seq
 * - `source`: the offending cited seq
 * - `reason`: why the citation cannot be folded
 *
 * @example A version-1 assistant message citing a user message as its chunk
 * ```ts
 * import { migrate } from "@palimpsest/session/migrations";
 * import { Effect, Stream } from "effect";
 * import assert from "node:assert/strict";
 *
 * const lines = [
 *   { type: "session", version: 1, id: "s", createdAt: 0, isSeeded: false },
 *   { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
 *   { type: "step/start", seq: 1, time: 1, data: { turn: 0, step: 0 } },
 *   {
 *     type: "user/message", seq: 2, time: 2, surfaceOp: "append",
 *     data: { id: "u1", role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user" } },
 *   },
 *   {
 *     type: "assistant/message", seq: 3, time: 3, surfaceOp: "append", sourceEventSeqs: [2],
 *     data: {
 *       turn: 0, step: 0,
 *       message: { id: "a1", role: "assistant", content: [{ type: "text", text: "a" }], source: { kind: "model", provider: "p", model: "m" } },
 *     },
 *   },
 * ];
 * const error = Effect.runSync(Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))));
 * assert.equal(error._tag, "InvalidChunkCitation");
 * assert.deepEqual(
 *   error._tag === "InvalidChunkCitation" && [error.line, error.source, error.reason],
 *   [5, 2, "not-a-chunk"],
 * );
 * ```
 */
export class InvalidChunkCitation extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly source: number;
  readonly reason: "not-a-chunk" | "out-of-order";
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "InvalidChunkCitation" = "InvalidChunkCitation";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: assistant message "${this.seq}" cites "${this.source}" ("${this.reason}")`;
}

/**
 * v2→v3: a surface event before the first `step/start`; the system head could not precede it.
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the event's v2 seq
 * - `type`: the surface type
 *
 * @example A version-2 user message before any step
 * ```ts
 * import { migrate } from "@palimpsest/session/migrations";
 * import { Effect, Stream } from "effect";
 * import assert from "node:assert/strict";
 *
 * const lines = [
 *   { type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false },
 *   { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
 *   {
 *     type: "user/message", seq: 1, time: 1, surfaceOp: "append",
 *     data: { id: "u1", role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user" } },
 *   },
 * ];
 * const error = Effect.runSync(Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))));
 * assert.equal(error._tag, "SurfaceEventBeforeFirstStep");
 * assert.deepEqual(
 *   error._tag === "SurfaceEventBeforeFirstStep" && [error.line, error.seq, error.type],
 *   [3, 1, "user/message"],
 * );
 * ```
 */
export class SurfaceEventBeforeFirstStep extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly type: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "SurfaceEventBeforeFirstStep" = "SurfaceEventBeforeFirstStep";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: "${this.type}" event "${this.seq}" comes before the first step/start`;
}

/**
 * v2→v3: a `request/header` changes the system prompt while no step is open.
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the header's v2 seq
 *
 * @example A version-2 system prompt set between steps
 * ```ts
 * import { migrate } from "@palimpsest/session/migrations";
 * import { Effect, Stream } from "effect";
 * import assert from "node:assert/strict";
 *
 * const header = (seq: number, system: string) => ({
 *   type: "request/header", seq, time: seq,
 *   data: { header: { config: { provider: "p", model: "m" }, system }, reason: { kind: "step" } },
 * });
 * const lines = [
 *   { type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false },
 *   { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
 *   { type: "step/start", seq: 1, time: 1, data: { turn: 0, step: 0 } },
 *   header(2, "A"),
 *   { type: "step/end", seq: 3, time: 3, data: { turn: 0, step: 0 } },
 *   header(4, "B"),
 * ];
 * const error = Effect.runSync(Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))));
 * assert.equal(error._tag, "PromptChangeOutsideStep");
 * assert.deepEqual(error._tag === "PromptChangeOutsideStep" && [error.line, error.seq], [6, 4]);
 * ```
 */
export class PromptChangeOutsideStep extends Data.Error<{
  readonly line: number;
  readonly seq: number;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "PromptChangeOutsideStep" = "PromptChangeOutsideStep";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: request/header "${this.seq}" changes the system prompt outside a step`;
}

/**
 * v2→v3: a synthetic system message id equals a message id of the log.
 *
 * Fields:
 * - `line`: 1-based JSONL line
 * - `seq`: the v2 seq of the later of the two events
 * - `id`: the colliding id
 *
 * @example A version-2 message that already has the id the migration would give the system message
 * ```ts
 * import { migrate, syntheticSystemId } from "@palimpsest/session/migrations";
 * import { Effect, Stream } from "effect";
 * import assert from "node:assert/strict";
 *
 * // The system message is inserted for the first step/start, seq 1.
 * const id = syntheticSystemId("s", 1);
 * const lines = [
 *   { type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false },
 *   { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
 *   { type: "step/start", seq: 1, time: 1, data: { turn: 0, step: 0 } },
 *   {
 *     type: "user/message", seq: 2, time: 2, surfaceOp: "append",
 *     data: { id, role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user" } },
 *   },
 * ];
 * const error = Effect.runSync(Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))));
 * assert.equal(error._tag, "SyntheticIdCollision");
 * assert.deepEqual(error._tag === "SyntheticIdCollision" && [error.line, error.id], [4, id]);
 * ```
 */
export class SyntheticIdCollision extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly id: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "SyntheticIdCollision" = "SyntheticIdCollision";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: message id "${this.id}" collides with a synthetic system message id`;
}

/**
 * A migrated event failed the v3 rules (decode or fold): the old log was invalid in a way its decoder could not see.
 *
 * Fields:
 * - `line`: 1-based JSONL line of the old event it came from
 * - `seq`: the v3 seq
 * - `tag`: the v3 error tag, e.g. `"ReplaceStartNotOnSurface"`
 * - `error`: the v3 error itself
 *
 * @example Opening a version-2 log whose replace starts off the surface
 * ```ts
 * import { readSessionBytes } from "@palimpsest/session/jsonl";
 * import { catalogMigration } from "@palimpsest/session/migrations";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const log = [
 *   '{"type":"session","version":2,"id":"s","createdAt":0,"isSeeded":false}',
 *   '{"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}',
 *   '{"type":"step/start","seq":1,"time":1,"data":{"turn":0,"step":0}}',
 *   '{"type":"user/message","seq":2,"time":2,"data":{"id":"u1","role":"user","content":[],"source":{"kind":"user"}},' +
 *     '"surfaceOp":{"op":"replace","start":1,"end":1},"sourceEventSeqs":[1]}',
 *   "",
 * ].join("\n");
 * const error = Effect.runSync(Effect.flip(
 *   readSessionBytes(new TextEncoder().encode(log), { migrate: catalogMigration }),
 * ));
 * assert.equal(error._tag, "MigratedEventRejected");
 * assert.deepEqual(
 *   error._tag === "MigratedEventRejected" && [error.line, error.tag],
 *   [4, "ReplaceStartNotOnSurface"],
 * );
 * ```
 */
export class MigratedEventRejected extends Data.Error<{
  readonly line: number;
  readonly seq: number;
  readonly tag: string;
  readonly error: EventDecodeError | SurfaceError;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "MigratedEventRejected" = "MigratedEventRejected";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: migrated event "${this.seq}" fails the v3 rules ("${this.tag}")`;
}

/**
 * The migrated file's path already exists; nothing is overwritten.
 *
 * Fields:
 * - `path`: the existing path
 *
 * @example Migrating to a path that is taken
 * ```ts
 * import { migrateFile } from "@palimpsest/session/migrations";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/s.jsonl`, '{"type":"session","version":2,"id":"s","createdAt":0,"isSeeded":false}\n');
 * Deno.writeTextFileSync(`${dir}/s.v3.jsonl`, "keep me");
 * const error = Effect.runSync(Effect.flip(migrateFile(`${dir}/s.jsonl`)));
 * assert.equal(error._tag, "MigrationTargetExists");
 * assert.equal(error._tag === "MigrationTargetExists" && error.path, `${dir}/s.v3.jsonl`);
 * assert.equal(Deno.readTextFileSync(`${dir}/s.v3.jsonl`), "keep me");
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export class MigrationTargetExists extends Data.Error<{
  readonly path: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "MigrationTargetExists" = "MigrationTargetExists";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Target "${this.path}" already exists; choose another path`;
}

/**
 * Reading the old file or writing the new one failed.
 *
 * Fields:
 * - `path`: the file
 * - `operation`: `"read"`, `"write"`, `"sync"`, `"link"`…
 * - `reason`: the system error code or message
 *
 * @example Migrating a file that does not exist
 * ```ts
 * import { migrateFile } from "@palimpsest/session/migrations";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * const error = Effect.runSync(Effect.flip(migrateFile(`${dir}/missing.jsonl`)));
 * assert.equal(error._tag, "MigrationIoError");
 * assert.deepEqual(
 *   error._tag === "MigrationIoError" && [error.path, error.operation, error.reason],
 *   [`${dir}/missing.jsonl`, "open", "ENOENT"],
 * );
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export class MigrationIoError extends Data.Error<{
  readonly path: string;
  readonly operation: string;
  readonly reason: string;
}> {
  /** The tag `Effect.catchTag` narrows on. */
  readonly _tag: "MigrationIoError" = "MigrationIoError";
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Could not ${this.operation} "${this.path}": ${this.reason}`;
}

/** What a frozen decoder of a released version refuses. */
export type LegacyDecodeError =
  | InvalidLegacyEnvelope
  | UnknownLegacyEventType
  | MissingSurfaceMarker
  | MalformedReplace
  | SurfaceMetadataOnLegacyLogOnly
  | InvalidLegacySourceList
  | InvalidLegacyEventData
  | LegacySeqNotDense;

/** Every refusal of the migration chain and of the file writer (a closed union of tags). */
export type MigrationError =
  | InvalidLegacyHeader
  | FormatTooNew
  | MissingMigrationEdge
  | DuplicateMigrationEdge
  | CorruptLegacyLine
  | InvalidLegacyEnvelope
  | UnknownLegacyEventType
  | MissingSurfaceMarker
  | MalformedReplace
  | SurfaceMetadataOnLegacyLogOnly
  | InvalidLegacySourceList
  | InvalidLegacyEventData
  | LegacySeqNotDense
  | ConsumedChunkReference
  | InvalidChunkCitation
  | SurfaceEventBeforeFirstStep
  | PromptChangeOutsideStep
  | SyntheticIdCollision
  | MigratedEventRejected
  | MigrationTargetExists
  | MigrationIoError;
