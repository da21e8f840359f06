/**
 * The reader's line machine: chunks in, complete lines split, decoded by
 * the one line decoder (`line.ts`) and folded one chunk's events at a
 * time; a final line without `\n` is held until its end comes (or reported
 * as a torn tail). It stops at the first line that stops the read and says
 * where the valid prefix ends. The stream plumbing around it, the
 * migrations and the sources are `reader.ts`.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import { FORMAT_VERSION, type SessionEvent } from "../core/event.ts";
import type { Vocabulary } from "../core/decode.ts";
import { emptySurfaceAt, replayOwned, type Surface } from "../surface/mod.ts";
import { type HeldTail, keepHeld, makeHeldTail } from "../session/prior.ts";
import { Session, type SessionHeader } from "../session/session.ts";
import { decodeSessionHeader, type HeaderLine } from "./codec.ts";
import {
  type CorruptLine,
  FoldFailed,
  FormatTooNew,
  FormatTooOld,
  InvalidUtf8,
  LineTooLong,
  type LogReadError,
} from "./errors.ts";
import {
  corrupt,
  decodeHeaderText,
  decodeLine,
  makeRunBudget,
  parseLine,
} from "./line.ts";

const NL = 10;

/** What stops a read that `recover` may still serve the prefix of. */
export type Stop = CorruptLine | FoldFailed | LineTooLong;
type HeaderError = LogReadError;

/** What the line machine needs of the read's options. */
export interface ParserOptions {
  /** Serve the valid prefix before a bad line. */
  readonly recover: boolean;
  /** The longest line kept waiting for its end. */
  readonly maxLineBytes: number;
  /** Whether an older header may be read (its lines kept raw). */
  readonly migrates: boolean;
  /**
   * Read from the middle of a log: its header was read, the lines before
   * `bytes` were folded into `surface` (from a checkpoint), and the next
   * line is line `lines + 1`, the event at `surface.nextSeq`.
   */
  readonly resume?: ResumePoint;
  /**
   * Keep every event only while there are at most this many; past that,
   * the fold keeps only the surface's events, and the parser only the
   * events of work still open ({@link HeldTail}). Unbounded by default.
   */
  readonly holdLogUpTo?: number;
}

/** Where a read from the middle of a log starts. */
export interface ResumePoint {
  /** The session's header. */
  readonly header: SessionHeader;
  /** The surface the lines before `bytes` fold to. */
  readonly surface: Surface;
  /** The lines before `bytes`, the header included. */
  readonly lines: number;
  /** The byte offset of the next line. */
  readonly bytes: number;
}

/** The line machine: chunks in, lines decoded and folded as they come. */
export interface Parser {
  /** Feeds a chunk; false once reading should stop. */
  readonly push: (chunk: Uint8Array) => boolean;
  /** The state after the last chunk. */
  readonly end: () => ParserEnd;
}

/** The state of the line machine after its last chunk. */
export interface ParserEnd {
  readonly fatal: HeaderError | undefined;
  readonly headerLine: HeaderLine | undefined;
  readonly header: SessionHeader | undefined;
  readonly raw: ReadonlyArray<unknown>;
  readonly events: ReadonlyArray<SessionEvent>;
  readonly surface: Surface | undefined;
  /**
   * With `holdLogUpTo`: what was kept of the events past the bound, and how
   * many were dropped from `events` (0: all are there).
   */
  readonly lean:
    | { readonly tail: HeldTail; readonly dropped: number }
    | undefined;
  readonly lines: number;
  readonly bytes: number;
  readonly pendingBytes: number;
  readonly crlfLines: number;
  readonly stoppedAt: Stop | undefined;
}

/** The index just after the k-th `\n` from `start` (k = 0: `start`). */
const offsetOfPart = (buf: Uint8Array, start: number, k: number): number => {
  let at = start;
  for (let i = 0; i < k; i++) {
    const nl = buf.indexOf(NL, at);
    if (nl < 0) return buf.length;
    at = nl + 1;
  }
  return at;
};

/**
 * Makes the line machine of one read.
 *
 * @param options Recovery, the line bound, whether older versions migrate.
 * @param decodeOptions The vocabulary.
 * @returns The machine.
 */
