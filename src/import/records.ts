/**
 * The loop every JSON-lines importer runs over its source: each record's
 * kind is counted, the format's `before` rule may settle the record (a line
 * skipped on purpose, a branch left out), and the rest go to the handler of
 * their type in the format's table; a type with no handler is reported as
 * unknown and the import goes on. Types a format leaves out on purpose are
 * handlers made by {@link skipping}.
 *
 * A type is looked up among the table's own keys only, so a record whose
 * type is `constructor` or `__proto__` is an unknown type like any other.
 *
 * A file in which no record is of the format (as `sessionFormatOf` tells
 * them) is refused, as another tool's when it looks like one
 * ({@link notThisFormat}): never imported as an empty session.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import { type Builder, ok, type Step } from "./builder.ts";
import { count, notAnObject, skip, unknownType } from "./notes.ts";
import { isRecord } from "./values.ts";
import {
  type ImportError,
  ImportNotASession,
  ImportNotThisFormat,
} from "./errors.ts";
import type { Converted, Importer, SourceTool } from "./importer.ts";
import {
  formatLabel,
  type SessionFormat,
  sessionFormatOf,
  sniffSessionFormat,
} from "./sniff.ts";
import {
  forEachRecord,
  type RecordReadOptions,
  type RecordReadSummary,
} from "./lines.ts";

/** What a record handler gives: nothing, or the refusal that stops the import. */
export type Handled = Result.Result<void, ImportError>;

/** The handler of one record type: the record, its line and its kind. */
export type RecordHandler = (
  value: Record<string, unknown>,
  line: number,
  kind: string,
) => Handled;

/** How a format's records are told apart and handled. */
export interface RecordTable {
  /** What names a record's type in the report: "line type", "entry type". */
  readonly what: string;
  /**
   * A record's type (the key of {@link handlers}) and its kind (the type
   * with what refines it, as the report counts it).
   */
  readonly kindOf: (
    value: Record<string, unknown>,
  ) => { readonly type: string; readonly kind: string };
  /**
   * Runs on every record once counted, before its handler: `undefined` to
   * go on to the handler, or the record's outcome when the format's own
   * rules settle it.
   */
  readonly before?: (
    value: Record<string, unknown>,
    line: number,
    kind: string,
    type: string,
  ) => Handled | undefined;
  /** The handler of each type. */
  readonly handlers: Readonly<Record<string, RecordHandler>>;
}

/**
 * The value of `key` in `table` when `table` has it as its own property.
 *
 * @param table A lookup table written as an object literal.
 * @param key A key read from a source file.
 * @returns The value, or `undefined`.
 */
export const own = <A>(
  table: Readonly<Record<string, A>>,
  key: string,
): A | undefined => Object.hasOwn(table, key) ? table[key] : undefined;

/**
 * A handler that skips its records on purpose, for `reason`.
 *
 * @param b The builder.
 * @param reason Why the format's records of that type are left out.
 * @returns The handler.
 */
export const skipping =
  (b: Builder, reason: string): RecordHandler => (_value, line, kind) => {
    skip(b, kind, line, reason);
    return ok;
  };

/**
 * Counts one record and hands it to its handler (see the module doc).
 *
 * @param b The builder.
 * @param table The format's table.
 * @param value The record.
 * @param line Its 1-based line.
 * @returns The handler's outcome.
 */
export const handleRecord = (
  b: Builder,
  table: RecordTable,
  value: Record<string, unknown>,
  line: number,
): Handled => {
  const { type, kind } = table.kindOf(value);
  count(b, kind);
  const settled = table.before?.(value, line, kind, type);
  if (settled !== undefined) return settled;
  const handler = own(table.handlers, type);
  return handler === undefined
    ? unknownType(b, line, kind, table.what, type)
    : handler(value, line, kind);
};

/**
 * The refusal of a file in which no record is of `from`'s format: that it
 * is not of this format, when it looks like another (`seen` among its
 * records, else sniffed from its start); else `otherwise`.
 *
 * @param file The path.
 * @param from The tool the file is read as.
 * @param seen The first other format among the records read, if any.
 * @param otherwise The refusal when the file looks like no other format.
 * @returns The refusal.
 */
export const notThisFormat = <E>(
  file: string,
  from: SourceTool,
  seen: SessionFormat | undefined,
  otherwise: E,
): ImportNotThisFormat | E => {
  const looksLike = seen ?? sniffSessionFormat(file);
  return looksLike === undefined || looksLike === from
    ? otherwise
    : new ImportNotThisFormat({ file, from, looksLike });
};

/**
 * Reads a JSON-lines source whose every record is handled by `table`: a
 * record that is not an object is reported and passed over. A file with no
 * record of `from`'s format (as {@link sessionFormatOf} tells them) is
 * refused: as not of this format when it looks like another
 * ({@link notThisFormat}, also when a line that is not JSON stops the read
 * before any record of the format), else as no session of `from`.
 *
 * @param b The builder.
 * @param from The tool the file is read as.
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param table The format's table.
 * @returns The pass summary, or the first refusal.
 */
export const forEachLine = (
  b: Builder,
  from: SourceTool,
  file: string,
  options: RecordReadOptions,
  table: RecordTable,
): Result.Result<RecordReadSummary, ImportError> => {
  let records = 0;
  let own = 0;
  let other: SessionFormat | undefined;
  const read = forEachRecord(file, options, (value, line) => {
    records += 1;
    const format = sessionFormatOf(value);
    if (format === from) own += 1;
    else other ??= format;
    if (!isRecord(value)) {
      notAnObject(b, line);
      return ok;
    }
    return handleRecord(b, table, value, line);
  });
  if (own > 0) return read;
  if (Result.isFailure(read)) {
    const failure = read.failure;
    return Result.fail(
      failure._tag === "ImportLineNotJson" ||
        failure._tag === "ImportLineTooLong"
        ? notThisFormat(file, from, other, failure)
        : failure,
    );
  }
  return Result.fail(
    notThisFormat(
      file,
      from,
      other,
      new ImportNotASession({
        from,
        line: 1,
        expected: records === 0
          ? "a JSON record"
          : `${formatLabel(from)}'s record (no line of the file is one)`,
      }),
    ),
  );
};

/**
 * A line-by-line importer (Claude Code, Codex) as its steps over its state
 * `S`; {@link lineImporter} runs them.
 */
export interface LineImport<S> {
  /** The tool the file is read as. */
  readonly from: SourceTool;
  /** The text of the closers of calls the source never answered. */
  readonly closerText?: string;
  /** The import's state over the builder. */
  readonly state: (b: Builder) => S;
  /** The format's table, over the state. */
  readonly lines: (s: S) => RecordTable;
  /** The steps after the last line: what the source left open. */
  readonly end: (s: S) => Step;
  /** The header and report, from the pass summary. */
  readonly converted: (
    s: S,
    file: string,
    read: RecordReadSummary,
  ) => Converted;
}

/**
 * The importer of a line-by-line format: every record through its table
 * ({@link forEachLine}), then its end steps, then its header and report;
 * the first refusal stops it.
 *
 * @param steps The format's steps.
 * @returns The importer.
 */
export const lineImporter =
  <S>(steps: LineImport<S>): Importer => (file, options, b) => {
    if (steps.closerText !== undefined) b.closerText = steps.closerText;
    const s = steps.state(b);
    const read = forEachLine(b, steps.from, file, options, steps.lines(s));
    if (Result.isFailure(read)) return Result.fail(read.failure);
    const ended = steps.end(s);
    if (Result.isFailure(ended)) return Result.fail(ended.failure);
    return Result.succeed(steps.converted(s, file, read.success));
  };
