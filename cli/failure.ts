/**
 * Turning the library's tagged errors into what the command line reports:
 * the rule's tag, the line, the seq, the error's own message and a hint of
 * what to do next.
 *
 * Reader errors wrap the rule that broke (`CorruptLine` holds an
 * `InvalidEventData`, `FoldFailed` a `ShadowedNodeNotCited`, a migration's
 * `MigratedEventRejected` the v3 rule): the report names the innermost tag,
 * because that is the rule a person has to look up, and the outermost line.
 *
 * @module
 */
import * as Predicate from "effect/Predicate";

/** An object's fields, as `Predicate.isObject` narrows it. */
type Fields = { readonly [x: PropertyKey]: unknown };

/** One failure, as the CLI reports it (`error` of `verify --json`). */
export interface FailureReport {
  /** The tag of the rule that broke. */
  readonly tag: string;
  /** The 1-based line of the file, when known (the header is line 1). */
  readonly line?: number;
  /** The event's seq, when known. */
  readonly seq?: number;
  /** A sentence for people. */
  readonly message: string;
}

const tagOf = (u: Fields): string | undefined =>
  typeof u["_tag"] === "string" ? u["_tag"] : undefined;

const innerOf = (u: Fields): unknown => {
  for (const key of ["inner", "error"]) {
    const value = u[key];
    if (Predicate.isObject(value) && tagOf(value) !== undefined) return value;
  }
  return undefined;
};

const seqOf = (u: Fields): number | undefined => {
  const seq = u["seq"];
  return typeof seq === "number" && Number.isSafeInteger(seq) && seq >= 0
    ? seq
    : undefined;
};

/**
 * Describes a failure: innermost tag, outermost line, the first seq found.
 *
 * @param error A tagged error of the library, or anything thrown.
 * @returns The report.
 */
export function describeFailure(error: unknown): FailureReport {
  if (!Predicate.isObject(error)) {
    return { tag: "UnknownError", message: String(error) };
  }
  let tag = tagOf(error) ?? "UnknownError";
  let line: number | undefined;
  let seq: number | undefined;
  const message = typeof error["message"] === "string" ? error["message"] : tag;
  let current: unknown = error;
  while (Predicate.isObject(current)) {
    tag = tagOf(current) ?? tag;
    const l = current["line"];
    if (line === undefined && typeof l === "number") line = l;
    seq ??= seqOf(current);
    current = innerOf(current);
  }
  if (line === undefined && tag === "FormatTooNew") line = 1;
  return {
    tag,
    ...(line === undefined ? {} : { line }),
    ...(seq === undefined ? {} : { seq }),
    message,
  };
}

const hints: Readonly<Record<string, string>> = {
  FormatTooNew:
    "this log was written by a newer version; upgrade @palimpsest/session to read it",
  FormatTooOld:
    'this log has an older format; run "migrate FILE --out NEW" to write a current copy',
  MissingHeader:
    "the file is empty or torn before its header; it is not a session log",
  InvalidHeader:
    "line 1 must be the session header; check that this is a session log",
  InvalidLegacyHeader:
    "line 1 must be the session header; check that this is a session log",
  InvalidJson:
    "the line is not JSON: the file was damaged; keep a copy and cut the log before that line",
  InvalidUtf8:
    "the line is not UTF-8: the file was damaged; keep a copy and cut the log before that line",
  LineTooLong:
    "a line is longer than the reader accepts; check that this is a session log",
  NonContiguousSeq:
    "events must be numbered densely; a line was lost or duplicated before this one",
  JsonlIoError: "check the path and its permissions",
  StorageError: "check the path and its permissions",
  AppendOutcomeUnknown:
    "the last write may or may not be stored; run verify to see what the session holds",
  WriterClaimLost:
    "the writer lost its claim on the session (its connection broke); run the command again",
  MigrationIoError: "check the path and its permissions",
  MigrationTargetExists:
    "the target already exists and is never overwritten; choose another --out",
  SessionLocked:
    "another process is writing this session; stop it or wait, then try again",
  ViewIoError: "check the path and its permissions",
  ViewTargetExists:
    "the page already exists; choose another --out, or pass --force to replace it",
};

/**
 * What to do about a failure, for text output.
 *
 * @param report The failure.
 * @returns One sentence.
 */
export function hintFor(report: FailureReport): string {
  const hint = hints[report.tag];
  if (hint !== undefined) return hint;
  const where = report.line === undefined ? "" : ` on line ${report.line}`;
  return `the event${where} breaks the "${report.tag}" rule of the format (SPEC §2); fix or cut the log before it`;
}

/**
 * A failure as readable text: where, which rule, the error's message and
 * what to do.
 *
 * @param file The file the failure is about.
 * @param report The failure.
 * @returns Lines ending with a newline.
 */
export function failureText(file: string, report: FailureReport): string {
  const where = [
    report.line === undefined ? undefined : `line ${report.line}`,
    report.seq === undefined ? undefined : `seq ${report.seq}`,
  ].filter((part) => part !== undefined).join(", ");
  return [
    `error: ${file}${where === "" ? "" : ` (${where})`}: ${report.tag}`,
    `  ${report.message}`,
    `  hint: ${hintFor(report)}`,
    "",
  ].join("\n");
}
