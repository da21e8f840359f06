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
import { FormatTooNew } from "../src/jsonl/errors.ts";

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
 * @example Narrowing on the tag
 * ```ts
 * import { MissingMigrationEdge } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new MissingMigrationEdge({ from: 1, to: 3 });
 * assert.equal(error._tag, "MissingMigrationEdge");
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
 * @example Narrowing on the tag
 * ```ts
 * import { DuplicateMigrationEdge } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new DuplicateMigrationEdge({ from: 1 });
 * assert.equal(error._tag, "DuplicateMigrationEdge");
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
 * @example Narrowing on the tag
 * ```ts
 * import { CorruptLegacyLine } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new CorruptLegacyLine({ line: 4, excerpt: "{\"type\":" });
 * assert.equal(error._tag, "CorruptLegacyLine");
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
 * @example Narrowing on the tag
 * ```ts
 * import { MalformedReplace } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new MalformedReplace({ line: 9, seq: 7, version: 2, reason: "startSeq" });
 * assert.equal(error._tag, "MalformedReplace");
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
 * @example Narrowing on the tag
 * ```ts
 * import { SurfaceMetadataOnLegacyLogOnly } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new SurfaceMetadataOnLegacyLogOnly({ line: 2, seq: 0, version: 1, type: "turn/start" });
 * assert.equal(error._tag, "SurfaceMetadataOnLegacyLogOnly");
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
 * @example Narrowing on the tag
 * ```ts
 * import { InvalidLegacySourceList } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new InvalidLegacySourceList({ line: 5, seq: 3, version: 2, reason: "duplicate" });
 * assert.equal(error._tag, "InvalidLegacySourceList");
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
 * @example Narrowing on the tag
 * ```ts
 * import { InvalidLegacyEventData } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new InvalidLegacyEventData({ line: 4, seq: 2, version: 1, type: "turn/start", path: "turn", issue: "expected a non-negative integer" });
 * assert.equal(error._tag, "InvalidLegacyEventData");
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
 * @example Narrowing on the tag
 * ```ts
 * import { ConsumedChunkReference } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new ConsumedChunkReference({ line: 7, seq: 5, chunkSeq: 2, via: "sourceEventSeqs" });
 * assert.equal(error._tag, "ConsumedChunkReference");
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
 * @example Narrowing on the tag
 * ```ts
 * import { InvalidChunkCitation } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new InvalidChunkCitation({ line: 6, seq: 4, source: 1, reason: "not-a-chunk" });
 * assert.equal(error._tag, "InvalidChunkCitation");
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
 * @example Narrowing on the tag
 * ```ts
 * import { SurfaceEventBeforeFirstStep } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new SurfaceEventBeforeFirstStep({ line: 2, seq: 0, type: "user/message" });
 * assert.equal(error._tag, "SurfaceEventBeforeFirstStep");
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
 * @example Narrowing on the tag
 * ```ts
 * import { PromptChangeOutsideStep } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new PromptChangeOutsideStep({ line: 2, seq: 0 });
 * assert.equal(error._tag, "PromptChangeOutsideStep");
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
 * @example Narrowing on the tag
 * ```ts
 * import { SyntheticIdCollision } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new SyntheticIdCollision({ line: 8, seq: 6, id: "migrated-system-0123456789abcdef" });
 * assert.equal(error._tag, "SyntheticIdCollision");
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
 * @example Narrowing on the tag
 * ```ts
 * import { MigratedEventRejected } from "@palimpsest/session/migrations";
 * import { decodeEventResult } from "../src/decode.ts";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const decoded = decodeEventResult({ type: "nope", seq: 0, time: 0, data: {} });
 * assert.ok(Result.isFailure(decoded));
 * const error = new MigratedEventRejected({ line: 2, seq: 0, tag: decoded.failure._tag, error: decoded.failure });
 * assert.equal(error.tag, "UnknownEventType");
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
 * @example Narrowing on the tag
 * ```ts
 * import { MigrationTargetExists } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new MigrationTargetExists({ path: "/tmp/s.v3.jsonl" });
 * assert.equal(error._tag, "MigrationTargetExists");
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
 * @example Narrowing on the tag
 * ```ts
 * import { MigrationIoError } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const error = new MigrationIoError({ path: "/tmp/s.jsonl", operation: "read", reason: "ENOENT" });
 * assert.equal(error._tag, "MigrationIoError");
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
