/**
 * The streaming reader: bytes to lines to decoded events to a folded
 * {@link Session}, one chunk at a time, never the whole file as one string.
 *
 * The reader is a `Stream` pipeline: any byte stream (a file through
 * {@link fileBytes}, a pipe, a socket, an HTTP body through
 * `Stream.fromReadableStream`) is pulled chunk by chunk into the line
 * machine, which splits complete lines, decodes them and folds each chunk's
 * events as one batch ({@link readSessionStream}). Pulling stops at the first
 * line that stops the read, and interrupting the reading fiber at any point
 * releases the source (a file's descriptor is closed by the stream's scope).
 *
 * What it reports:
 *
 * - a final line without `\n` is a torn write: it is not served, and the
 *   report gives its byte offset and length (`tornTail`);
 * - a complete line that is not UTF-8, not JSON, or does not decode is
 *   `CorruptLine` with its 1-based line number (the header is line 1), an
 *   excerpt and the inner error;
 * - an event that breaks a fold rule is `FoldFailed` with its line;
 * - a line longer than `maxLineBytes` (256 MiB by default) is `LineTooLong`,
 *   so memory stays bounded on hostile input;
 * - a line whose `[start, end]` source runs would expand to more seqs than
 *   the events before it, or past the read's budget (65,536 plus 4 per
 *   event), is `CorruptLine` with `InvalidSourceRange` (`too-many`), judged
 *   before anything is expanded;
 * - a line longer than 64 KiB holding more than one array or object per 16
 *   characters (outside strings) is `CorruptLine` with `TooManyContainers`,
 *   counted before it is parsed: `JSON.parse` spends about a hundred bytes
 *   on each, so `[[[[...]]]]` or `[[],[],...]` would cost fifty times the
 *   line.
 *
 * Strict by default: the first bad line fails the read. With `recover`, the
 * valid prefix before the first bad line is served and the report says
 * where the read stopped (`stoppedAt`). Nothing after a bad line is ever
 * served.
 *
 * Line endings: `\r\n` is accepted, the `\r` is stripped and counted
 * (`crlfLines`), because a log copied through a Windows tool stays
 * readable; the writer only ever writes `\n`.
 *
 * Versions: a header newer than {@link FORMAT_VERSION} is `FormatTooNew`.
 * An older one needs a `migrate` function (the `migrations/` catalog
 * provides one; this module never imports it); without it the read fails
 * `FormatTooOld`. A migrated log is decoded and folded by the current rules;
 * its line numbers after migration are positions in the migrated log.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Stream from "effect/Stream";
import * as fs from "node:fs";
import {
  FORMAT_VERSION,
  type SessionEvent,
  type SurfaceEvent,
} from "../core/event.ts";
import type { Vocabulary } from "../core/decode.ts";
import { forEachNode, replayResult, type Surface } from "../surface/mod.ts";
import { restoreSurface } from "../surface/restore.ts";
import { openCallsOf } from "../surface/calls.ts";
import type { HeldTail } from "../session/prior.ts";
import { SessionSeq } from "../core/seq.ts";
import { Session, type SessionHeader } from "../session/session.ts";
import {
  type CorruptLine,
  FoldFailed,
  FormatTooOld,
  type LineTooLong,
  type LogReadError,
  MissingHeader,
} from "./errors.ts";
import { corrupt, decodeLineValue, makeRunBudget } from "./line.ts";
import type { FileIoError } from "../fs/errors.ts";
import { ioError } from "../fs/io.ts";
import {
  makeParser,
  type ParserEnd,
  type ResumePoint,
  type Stop,
} from "./parser.ts";

/** What a migration is given: an older log, parsed but not decoded. */
export interface MigrationInput {
  /** The file's format version. */
  readonly version: number;
  /** The parsed header line. */
  readonly header: { readonly [key: string]: unknown };
  /** The parsed event lines, in file order. */
  readonly lines: ReadonlyArray<unknown>;
}

/** What a migration returns: a current-version log, not yet decoded. */
export interface MigrationOutput {
  /** The session header. */
  readonly header: SessionHeader;
  /** Current-version event values, in seq order. */
  readonly events: ReadonlyArray<unknown>;
}

/**
 * Migrates an older log in memory to the current version. Plugged into the
 * reader by a caller (for instance from the `migrations/` catalog).
 */
