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
import {
  EVENT_DECODE_ERROR_TAGS,
  SURFACE_ERROR_TAGS,
} from "@palimpsest/session/schema";
import { redactAddress } from "../src/store/redact.ts";

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

/**
 * What a failure is about, which decides its hint:
 *
 * - `permission`: Deno refused a permission; the hint names the flag;
 * - `authentication`: the server refused the user or password;
 * - `unreachable`: no server answered at the address's host and port;
 * - `location`: where the session is (a missing or existing session, a bad
 *   address, id, path or target name);
 * - `io`: the storage failed while it was being used;
 * - `format`: the log breaks a rule of the format (docs/format.md);
 * - `other`: anything else (a writer's claim, a refused target, a bug).
 */
export type FailureKind =
  | "permission"
  | "authentication"
  | "unreachable"
  | "location"
  | "io"
  | "format"
  | "other";

/** Tags of the errors about where a session is. */
const LOCATION_TAGS: ReadonlySet<string> = new Set([
  "SessionNotFound",
  "SessionAlreadyExists",
  "InvalidAddress",
  "InvalidSessionId",
  "CopyTargetName",
  "FileIoError",
]);

/** Wrappers of a rule that broke: their inner error is a format rule. */
const RULE_WRAPPERS: ReadonlySet<string> = new Set([
  "CorruptLine",
  "CorruptLegacyLine",
  "FoldFailed",
  "MigratedEventRejected",
  "ImportEventRejected",
]);

/** The rules of the format (docs/format.md, The rules and their errors) and of reading a log. */
const RULE_TAGS: ReadonlySet<string> = new Set([
  ...EVENT_DECODE_ERROR_TAGS,
  ...SURFACE_ERROR_TAGS,
  "FormatTooNew",
  "FormatTooOld",
  "MissingHeader",
  "InvalidHeader",
  "InvalidLegacyHeader",
  "InvalidJson",
  "InvalidUtf8",
  "LineTooLong",
]);

/** SQL states of a refused login (invalid password, authorization). */
const AUTH_STATES: ReadonlySet<string> = new Set(["28P01", "28000"]);

/** What the driver says when the address lacks what a login needs. */
const LOGIN_MESSAGE = /no username configured|SASL|password authentication/i;

/** The SQL state of a database the server does not have. */
const NO_DATABASE = "3D000";

/** Codes of a server that is not there (refused, unknown host, timeout). */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "ConnectionRefused",
]);

/** Every error in a failure's chain: itself, its cause, reason, inner... */
const chainOf = (error: unknown): ReadonlyArray<Fields> => {
  const out: Fields[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && out.length < 32) {
    const current = queue.shift();
    if (!Predicate.isObject(current) || out.includes(current)) continue;
    out.push(current);
    for (const key of ["cause", "reason", "error", "inner", "errors"]) {
      const next = current[key];
      if (Array.isArray(next)) queue.push(...next);
      else queue.push(next);
    }
  }
  return out;
};

const textOf = (u: Fields, key: string): string | undefined =>
  typeof u[key] === "string" ? u[key] : undefined;

/** The Deno flag a permission refusal names, e.g. `--allow-net`. */
const refusedFlag = (chain: ReadonlyArray<Fields>): string | undefined => {
  for (const error of chain) {
    const name = textOf(error, "name");
    const refused = name === "NotCapable" || name === "PermissionDenied" ||
      (typeof Deno !== "undefined" &&
        (error instanceof Deno.errors.NotCapable ||
          error instanceof Deno.errors.PermissionDenied));
    if (!refused) continue;
    const flag = /--allow-[a-z-]+/.exec(textOf(error, "message") ?? "");
    return flag === null ? "-A" : flag[0];
  }
  return undefined;
};

const codesOf = (chain: ReadonlyArray<Fields>): ReadonlyArray<string> =>
  chain.flatMap((error) =>
    ["code", "_tag", "name", "reason"].flatMap((key) => {
      const value = textOf(error, key);
      return value === undefined ? [] : [value];
    })
  );

/**
 * What a failure is about; see {@link FailureKind}.
 *
 * @param error A tagged error of the library, or anything thrown.
 * @returns Its kind.
 */
export function failureKind(error: unknown): FailureKind {
  const chain = chainOf(error);
  if (refusedFlag(chain) !== undefined) return "permission";
  const codes = codesOf(chain);
  if (
    codes.some((code) => AUTH_STATES.has(code)) ||
    chain.some((e) => LOGIN_MESSAGE.test(textOf(e, "message") ?? ""))
  ) return "authentication";
  if (codes.some((code) => UNREACHABLE_CODES.has(code))) return "unreachable";
  if (codes.includes(NO_DATABASE)) return "location";
  const tags = chain.flatMap((e) => {
    const tag = tagOf(e);
    return tag === undefined ? [] : [tag];
  });
  if (tags.some((tag) => RULE_WRAPPERS.has(tag))) return "format";
  const tag = describeFailure(error).tag;
  if (RULE_TAGS.has(tag)) return "format";
  if (LOCATION_TAGS.has(tag)) return "location";
  if (tag === "StorageError") {
    const inner = chain.find((e) => tagOf(e) === "FileIoError");
    return inner !== undefined ? "location" : "io";
  }
  return "other";
}

