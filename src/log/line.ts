/**
 * One stored line to one event, with every bound the format promises: the
 * only line decoder, used by the reader ({@link readSessionStream}), the
 * line follower under the JSONL store's `follow`, and the PostgreSQL store's
 * `follow`, so a follower meets the same limits as a reader.
 *
 * - A line longer than 64 KiB holding more than one array or object per 16
 *   characters (outside strings) is refused with `TooManyContainers` before
 *   `JSON.parse` allocates them ({@link denseLine}).
 * - A line's `[start, end]` source runs may expand to no more seqs than the
 *   events before it, and the runs of one read (or one follow) to no more
 *   than 65,536 plus 4 per event ({@link RunBudget}); past that the line is
 *   `InvalidSourceRange` (`too-many`), judged before anything is expanded.
 * - An opaque event remembers its line, so it is written back byte for byte.
 *
 * This module owns the decoding of one line's text; splitting bytes into
 * lines is the reader's and the follower's, UTF-8 decoding included.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import { FORMAT_VERSION, type SessionEvent } from "../core/event.ts";
import { isOpaqueEvent, type Vocabulary } from "../core/decode.ts";
import {
  decodeEventValue,
  decodeHeaderLine,
  type HeaderLine,
  rememberOpaqueLine,
} from "./codec.ts";
import {
  CorruptLine,
  FormatTooNew,
  FormatTooOld,
  InvalidJson,
  InvalidUtf8,
  type LineError,
  TooManyContainers,
} from "./errors.ts";

const EXCERPT = 60;

/**
 * The bytes of `a` then `b`, in a new array.
 * @internal
 */
export const joinBytes = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
};

/**
 * How many seqs the `[start, end]` runs of a whole read may expand to,
 * beyond {@link RUN_SEQS_PER_EVENT} per event: a valid log's runs cite
 * shadowed ranges, and a node leaves the surface once, so their total stays
 * near the event count. Without a log-wide bound, n short lines each citing
 * `[[0, k]]` would expand to n²/2 seqs.
 */
const RUN_SEQS_BASE = 1 << 16;
const RUN_SEQS_PER_EVENT = 4;

/**
 * The seqs the source runs of one read (or one follow) expanded to so far:
 * one per read, shared by its lines.
 * @internal
 */
export interface RunBudget {
  /** Seqs expanded so far. */
  expanded: number;
}

/**
 * A fresh budget, for a new read or follow.
 *
 * @returns The budget, nothing spent.
 * @internal
 */
export const makeRunBudget = (): RunBudget => ({ expanded: 0 });

/**
 * Lines longer than this are scanned for their arrays and objects before
 * they are parsed; shorter ones cost little whatever they hold.
 */
const DENSE_SCAN_FROM = 64 * 1024;
/** The fewest characters per array or object a long line may have. */
const CHARS_PER_CONTAINER = 16;

/**
 * Counts the arrays and objects of a long line outside its strings, and
 * refuses it past one per 16 characters, before `JSON.parse` allocates
 * them: `[]` takes two bytes on disk and about a hundred in memory, at any
 * depth. A legitimate line (text, stream records, tool output) is far
 * sparser.
 *
 * @param text The line's text.
 * @returns `TooManyContainers`, or undefined when the line may be parsed.
 */
const denseLine = (text: string): TooManyContainers | undefined => {
  const length = text.length;
  if (length <= DENSE_SCAN_FROM) return undefined;
  const limit = Math.floor(length / CHARS_PER_CONTAINER);
  let containers = 0;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i++);
    if (c === 34) {
      // Skip a string: to the next quote that no backslash escapes.
      for (;;) {
        const end = text.indexOf('"', i);
        if (end < 0) return undefined;
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 92) slashes++;
        i = end + 1;
        if (slashes % 2 === 0) break;
      }
    } else if ((c === 91 || c === 123) && ++containers > limit) {
      return new TooManyContainers({ containers, length, limit });
    }
  }
  return undefined;
};