export type Migration<E> = (
  input: MigrationInput,
) => Effect.Effect<MigrationOutput, E>;

/** Options of {@link readSessionFile} and {@link readSessionBytes}. */
export interface ReadOptions<E = never> {
  /** Extra log-only types to decode. */
  readonly vocabulary?: Vocabulary;
  /** Serve the valid prefix before the first bad line instead of failing. */
  readonly recover?: boolean;
  /** The longest line accepted, in bytes without `\n`; 256 MiB by default. */
  readonly maxLineBytes?: number;
  /** Migrates logs of older versions; without it they fail `FormatTooOld`. */
  readonly migrate?: Migration<E>;
  /**
   * Hold every event only in a log of at most this many; a longer one's
   * session holds its surface, the events of work still open and what the
   * backward scans need (see `Session.heldFrom`), and the loaded log's
   * `events` are those it holds. Every event is held by default.
   */
  readonly holdLogUpTo?: number;
}

/** A final line without `\n`: a torn write. */
export interface TornTail {
  /** The byte offset where it starts (the length of the good prefix). */
  readonly offset: number;
  /** Its length in bytes. */
  readonly bytes: number;
}

/** What the reader saw besides the events. */
export interface ReadReport {
  /** Complete lines served, the header included. */
  readonly lines: number;
  /** Bytes of the served lines, `\n` included: where the next line goes. */
  readonly bytes: number;
  /** The torn final line, when there is one. */
  readonly tornTail: TornTail | undefined;
  /** How many served lines ended in `\r\n`. */
  readonly crlfLines: number;
  /** With `recover`: the error of the first bad line, where reading stopped. */
  readonly stoppedAt: CorruptLine | FoldFailed | LineTooLong | undefined;
}

/** A loaded log. */
export interface LoadedLog {
  /** The file's format version (older when migrated). */
  readonly version: number;
  /** The session: header, log and surface. */
  readonly session: Session;
  /** The events, in seq order. */
  readonly events: ReadonlyArray<SessionEvent>;
  /** What the reader saw. */
  readonly report: ReadReport;
}

/** The default {@link ReadOptions.maxLineBytes}: 256 MiB. */
export const DEFAULT_MAX_LINE_BYTES: number = 256 * 1024 * 1024;

const CHUNK_BYTES = 1024 * 1024;

const decodeOptionsOf = (
  options: ReadOptions<unknown>,
): { readonly vocabulary?: Vocabulary } | undefined =>
  options.vocabulary === undefined
    ? undefined
    : { vocabulary: options.vocabulary };

const textOfValue = (value: unknown): string => {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // JSON.stringify and String() both recurse on deep data and can throw.
    text = Array.isArray(value)
      ? "[...]"
      : typeof value === "object" && value !== null
      ? "{...}"
      : String(value);
  }
  return text;
};

/** Decodes and folds a migrated log; line numbers are positions in it. */
const loadMigrated = (
  output: MigrationOutput,
  options: ReadOptions<unknown>,
  base: Omit<ReadReport, "stoppedAt">,
  stoppedBefore: Stop | undefined,
  version: number,
): Effect.Effect<LoadedLog, LogReadError> =>
  Effect.suspend((): Effect.Effect<LoadedLog, LogReadError> => {
    const decodeOptions = decodeOptionsOf(options);
    const events: SessionEvent[] = [];
    const runs = makeRunBudget();
    let stoppedAt: Stop | undefined = stoppedBefore;
    let index = 0;
    for (; index < output.events.length; index++) {
      const value = output.events[index];
      const decoded = decodeLineValue(
        value,
        undefined,
        index,
        runs,
        decodeOptions,
      );
      if (decoded._tag === "Failure") {
        const error = corrupt(
          index + 2,
          textOfValue(value),
          decoded.failure,
        );
        if (options.recover !== true) return Effect.fail(error);
        stoppedAt = error;
        break;
      }
      events.push(decoded.success);
    }
    const session = Session.make(output.header, decodeOptions);
    const result = replayResult(events, session.surface, { stored: true });
    let surface: Surface;
    if (result._tag === "Success") {
      surface = result.success;
    } else {
      const { error, surface: at } = result.failure;
      const failedIndex = at.nextSeq - session.surface.nextSeq;
      const failure = new FoldFailed({
        line: failedIndex + 2,
        seq: events[failedIndex]?.seq ?? at.nextSeq,
        innerTag: error._tag,
        inner: error,
      });
      if (options.recover !== true) return Effect.fail(failure);
      stoppedAt = failure;
      events.length = failedIndex;
      surface = at;
    }
    return Effect.succeed({
      version,
      session: { ...session, surface },
      events,
      report: { ...base, stoppedAt },
    });
  });