export const makeParser = (
  options: ParserOptions,
  decodeOptions: { readonly vocabulary?: Vocabulary } | undefined,
): Parser => {
  const recover = options.recover;
  const maxLineBytes = options.maxLineBytes;
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const resume = options.resume;
  let lineNo = resume?.lines ?? 0;
  // Bytes of the complete lines served so far, and of chunks pushed.
  let good = resume?.bytes ?? 0;
  let pushed = good;
  // Events before the first one this parser decodes (for line numbers
  // and the run budget).
  const skipped = resume === undefined
    ? 0
    : resume.surface.nextSeq - resume.surface.baseSeq;
  // The line of the first event this parser decodes.
  const lineOfFirst = resume === undefined ? 2 : resume.lines + 1;
  let crlfLines = 0;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let headerLine: HeaderLine | undefined = resume === undefined
    ? undefined
    : { version: FORMAT_VERSION, raw: {} };
  let header: SessionHeader | undefined = resume?.header;
  let migrating = false;
  const raw: unknown[] = [];
  let events: SessionEvent[] = [];
  // With a bound on what is held: the events folded and let go so far, and
  // what is kept of them.
  const holdUpTo = options.holdLogUpTo;
  const tail = holdUpTo === undefined || resume !== undefined
    ? undefined
    : makeHeldTail();
  let dropped = 0;
  const runs = makeRunBudget();
  let surface: Surface | undefined = resume?.surface;
  let fatal: HeaderError | undefined;
  let stoppedAt: Stop | undefined;
  let stopped = false;

  const stop = (error: Stop | HeaderError): false => {
    // Judged by the bad line's own number: a fold error or an overlong line
    // on line 2 is as recoverable as a corrupt one (the prefix is empty).
    if (
      recover &&
      (error._tag === "CorruptLine" || error._tag === "FoldFailed" ||
        error._tag === "LineTooLong") &&
      error.line > 1
    ) {
      stoppedAt = error;
    } else {
      fatal = error;
    }
    stopped = true;
    return false;
  };

  const readHeader = (text: string): HeaderError | undefined => {
    const line = decodeHeaderText(text);
    if (Result.isFailure(line)) return corrupt(1, text, line.failure);
    headerLine = line.success;
    const version = line.success.version;
    if (version > FORMAT_VERSION) {
      return new FormatTooNew({
        line: 1,
        version,
        supported: FORMAT_VERSION,
      });
    }
    if (version < FORMAT_VERSION) {
      if (!options.migrates) {
        return new FormatTooOld({ version, supported: FORMAT_VERSION });
      }
      migrating = true;
      return undefined;
    }
    const decoded = decodeSessionHeader(line.success.raw);
    if (Result.isFailure(decoded)) return corrupt(1, text, decoded.failure);
    header = decoded.success;
    surface = tail === undefined
      ? Session.make(header).surface
      : emptySurfaceAt(Session.make(header).surface.baseSeq, {
        keepLog: false,
      });
    return undefined;
  };

  // One complete line without its "\n"; the error that stops, if any.
  const line = (input: string): HeaderError | undefined => {
    let text = input;
    lineNo++;
    if (text.charCodeAt(text.length - 1) === 13) {
      text = text.slice(0, -1);
      crlfLines++;
    }
    if (lineNo === 1) return readHeader(text);
    if (migrating) {
      const parsed = parseLine(text);
      if (parsed._tag === "Failure") {
        return corrupt(lineNo, text, parsed.failure);
      }
      raw.push(parsed.success);
      return undefined;
    }
    const decoded = decodeLine(
      text,
      skipped + dropped + events.length,
      runs,
      decodeOptions,
    );
    if (decoded._tag === "Failure") {
      return corrupt(lineNo, text, decoded.failure);
    }
    events.push(decoded.success);
    return undefined;
  };

  // Decodes the lines of buf[start, end); returns the failing part index.
  const decodeRegion = (
    buf: Uint8Array,
    start: number,
    end: number,
  ): { readonly part: number; readonly error: HeaderError } | undefined => {
    let text: string | undefined;
    try {
      text = decoder.decode(buf.subarray(start, end));
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      const parts = text.split("\n");
      for (let k = 0; k < parts.length; k++) {
        const error = line(parts[k] ?? "");
        if (error !== undefined) return { part: k, error };
      }
      return undefined;
    }
    // Some line is not UTF-8: decode line by line to name it.
    let from = start;
    for (let k = 0;; k++) {
      let nl = buf.indexOf(NL, from);
      if (nl < 0 || nl > end) nl = end;
      const bytesOfLine = buf.subarray(from, nl);
      let lineText: string | undefined;
      try {
        lineText = decoder.decode(bytesOfLine);
      } catch {
        lineText = undefined;
      }
      if (lineText === undefined) {
        lineNo++;
        const error = corrupt(
          lineNo,
          new TextDecoder().decode(bytesOfLine),
          new InvalidUtf8({ bytes: bytesOfLine.length }),
        );
        return { part: k, error };
      }
      const error = line(lineText);
      if (error !== undefined) return { part: k, error };
      if (nl >= end) return undefined;
      from = nl + 1;
    }
  };

  // Complete lines buf[start, end), each followed by "\n" (buf[end] is the
  // last one's, possibly virtual); `at` is the global offset of buf[0].
  // Feeds the folded events[from, to) to the tail, and lets the buffer go
  // once past the bound.
  const keep = (from: number, to: number): void => {
    const kept = keepHeld(tail, holdUpTo, events, from, to, dropped);
    if (kept !== dropped) {
      dropped = kept;
      events = [];
    }
  };

  const region = (
    buf: Uint8Array,
    start: number,
    end: number,
    at: number,
  ): boolean => {
    const firstLine = lineNo + 1;
    const before = events.length;
    const failed = decodeRegion(buf, start, end);
    const decodeStop = (): boolean => {
      if (failed === undefined) return true;
      good = at + offsetOfPart(buf, start, failed.part);
      return stop(failed.error);
    };
    good = at + end + 1;
    // Fold what decoded first: a fold error is on an earlier line.
    if (surface === undefined || before === events.length) return decodeStop();
    const batch = before === 0 ? events : events.slice(before);
    const from = surface.nextSeq;
    // The surface is the parser's own: nothing reads the one before.
    const result = replayOwned(batch, surface, { stored: true });
    if (result._tag === "Success") {
      surface = result.success;
      keep(before, events.length);
      return decodeStop();
    }
    const { error, surface: stoppedSurface } = result.failure;
    const index = before + (stoppedSurface.nextSeq - from);
    const event = events[index];
    surface = stoppedSurface;
    const failedLine = lineOfFirst + dropped + index;
    events.length = index;
    keep(before, index);
    lineNo = failedLine - 1;
    good = at + offsetOfPart(buf, start, failedLine - firstLine);
    return stop(
      new FoldFailed({
        line: failedLine,
        seq: event?.seq ?? stoppedSurface.nextSeq,
        innerTag: error._tag,
        inner: error,
      }),
    );
  };

  const tooLong = (line: number = lineNo + 1): false =>
    stop(new LineTooLong({ line, offset: good, limit: maxLineBytes }));

  const push = (chunk: Uint8Array): boolean => {
    if (stopped) return false;
    const at = pushed;
    pushed += chunk.length;
    let start = 0;
    if (pendingBytes > 0) {
      const nl = chunk.indexOf(NL);
      if (nl < 0) {
        if (pendingBytes + chunk.length > maxLineBytes) return tooLong();
        pending.push(chunk.slice());
        pendingBytes += chunk.length;
        return true;
      }
      if (pendingBytes + nl > maxLineBytes) return tooLong();
      const whole = new Uint8Array(pendingBytes + nl);
      let offset = 0;
      for (const part of pending) {
        whole.set(part, offset);
        offset += part.length;
      }
      whole.set(chunk.subarray(0, nl), offset);
      pending = [];
      pendingBytes = 0;
      if (!region(whole, 0, whole.length, good)) return false;
      start = nl + 1;
    }
    const last = chunk.lastIndexOf(NL);
    if (last >= start) {
      if (maxLineBytes < last - start) {
        let from = start;
        while (from <= last) {
          const nl = chunk.indexOf(NL, from);
          if (nl - from > maxLineBytes) {
            // Serve the lines before it, then stop at it.
            if (from > start && !region(chunk, start, from - 1, at)) {
              return false;
            }
            good = at + from;
            return tooLong(lineNo + 1);
          }
          from = nl + 1;
        }
      }
      if (!region(chunk, start, last, at)) return false;
      start = last + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.length - start;
      if (pendingBytes + rest > maxLineBytes) return tooLong();
      pending.push(chunk.slice(start));
      pendingBytes += rest;
    }
    return true;
  };

  const end = (): ParserEnd => ({
    fatal,
    headerLine,
    header,
    raw,
    events,
    surface,
    lean: tail === undefined ? undefined : { tail, dropped },
    lines: stoppedAt === undefined ? lineNo : stoppedAt.line - 1,
    bytes: good,
    pendingBytes: stopped ? 0 : pendingBytes,
    crlfLines,
    stoppedAt,
  });

  return { push, end };
};
