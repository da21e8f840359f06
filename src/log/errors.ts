/**
 * The tagged errors of reading a JSONL log: a line that does not parse or
 * decode, a fold failure, a missing or too new header. A failed file call is
 * `FileIoError`, in `src/fs/errors.ts`.
 *
 * Reading errors name the 1-based line (the header is line 1) and, for a
 * line that does not parse or decode, the inner error that says why. The
 * store's own errors, which name a session rather than a file, live in
 * `src/store/errors.ts`. Messages are for people; callers narrow on `_tag`
 * and fields. This module owns the errors, not the checks.
 *
 * @module
 */
import type { EventDecodeError, SurfaceError } from "../core/errors.ts";
import { quote } from "../core/quote.ts";
import {
  type TaggedErrorBases,
  taggedErrorBases,
} from "../core/tagged_error.ts";

// The tags, each once; every class below extends the base of its tag.
const Tagged: TaggedErrorBases<
  | "InvalidJson"
  | "TooManyContainers"
  | "InvalidUtf8"
  | "InvalidSourceRange"
  | "InvalidHeader"
  | "CorruptLine"
  | "FoldFailed"
  | "LineTooLong"
  | "MissingHeader"
  | "FormatTooNew"
  | "FormatTooOld"
> = taggedErrorBases();

// ---------------------------------------------------------------------------
// Inner errors of one line

/** A line is not JSON. */
export class InvalidJson extends Tagged.InvalidJson<{
  /** What the JSON parser said. */
  readonly problem: string;
}> {
  /** A sentence for people. */
  override readonly message: string =
    `Expected a JSON value but the parser said ${quote(this.problem)}`;
}

/**
 * A long line holds more arrays and objects than its length justifies:
 * parsed, each costs far more memory than the two bytes `[]` take, so the
 * reader counts them before parsing a line longer than 64 KiB and refuses
 * more than one per 16 characters.
 */
export class TooManyContainers extends Tagged.TooManyContainers<{
  /** Arrays and objects counted when the limit was passed. */
  readonly containers: number;
  /** The line's length in characters. */
  readonly length: number;
  /** The most the line may hold. */
  readonly limit: number;
}> {
  /** A sentence for people. */
  override readonly message: string = `Expected a line of ${
    quote(this.length)
  } characters to hold at most ${
    quote(this.limit)
  } arrays and objects but found more`;
}

/** A line is not valid UTF-8. */
export class InvalidUtf8 extends Tagged.InvalidUtf8<{
  /** How many bytes the line has. */
  readonly bytes: number;
}> {
  /** A sentence for people. */
  override readonly message: string = `Expected the line of ${
    quote(this.bytes)
  } bytes to be UTF-8 text`;
}

/** Why an on-disk `[start, end]` source range is refused. */
export type SourceRangeProblem =
  | "not-a-pair"
  | "not-a-seq"
  | "inverted"
  | "not-increasing"
  | "not-earlier"
  | "too-many";

/**
 * An on-disk `[start, end]` run in `sourceEventSeqs` is malformed: not two
 * seqs, `start > end`, not in increasing order with its neighbours, not
 * earlier than the event, or expanding to more seqs than the reader allows
 * (more than the events before the line, or past the log's budget).
 */
export class InvalidSourceRange extends Tagged.InvalidSourceRange<{
  /** The event seq, when readable. */
  readonly seq: number | undefined;
  /** The index of the element in the stored list. */
  readonly index: number;
  /** The stored element. */
  readonly value: unknown;
  /** What is wrong. */
  readonly problem: SourceRangeProblem;
}> {
  /** A sentence for people. */
  override readonly message: string = {
    "not-a-pair":
      `Expected sourceEventSeqs[${this.index}] to be a seq or a [start, end] pair but found ${
        quote(this.value)
      }`,
    "not-a-seq":
      `Expected both ends of sourceEventSeqs[${this.index}] to be seqs but found ${
        quote(this.value)
      }`,
    "inverted": `Expected the range sourceEventSeqs[${this.index}] ${
      quote(this.value)
    } to have start <= end`,
    "not-increasing":
      `Expected a source list holding ranges to be increasing but sourceEventSeqs[${this.index}] ${
        quote(this.value)
      } is not`,
    "not-earlier": `Expected the range sourceEventSeqs[${this.index}] ${
      quote(this.value)
    } to end before the event's seq ${quote(this.seq)}`,
    "too-many": `Expected the ranges up to sourceEventSeqs[${this.index}] ${
      quote(this.value)
    } to expand to no more seqs than the events before the line`,
  }[this.problem];
}

/** Why a header line is refused. */
export type HeaderProblem =
  | "not-an-object"
  | "not-a-session"
  | "invalid-version"
  | "unknown-key"
  | "invalid-field";