/**
 * The surface of a read that held only the surface: every event again when
 * none was let go, else the surface, the open work's events and the prior.
 */
const heldSurface = (
  folded: Surface,
  kept: ReadonlyArray<SessionEvent>,
  lean: { readonly tail: HeldTail; readonly dropped: number },
): { surface: Surface; events: ReadonlyArray<SessionEvent> } => {
  const nodes: SurfaceEvent[] = [];
  forEachNode(folded, (_seq, event) => {
    nodes.push(event);
  });
  const all = lean.dropped === 0;
  const events = all ? kept : lean.tail.held();
  const heldFrom = SessionSeq.make(folded.nextSeq - events.length);
  const surface = restoreSurface(
    [folded.baseSeq, heldFrom, folded.nextSeq, folded.replacements],
    nodes,
    events,
    all ? undefined : lean.tail.prior(),
    openCallsOf(folded),
  );
  if (surface === undefined) {
    throw new Error("A folded surface did not restore");
  }
  return { surface, events };
};

const finish = <E>(
  state: ParserEnd,
  options: ReadOptions<E>,
): Effect.Effect<LoadedLog, LogReadError | E> => {
  if (state.fatal !== undefined) return Effect.fail(state.fatal);
  const headerLine = state.headerLine;
  if (headerLine === undefined) {
    return Effect.fail(
      new MissingHeader({ bytes: state.bytes + state.pendingBytes }),
    );
  }
  const base = {
    lines: state.lines,
    bytes: state.bytes,
    tornTail: state.pendingBytes > 0
      ? { offset: state.bytes, bytes: state.pendingBytes }
      : undefined,
    crlfLines: state.crlfLines,
  };
  const decodeOptions = decodeOptionsOf(options);
  if (state.header !== undefined && state.surface !== undefined) {
    const session = Session.make(state.header, decodeOptions);
    const { surface, events } = state.lean === undefined
      ? { surface: state.surface, events: state.events }
      : heldSurface(state.surface, state.events, state.lean);
    return Effect.succeed({
      version: headerLine.version,
      session: { ...session, surface },
      events,
      report: { ...base, stoppedAt: state.stoppedAt },
    });
  }
  const migrate = options.migrate;
  if (migrate === undefined) {
    return Effect.fail(
      new FormatTooOld({
        version: headerLine.version,
        supported: FORMAT_VERSION,
      }),
    );
  }
  return Effect.flatMap(
    migrate({
      version: headerLine.version,
      header: headerLine.raw,
      lines: state.raw,
    }),
    (output) =>
      loadMigrated(output, options, base, state.stoppedAt, headerLine.version),
  );
};

/**
 * Reads a session log from any byte stream: the pipeline behind
 * {@link readSessionFile} and {@link readSessionBytes}. Chunks are pulled one
 * at a time; reading stops pulling at the first line that stops the read, and
 * interrupting the fiber releases the source through its own scope.
 *
 * @param bytes The log's bytes, in chunks of any size.
 * @param options Vocabulary, `recover`, `maxLineBytes`, `migrate`.
 * @returns `Effect<LoadedLog, LogReadError | E | EB, R>`: the reader's
 * errors (`CorruptLine`, `FoldFailed`, `LineTooLong`, `MissingHeader`,
 * `FormatTooNew`, `FormatTooOld`), the migration's and the stream's own.
 *
 * @example Reading a log that arrives in small pieces
 * ```ts
 * import { readSessionStream } from "@palimpsest/session/jsonl";
 * import { Effect, Stream } from "effect";
 * import assert from "node:assert/strict";
 *
 * const text = '{"type":"session","version":3,"id":"a","createdAt":0,"isSeeded":false}\n' +
 *   '{"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}\n';
 * const bytes = new TextEncoder().encode(text);
 * const pieces = Stream.fromIterable([bytes.subarray(0, 7), bytes.subarray(7, 100), bytes.subarray(100)]);
 * const log = Effect.runSync(readSessionStream(pieces));
 * assert.equal(log.events.length, 1);
 * assert.equal(log.report.tornTail, undefined);
 * ```
 */