/**
 * Parses a line's JSON once {@link denseLine} lets it through.
 *
 * @param text The line's text, without its `\n`.
 * @returns The parsed value, or `TooManyContainers` / `InvalidJson`.
 * @internal
 */
export const parseLine = (
  text: string,
): Result.Result<unknown, TooManyContainers | InvalidJson> => {
  const dense = denseLine(text);
  if (dense !== undefined) return Result.fail(dense);
  try {
    return Result.succeed(JSON.parse(text));
  } catch (error) {
    return Result.fail(new InvalidJson({ problem: String(error) }));
  }
};

/**
 * Decodes a parsed event line whose position (`index`, its expected seq) is
 * known: its runs may expand to no more seqs than the events before it, and
 * the runs of the read to no more than the budget. An opaque event
 * remembers `text`, the line it was read from (none for a migrated value).
 *
 * @param value The parsed line.
 * @param text The line's text, or undefined for a value not read from a line.
 * @param index The event's position in the log (its seq when valid).
 * @param runs The read's budget, charged with what the line expands to.
 * @param options The vocabulary.
 * @returns The event, or the first rule the line breaks.
 * @internal
 */
export const decodeLineValue = (
  value: unknown,
  text: string | undefined,
  index: number,
  runs: RunBudget,
  options: { readonly vocabulary?: Vocabulary } | undefined,
): Result.Result<SessionEvent, LineError> => {
  let decoded: Result.Result<SessionEvent, LineError>;
  if (
    typeof value !== "object" || value === null ||
    !("sourceEventSeqs" in value)
  ) {
    decoded = decodeEventValue(value, options);
  } else {
    const stored: unknown = value.sourceEventSeqs;
    const budget = RUN_SEQS_BASE + RUN_SEQS_PER_EVENT * index - runs.expanded;
    decoded = decodeEventValue(value, {
      ...options,
      maxRunSeqs: Math.min(index, budget),
    });
    if (decoded._tag === "Success") {
      const sources = decoded.success.sourceEventSeqs;
      if (Array.isArray(sources) && sources !== stored) {
        runs.expanded += sources.length;
      }
    }
  }
  if (
    text !== undefined && decoded._tag === "Success" &&
    isOpaqueEvent(decoded.success)
  ) {
    rememberOpaqueLine(decoded.success, text);
  }
  return decoded;
};

/**
 * Parses and decodes one event line: {@link parseLine}, then
 * {@link decodeLineValue}.
 *
 * @param text The line's text, without its `\n` (and `\r`).
 * @param index The event's position in the log (its seq when valid).
 * @param runs The read's budget.
 * @param options The vocabulary.
 * @returns The event, or the first rule the line breaks.
 * @internal
 */
export const decodeLine = (
  text: string,
  index: number,
  runs: RunBudget,
  options: { readonly vocabulary?: Vocabulary } | undefined,
): Result.Result<SessionEvent, LineError> => {
  const parsed = parseLine(text);
  if (parsed._tag === "Failure") return Result.fail(parsed.failure);
  return decodeLineValue(parsed.success, text, index, runs, options);
};

/**
 * Parses and reads a header line's `type` and `version`.
 *
 * @param text The first line's text.
 * @returns The header line, or why it is not one.
 * @internal
 */
export const decodeHeaderText = (
  text: string,
): Result.Result<HeaderLine, LineError> => {
  const parsed = parseLine(text);
  if (parsed._tag === "Failure") return Result.fail(parsed.failure);
  return decodeHeaderLine(parsed.success);
};

const excerptOf = (text: string): string =>
  text.length > EXCERPT ? `${text.slice(0, EXCERPT)}...` : text;

/**
 * A bad line as a `CorruptLine`: its number, its start, the rule it broke.
 *
 * @param line The 1-based line number.
 * @param text The line's text.
 * @param inner What is wrong with it.
 * @returns The error.
 * @internal
 */