/** Hints of the rules of reading a log, by tag. */
const formatHints: Readonly<Record<string, string>> = {
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
};

/** Hints of the errors about where a session is, by tag. */
const locationHints: Readonly<Record<string, string>> = {
  SessionNotFound:
    "no session has this id there; check the id, path or address, or create the session first",
  SessionAlreadyExists:
    "a session with this id is already there and is never replaced; choose another id or destination",
  InvalidAddress:
    "write the address as postgres://user:password@host:port/db?session=ID, with @ : / ? # % in the password percent-encoded",
  InvalidSessionId: "choose a non-empty session id of at most 200 bytes",
  CopyTargetName:
    "name an existing folder or a session file name (ID.jsonl) as the destination",
};

/** Hints of the other errors, by tag. */
const otherHints: Readonly<Record<string, string>> = {
  AppendOutcomeUnknown:
    "the last write may or may not be stored; run verify to see what the session holds",
  WriterClaimLost:
    "the writer lost its claim on the session (its connection broke); run the command again",
  TargetExists:
    "the target already exists and is never overwritten; choose another --out",
  SessionLocked:
    "another process is writing this session; stop it or wait, then try again",
  ImportNotASession:
    "check that --from names the tool that wrote FILE, and that FILE is one of its sessions",
  CompactionNotFound:
    "run dropped FILE without COMPACTION to list the log's compactions",
};

/** The hint of a missing path, or of one the process may not use. */
const pathHint = (chain: ReadonlyArray<Fields>): string => {
  const codes = codesOf(chain);
  if (codes.includes("ENOENT") || codes.includes("NotFound")) {
    return "no such file or folder; check the path, or create it first";
  }
  if (codes.some((c) => c === "EACCES" || c === "EPERM")) {
    return "the system refused access; check the path's permissions";
  }
  return "check the path and its permissions";
};

/**
 * What to do about a failure, for text output: a hint that fits its
 * {@link failureKind}.
 *
 * @param error A tagged error of the library, or anything thrown.
 * @returns One sentence.
 */
export function failureHint(error: unknown): string {
  const report = describeFailure(error);
  const chain = chainOf(error);
  switch (failureKind(error)) {
    case "permission":
      return `Deno refused a permission: run with ${
        refusedFlag(chain)
      } (deno task cli grants every permission the commands need)`;
    case "authentication":
      return "the server refused the login: check the user and password of the address";
    case "unreachable":
      return "no server answered: check the host and port of the address, and that the server runs";
    case "location":
      if (codesOf(chain).includes(NO_DATABASE)) {
        return "the server has no such database; check the database name of the address, or create it";
      }
      return locationHints[report.tag] ?? pathHint(chain);
    case "io":
      return "the storage failed; check that it is up and has room, then retry";
    case "format": {
      const hint = formatHints[report.tag];
      if (hint !== undefined) return hint;
      const where = report.line === undefined ? "" : ` on line ${report.line}`;
      return `the event${where} breaks the "${report.tag}" rule of the format (docs/format.md); fix or cut the log before it`;
    }
    case "other":
      // A file read as the wrong tool's: what the file looks like says what to do.
      if (
        Predicate.isObject(error) && error["_tag"] === "ImportNotThisFormat" &&
        typeof error["hint"] === "string"
      ) return error["hint"];
      return otherHints[report.tag] ?? "see the message above";
  }
}

/**
 * A failure as readable text: where (an address with its secrets hidden),
 * which rule, the error's message and what to do.
 *
 * @param file The file or address the failure is about.
 * @param error The failure.
 * @param hint What to do, when the command knows better than
 * {@link failureHint} (an option of its own that would help).
 * @returns Lines ending with a newline.
 */
export function failureText(
  file: string,
  error: unknown,
  hint: string = failureHint(error),
): string {
  const report = describeFailure(error);
  const where = [
    report.line === undefined ? undefined : `line ${report.line}`,
    report.seq === undefined ? undefined : `seq ${report.seq}`,
  ].filter((part) => part !== undefined).join(", ");
  return [
    `error: ${redactAddress(file)}${
      where === "" ? "" : ` (${where})`
    }: ${report.tag}`,
    `  ${report.message}`,
    `  hint: ${hint}`,
    "",
  ].join("\n");
}