export function readSessionStream<E = never, EB = never, R = never>(
  bytes: Stream.Stream<Uint8Array, EB, R>,
  options: ReadOptions<E> = {},
): Effect.Effect<LoadedLog, LogReadError | E | EB, R> {
  return readStreamFrom(bytes, options, undefined);
}

const readStreamFrom = <E, EB, R>(
  bytes: Stream.Stream<Uint8Array, EB, R>,
  options: ReadOptions<E>,
  resume: ResumePoint | undefined,
): Effect.Effect<LoadedLog, LogReadError | E | EB, R> => {
  return Effect.suspend(() => {
    const parser = makeParser({
      recover: options.recover === true,
      maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      migrates: options.migrate !== undefined,
      ...(resume === undefined ? {} : { resume }),
      ...(options.holdLogUpTo === undefined
        ? {}
        : { holdLogUpTo: options.holdLogUpTo }),
    }, decodeOptionsOf(options));
    return Effect.flatMap(
      Stream.runForEachWhile(
        bytes,
        // Yielding once a chunk (about 30 µs) lets a timeout or an
        // interrupting fiber in while a large log is read.
        (chunk) => Effect.map(Effect.yieldNow, () => parser.push(chunk)),
      ),
      () => finish(parser.end(), options),
    );
  });
};

/**
 * Reads a session log from bytes held in memory or produced by an iterable:
 * the same reader as {@link readSessionStream}, for tests and embedded logs.
 * For a pipe, a socket or an HTTP body, give {@link readSessionStream} a
 * `Stream` of it.
 *
 * @param chunks The bytes, as one array or in chunks; an iterable is pulled
 * one chunk at a time, and may reuse one buffer for every chunk.
 * @param options Vocabulary, `recover`, `maxLineBytes`, `migrate`.
 * @returns `Effect<LoadedLog, LogReadError | E>`: `CorruptLine`,
 * `FoldFailed`, `LineTooLong`, `MissingHeader`, `FormatTooNew`,
 * `FormatTooOld`, or the migration's error.
 *
 * @example A torn final line is reported, not served
 * ```ts
 * import { readSessionBytes } from "@palimpsest/session/jsonl";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const text = '{"type":"session","version":3,"id":"a","createdAt":0,"isSeeded":false}\n' +
 *   '{"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}\n{"type":"tur';
 * const log = Effect.runSync(readSessionBytes(new TextEncoder().encode(text)));
 * assert.equal(log.events.length, 1);
 * assert.deepEqual(log.report.tornTail, { offset: 128, bytes: 12 });
 * ```
 */
export function readSessionBytes<E = never>(
  chunks: Uint8Array | Iterable<Uint8Array>,
  options: ReadOptions<E> = {},
): Effect.Effect<LoadedLog, LogReadError | E> {
  return readSessionStream(
    // One chunk a pull: the reader copies what it keeps before it pulls the
    // next, so a producer may reuse one buffer for every chunk.
    chunks instanceof Uint8Array
      ? Stream.make(chunks)
      : Stream.fromIterable(chunks, { chunkSize: 1 }),
    options,
  );
}

/**
 * A file's bytes as a `Stream`, read in chunks of `chunkBytes` (1 MiB by
 * default). The descriptor is opened when the stream starts and closed when
 * it ends, fails or is interrupted.
 *
 * @param path The file.
 * @param chunkBytes The size of each read.
 * @returns `Stream<Uint8Array, FileIoError>`.
 *
 * @example Counting a file's bytes
 * ```ts
 * import { fileBytes } from "@palimpsest/session/jsonl";
 * import { Effect, Stream } from "effect";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 * import assert from "node:assert/strict";
 *
 * const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "doc-")), "a.txt");
 * fs.writeFileSync(file, "x".repeat(10));
 * const total = Effect.runSync(
 *   Stream.runFold(fileBytes(file, 4), () => 0, (n, chunk) => n + chunk.length),
 * );
 * assert.equal(total, 10);
 * ```
 */
