/**
 * Every refusal of the migration chain, one class per reason.
 *
 * Each error has a literal `_tag` (so `Effect.catchTag` narrows it) and carries the position as
 * fields: `line` is the 1-based JSONL line (the header is line 1) and `seq` the event's seq in the
 * version that refused it. Message text is for people and is not the contract.
 * `tests/migrations/errors_test.ts` provokes each one through the public API.
 *
 * @example Narrowing a catalog's refusal by its tag
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
 *
 * @module
 */
import type { EventDecodeError, SurfaceError } from "../src/core/errors.ts";
import { FormatTooNew } from "../src/log/errors.ts";
import type { FileIoError, TargetExists } from "../src/fs/errors.ts";
import {
  type TaggedErrorBases,
  taggedErrorBases,
} from "../src/core/tagged_error.ts";

// The tags, each once; every class below extends the base of its tag.
const Tagged: TaggedErrorBases<
  | "InvalidLegacyHeader"
  | "MissingMigrationEdge"
  | "DuplicateMigrationEdge"
  | "CorruptLegacyLine"
  | "InvalidLegacyEnvelope"
  | "UnknownLegacyEventType"
  | "MissingSurfaceMarker"
  | "MalformedReplace"
  | "SurfaceMetadataOnLegacyLogOnly"
  | "InvalidLegacySourceList"
  | "InvalidLegacyEventData"
  | "LegacySeqNotDense"
  | "ConsumedChunkReference"
  | "InvalidChunkCitation"
  | "SurfaceEventBeforeFirstStep"
  | "PromptChangeOutsideStep"
  | "SyntheticIdCollision"
  | "MigratedEventRejected"
> = taggedErrorBases();

/** The header names a newer format version: the reader's own error. */
export { FormatTooNew };

/**
 * The first line of an old log is not a session header of a released version.
 *
 * Fields:
 * - `line`: 1-based JSONL line (the header is line 1)
 * - `reason`: what is wrong, e.g. `"id"`
 */
export class InvalidLegacyHeader extends Tagged.InvalidLegacyHeader<{
  readonly line: number;
  readonly reason: string;
}> {
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
 */
export class MissingMigrationEdge extends Tagged.MissingMigrationEdge<{
  readonly from: number;
  readonly to: number;
}> {
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `No migration edge from version "${this.from}" towards version "${this.to}"; register the missing edge`;
}

/**
 * A catalog was built with two edges leaving the same version.
 *
 * Fields:
 * - `from`: the version two edges convert from
 */
export class DuplicateMigrationEdge extends Tagged.DuplicateMigrationEdge<{
  readonly from: number;
}> {
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
 */
export class CorruptLegacyLine extends Tagged.CorruptLegacyLine<{
  readonly line: number;
  readonly excerpt: string;
}> {
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
 */
export class InvalidLegacyEnvelope extends Tagged.InvalidLegacyEnvelope<{
  readonly line: number;
  readonly seq: number | undefined;
  readonly version: number;
  readonly reason: string;
}> {
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
 */
export class UnknownLegacyEventType extends Tagged.UnknownLegacyEventType<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly type: string;
}> {
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
 */
export class MissingSurfaceMarker extends Tagged.MissingSurfaceMarker<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly type: string;
}> {
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
 */
export class MalformedReplace extends Tagged.MalformedReplace<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly reason: string;
}> {
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
 */
export class SurfaceMetadataOnLegacyLogOnly
  extends Tagged.SurfaceMetadataOnLegacyLogOnly<{
    readonly line: number;
    readonly seq: number;
    readonly version: number;
    readonly type: string;
  }> {
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
 */
export class InvalidLegacySourceList extends Tagged.InvalidLegacySourceList<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly reason: string;
}> {
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
 */
export class InvalidLegacyEventData extends Tagged.InvalidLegacyEventData<{
  readonly line: number;
  readonly seq: number;
  readonly version: number;
  readonly type: string;
  readonly path: string;
  readonly issue: string;
}> {
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
 */
export class LegacySeqNotDense extends Tagged.LegacySeqNotDense<{
  readonly line: number;
  readonly version: number;
  readonly expected: number;
  readonly actual: number;
}> {
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
 */
export class ConsumedChunkReference extends Tagged.ConsumedChunkReference<{
  readonly line: number;
  readonly seq: number;
  readonly chunkSeq: number;
  readonly via: "sourceEventSeqs" | "surfaceOp" | "shadowedSeqs";
}> {
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
 */
export class InvalidChunkCitation extends Tagged.InvalidChunkCitation<{
  readonly line: number;
  readonly seq: number;
  readonly source: number;
  readonly reason: "not-a-chunk" | "out-of-order";
}> {
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
 */
export class SurfaceEventBeforeFirstStep
  extends Tagged.SurfaceEventBeforeFirstStep<{
    readonly line: number;
    readonly seq: number;
    readonly type: string;
  }> {
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
 */
export class PromptChangeOutsideStep extends Tagged.PromptChangeOutsideStep<{
  readonly line: number;
  readonly seq: number;
}> {
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
 */
export class SyntheticIdCollision extends Tagged.SyntheticIdCollision<{
  readonly line: number;
  readonly seq: number;
  readonly id: string;
}> {
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
 */
export class MigratedEventRejected extends Tagged.MigratedEventRejected<{
  readonly line: number;
  readonly seq: number;
  readonly tag: string;
  readonly error: EventDecodeError | SurfaceError;
}> {
  /** A sentence for people; not the contract. */
  override readonly message: string =
    `Line ${this.line}: migrated event "${this.seq}" fails the v3 rules ("${this.tag}")`;
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
  | TargetExists
  | FileIoError;