export const corrupt = (
  line: number,
  text: string,
  inner: LineError,
): CorruptLine =>
  new CorruptLine({
    line,
    excerpt: excerptOf(text),
    innerTag: inner._tag,
    inner,
  });

/** The vocabulary a line is decoded with. */
type LineOptions = { readonly vocabulary?: Vocabulary } | undefined;

/** A line of a current-format log: its event, nothing (the header), or why not. */
type CurrentLine = Result.Result<
  SessionEvent | undefined,
  CorruptLine | FormatTooNew | FormatTooOld
>;

/**
 * Decodes line `line` (1-based) of a log of the current format version, as
 * a follower and a range read take the lines they serve: the bytes as
 * UTF-8, a final `\r` dropped; the header checked for its version
 * (`FormatTooOld`, `FormatTooNew`: neither migrates), an event line
 * decoded at index `line - 2`.
 *
 * @param decoder A fatal UTF-8 decoder.
 * @param bytes The line's bytes, without its `\n`.
 * @param rest As for {@link decodeCurrentText}: the 1-based line number,
 * the source-run budget of the lines read so far, the vocabulary.
 * @returns The event, undefined for the header, or why the line is refused.
 * @internal
 */
export const decodeCurrentLine = (
  decoder: { readonly decode: (bytes: Uint8Array) => string },
  bytes: Uint8Array,
  ...rest: [line: number, runs: RunBudget, options: LineOptions]
): CurrentLine => {
  const line = rest[0];
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    const shown = new TextDecoder().decode(bytes);
    return Result.fail(
      corrupt(line, shown, new InvalidUtf8({ bytes: bytes.length })),
    );
  }
  return decodeCurrentText(text, ...rest);
};

/**
 * {@link decodeCurrentLine} for a line already decoded from UTF-8.
 *
 * @param raw The line's text, without its `\n`.
 * @param line The 1-based line number.
 * @param runs The source-run budget of the lines read so far.
 * @param options The vocabulary.
 * @returns The event, undefined for the header, or why the line is refused.
 * @internal
 */
export const decodeCurrentText = (
  raw: string,
  line: number,
  runs: RunBudget,
  options: LineOptions,
): CurrentLine => {
  const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  if (line === 1) {
    const header = decodeHeaderText(text);
    if (Result.isFailure(header)) {
      return Result.fail(corrupt(line, text, header.failure));
    }
    const version = header.success.version;
    if (version > FORMAT_VERSION) {
      return Result.fail(
        new FormatTooNew({ line: 1, version, supported: FORMAT_VERSION }),
      );
    }
    if (version < FORMAT_VERSION) {
      return Result.fail(
        new FormatTooOld({ version, supported: FORMAT_VERSION }),
      );
    }
    return Result.succeed(undefined);
  }
  const event = decodeLine(text, line - 2, runs, options);
  return Result.isFailure(event)
    ? Result.fail(corrupt(line, text, event.failure))
    : Result.succeed(event.success);
};

/**
 * Decodes one stored line a checkpoint references; undefined when it does
 * not decode, or holds another seq's event: the log does not hold there
 * what the checkpoint says.
 *
 * @param text The line, without `\n` (a final `\r` is dropped).
 * @param seq The seq it is referenced for.
 * @param runs The open's source-run budget.
 * @param vocabulary The vocabulary the session is read with.
 * @returns The event, or undefined.
 * @internal
 */
export const decodeReferencedLine = (
  text: string,
  seq: number,
  runs: RunBudget,
  vocabulary: Vocabulary | undefined,
): SessionEvent | undefined => {
  const line = text.endsWith("\r") ? text.slice(0, -1) : text;
  const decoded = decodeLine(
    line,
    seq,
    runs,
    vocabulary === undefined ? undefined : { vocabulary },
  );
  return Result.isSuccess(decoded) && decoded.success.seq === seq
    ? decoded.success
    : undefined;
};