export function fileBytes(
  path: string,
  chunkBytes: number = CHUNK_BYTES,
  start: number = 0,
): Stream.Stream<Uint8Array, FileIoError> {
  let position = start;
  return Stream.unwrap(
    Effect.map(
      Effect.acquireRelease(
        Effect.try({
          try: () => fs.openSync(path, "r"),
          catch: (cause) => ioError("read", path, cause),
        }),
        (fd) =>
          Effect.sync(() => {
            try {
              fs.closeSync(fd);
            } catch {
              // Already closed: nothing is held.
            }
          }),
      ),
      (fd) =>
        Stream.unfold(
          undefined,
          () =>
            Effect.try({
              try: (): readonly [Uint8Array, undefined] | undefined => {
                const buffer = new Uint8Array(chunkBytes);
                const n = fs.readSync(fd, buffer, 0, chunkBytes, position);
                position += n;
                return n === 0 ? undefined : [buffer.subarray(0, n), undefined];
              },
              catch: (cause) => ioError("read", path, cause),
            }),
        ),
    ),
  );
}

/**
 * Reads a session log file, streaming it in 1 MiB chunks: decode, fold, and
 * the report of a torn tail. See the module documentation for the rules.
 * Interrupting the read closes the file.
 *
 * @param path The file.
 * @param options Vocabulary, `recover`, `maxLineBytes`, `migrate`.
 * @returns `Effect<LoadedLog, LogReadError | FileIoError | E>`:
 * `CorruptLine`, `FoldFailed`, `LineTooLong`, `MissingHeader`,
 * `FormatTooNew`, `FormatTooOld`, `FileIoError`, or the migration's error.
 *
 * @example Reading a file written by hand
 * ```ts
 * import { readSessionFile } from "@palimpsest/session/jsonl";
 * import { Effect } from "effect";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 * import assert from "node:assert/strict";
 *
 * const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "doc-")), "a.jsonl");
 * fs.writeFileSync(file, '{"type":"session","version":3,"id":"a","createdAt":0,"isSeeded":false}\n');
 * const log = await Effect.runPromise(readSessionFile(file));
 * assert.equal(log.session.header.id, "a");
 * assert.equal(log.events.length, 0);
 * ```
 */
export function readSessionFile<E = never>(
  path: string,
  options: ReadOptions<E> = {},
): Effect.Effect<LoadedLog, LogReadError | FileIoError | E> {
  return readSessionStream(fileBytes(path), options);
}

/**
 * Reads a session file from the middle: the lines from `resume.bytes` on,
 * folded onto `resume.surface` (a checkpoint's). The loaded log's events
 * are those lines' only; its report counts lines and bytes from the file's
 * start.
 *
 * @param path The file.
 * @param resume Where to start, and the state there.
 * @param options Vocabulary, line limit, `recover`.
 * @returns `Effect<LoadedLog, LogReadError | FileIoError>`.
 * @internal
 */
export function readSessionFileFrom<E = never>(
  path: string,
  resume: ResumePoint,
  options: ReadOptions<E> = {},
): Effect.Effect<LoadedLog, LogReadError | FileIoError | E> {
  return readStreamFrom(
    fileBytes(path, CHUNK_BYTES, resume.bytes),
    options,
    resume,
  );
}

/**
 * Reads a log held as byte chunks from the middle: the lines from
 * `resume.bytes` on (an offset into the chunks taken as one), folded onto
 * `resume.surface`. See {@link readSessionFileFrom}.
 *
 * @param chunks The whole log's bytes.
 * @param resume Where to start, and the state there.
 * @param options Vocabulary, line limit, `recover`.
 * @returns `Effect<LoadedLog, LogReadError>`.
 * @internal
 */
export function readSessionBytesFrom<E = never>(
  chunks: ReadonlyArray<Uint8Array>,
  resume: ResumePoint,
  options: ReadOptions<E> = {},
): Effect.Effect<LoadedLog, LogReadError | E> {
  const tail: Uint8Array[] = [];
  let at = 0;
  for (const chunk of chunks) {
    const end = at + chunk.length;
    if (end > resume.bytes) {
      tail.push(
        at >= resume.bytes ? chunk : chunk.subarray(resume.bytes - at),
      );
    }
    at = end;
  }
  return readStreamFrom(
    Stream.fromIterable(tail, { chunkSize: 1 }),
    options,
    resume,
  );
}