/** Line 1 is JSON but not a session header. */
export class InvalidHeader extends Tagged.InvalidHeader<{
  /** What is wrong. */
  readonly problem: HeaderProblem;
  /** The offending key, when one is. */
  readonly key: string | undefined;
  /** The offending value. */
  readonly value: unknown;
}> {
  /** A sentence for people. */
  override readonly message: string = {
    "not-an-object": `Expected the header to be a JSON object but found ${
      quote(this.value)
    }`,
    "not-a-session": `Expected the header type to be "session" but found ${
      quote(this.value)
    }`,
    "invalid-version":
      `Expected the header version to be a non-negative integer but found ${
        quote(this.value)
      }`,
    "unknown-key": `Expected only header keys but found ${quote(this.key)}`,
    "invalid-field": `Invalid header field ${quote(this.key)}: ${
      quote(this.value)
    }`,
  }[this.problem];
}

/** Everything that can be wrong with one complete line. */
export type LineError =
  | InvalidJson
  | TooManyContainers
  | InvalidUtf8
  | InvalidHeader
  | InvalidSourceRange
  | EventDecodeError;

// ---------------------------------------------------------------------------
// Reading a log

/**
 * A complete line does not parse or decode. Nothing after it is served
 * silently: a strict read fails, a recovering read stops before it.
 */
export class CorruptLine extends Tagged.CorruptLine<{
  /** The 1-based line number; the header is line 1. */
  readonly line: number;
  /** The start of the line, for people. */
  readonly excerpt: string;
  /** The inner error's tag. */
  readonly innerTag: LineError["_tag"];
  /** The inner error. */
  readonly inner: LineError;
}> {
  /** A sentence for people. */
  override readonly message: string = `Line ${this.line} is corrupt (${
    quote(this.innerTag)
  }): ${this.inner.message}; line starts ${quote(this.excerpt)}`;
}

/** A decoded event breaks a relational rule of the fold. */
export class FoldFailed extends Tagged.FoldFailed<{
  /** The 1-based line number of the event. */
  readonly line: number;
  /** The event's seq. */
  readonly seq: number;
  /** The inner error's tag. */
  readonly innerTag: SurfaceError["_tag"];
  /** The inner error. */
  readonly inner: SurfaceError;
}> {
  /** A sentence for people. */
  override readonly message: string = `The event on line ${this.line} (seq ${
    quote(this.seq)
  }) breaks ${quote(this.innerTag)}: ${this.inner.message}`;
}

/** A line is longer than the reader's limit. */
export class LineTooLong extends Tagged.LineTooLong<{
  /** The 1-based line number. */
  readonly line: number;
  /** The byte offset where the line starts. */
  readonly offset: number;
  /** The limit, in bytes. */
  readonly limit: number;
}> {
  /** A sentence for people. */
  override readonly message: string = `Line ${this.line} at byte ${
    quote(this.offset)
  } is longer than ${
    quote(this.limit)
  } bytes; raise maxLineBytes if the log is trusted`;
}

/** The file has no complete header line (it is empty or torn before it). */
export class MissingHeader extends Tagged.MissingHeader<{
  /** How many bytes the file has. */
  readonly bytes: number;
}> {
  /** A sentence for people. */
  override readonly message: string =
    `Expected a session header line but the file has ${
      quote(this.bytes)
    } bytes and no complete line`;
}

/**
 * The header names a format version newer than this library reads: one
 * error for the reader, the store and the migration chain.
 *
 * @example Reading a log of a newer version
 * ```ts
 * import { readSessionBytes } from "@palimpsest/session/jsonl";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const log = '{"type":"session","version":99,"id":"s","createdAt":0,"isSeeded":false}\n';
 * const error = Effect.runSync(Effect.flip(readSessionBytes(new TextEncoder().encode(log))));
 * assert.equal(error._tag, "FormatTooNew");
 * assert.deepEqual(error._tag === "FormatTooNew" && [error.line, error.version], [1, 99]);
 * ```
 */
export class FormatTooNew extends Tagged.FormatTooNew<{
  /** The 1-based line of the header (always 1). */
  readonly line: number;
  /** The file's version. */
  readonly version: number;
  /** The newest version this library reads. */
  readonly supported: number;
}> {
  /** A sentence for people. */
  override readonly message: string = `The log has format version ${
    quote(this.version)
  } but this library reads up to ${
    quote(this.supported)
  }; upgrade @palimpsest/session`;
}

/** The header's version is older and no migration was supplied. */
export class FormatTooOld extends Tagged.FormatTooOld<{
  /** The file's version. */
  readonly version: number;
  /** The version this library reads natively. */
  readonly supported: number;
}> {
  /** A sentence for people. */
  override readonly message: string = `The log has format version ${
    quote(this.version)
  } but only ${quote(this.supported)} is read natively; pass a migration`;
}

/** Every error of reading a log file's content. */
export type LogReadError =
  | CorruptLine
  | FoldFailed
  | LineTooLong
  | MissingHeader
  | FormatTooNew
  | FormatTooOld;
