/**
 * Reading a stored session for an open: the event rows below the head's
 * `next_seq`, streamed by one statement (the driver pauses the socket when
 * the reader falls behind, so a million rows are never one array), each
 * row's line decoded once by the one line decoder (`log/line.ts`) and each
 * chunk's events folded as one batch: what the streaming reader does with a
 * file's bytes, without turning the rows back into bytes to split them
 * again.
 *
 * It keeps the reader's promises: the same errors at the same line numbers
 * (`CorruptLine`, `FoldFailed`, `LineTooLong`), `recover` serving the valid
 * prefix before the first bad line, the run budget, `\r` stripped and
 * counted. A header that is not of the current version (older ones migrate,
 * newer ones are refused) or does not decode goes through the streaming
 * reader over the same rows, which owns migrations and header errors.
 *
 * A read may also start in the middle ({@link StoredResume}): from the
 * session a checkpoint restored, reading only the rows from its next seq
 * on, with line numbers and the run budget counted from the log's start.
 *
 * `report.bytes` is the head row's `bytes` for a whole read (kept by every
 * create and append in the transaction that moves `next_seq`); a read that
 * stopped asks the server for the bytes of the lines before the stop.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as Stream from "effect/Stream";
import type { SqlClient } from "effect/sql/SqlClient";
import {
  FORMAT_VERSION,
  type SessionEvent,
  type SurfaceEvent,
} from "../core/event.ts";
import type { Vocabulary } from "../core/decode.ts";
import {
  emptySurfaceAt,
  forEachNode,
  replayOwned,
  type Surface,
} from "../surface/mod.ts";
import { restoreSurface } from "../surface/restore.ts";
import { openCallsOf } from "../surface/calls.ts";
import { type HeldTail, keepHeld, makeHeldTail } from "../session/prior.ts";
import { SessionSeq } from "../core/seq.ts";
import { Session } from "../session/session.ts";
import { decodeSessionHeader } from "../log/codec.ts";
import {
  type CorruptLine,
  FoldFailed,
  FormatTooNew,
  FormatTooOld,
  LineTooLong,
  type LogReadError,
} from "../log/errors.ts";
import {
  corrupt,
  decodeHeaderText,
  decodeLine,
  makeRunBudget,
} from "../log/line.ts";
import {
  DEFAULT_MAX_LINE_BYTES,
  type LoadedLog,
  type ReadOptions,
  readSessionStream,
} from "../log/reader.ts";
import { SessionNotFound, type StorageError } from "../store/errors.ts";
import type { OpenError } from "../store/store.ts";
import {
  byteLength,
  type Failed,
  type HeadRow,
  readEventPage,
  readHeadRow,
  storedLogBytes,
} from "./rows.ts";
import { EVENTS_TABLE } from "./schema.ts";

type Stop = CorruptLine | FoldFailed | LineTooLong;

/**
 * Reads the session whose head row is `head`: decode, fold, `recover`,
 * `migrate`, as {@link readSessionStream} reads the same log as a file.
 *
 * @param client The connection (the pool, or a writer's own).
 * @param id The session id.
 * @param head Its head row, read first: the rows below its `next_seq` are
 * read.
 * @param pageSize Rows per query of the streaming reader's path (older
 * versions).
 * @param failed How a failed SQL call is reported.
 * @param options The reader's options.
 * @returns `Effect<LoadedLog, LogReadError | StorageError | E>`.
 */
export const readStoredSession = <E>(
  client: SqlClient,
  id: string,
  head: HeadRow,
  pageSize: number,
  failed: Failed,
  options: ReadOptions<E>,
  resume?: StoredResume,
): Effect.Effect<LoadedLog, LogReadError | StorageError | E> =>
  Effect.suspend(() => {
    if (resume !== undefined) {
      return readRows(client, id, head, failed, options, resume);
    }
    const headerLine = decodeHeaderText(head.header);
    const decodedHeader = Result.isSuccess(headerLine) &&
        headerLine.success.version === FORMAT_VERSION
      ? decodeSessionHeader(headerLine.success.raw)
      : undefined;
    if (decodedHeader === undefined || Result.isFailure(decodedHeader)) {
      // Older (to migrate), newer or broken: the streaming reader's path.
      return readSessionStream(
        storedLogBytes(client, id, head, pageSize, failed),
        options,
      );
    }
    const made = Session.make(
      decodedHeader.success,
      options.vocabulary === undefined
        ? undefined
        : { vocabulary: options.vocabulary },
    );
    // A session to hold only its surface past `holdLogUpTo` events folds
    // onto a surface that keeps no log, as the file reader's does.
    const lean = options.holdLogUpTo !== undefined;
    const session = lean
      ? {
        ...made,
        surface: emptySurfaceAt(made.surface.baseSeq, { keepLog: false }),
      }
      : made;
    return readRows(client, id, head, failed, options, {
      session,
      lines: 1,
      lean,
    });
  });

/**
 * Where a read of the rows starts: the session as of the rows before it
 * (just its header, or restored from a checkpoint), and the lines those
 * rows and the header make.
 */
export interface StoredResume {
  /** The session the rows before the start fold to. */
  readonly session: Session;
  /** The lines before the first row read, the header included. */
  readonly lines: number;
  /**
   * Whether the session is to hold only its surface (and the work still
   * open) once past `holdLogUpTo` events: a whole read with that bound.
   */
  readonly lean?: boolean;
}

/** Reads the rows from `resume.session`'s next seq on, onto it. */
const readRows = <E>(
  client: SqlClient,
  id: string,
  head: HeadRow,
  failed: Failed,
  options: ReadOptions<E>,
  resume: StoredResume,
): Effect.Effect<LoadedLog, LogReadError | StorageError> =>
  Effect.suspend(() => {
    const session = resume.session;
    const decodeOptions: { readonly vocabulary?: Vocabulary } | undefined =
      options.vocabulary === undefined
        ? undefined
        : { vocabulary: options.vocabulary };
    const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    const recover = options.recover === true;
    const runs = makeRunBudget();
    let events: SessionEvent[] = [];
    const holdUpTo = options.holdLogUpTo;
    // With a bound on what is held: what is kept of the events let go, and
    // how many were let go (the file reader's parser does the same).
    const tail = resume.lean === true && holdUpTo !== undefined
      ? makeHeldTail()
      : undefined;
    let dropped = 0;
    const keep = (from: number, to: number): void => {
      const kept = keepHeld(tail, holdUpTo, events, from, to, dropped);
      if (kept !== dropped) {
        dropped = kept;
        events = [];
      }
    };
    let surface: Surface = session.surface;
    const start = surface.nextSeq;
    // Events before the first row read (line numbers, the run budget).
    const skipped = start - surface.baseSeq;
    let lineNo = resume.lines;
    let crlfLines = 0;
    let stop: Stop | undefined;

    // One chunk of rows: decode each line until one fails, fold what
    // decoded (a fold error is on an earlier line, so it wins), then stop
    // at the bad line if there was one. False once reading should stop.
    const push = (
      rows: ReadonlyArray<{ readonly line: string }>,
    ): boolean => {
      const before = events.length;
      let bad: Stop | undefined;
      for (const row of rows) {
        let text = row.line;
        lineNo++;
        // A UTF-16 unit is 1 to 3 bytes: count bytes only near the limit.
        if (text.length * 3 > maxLineBytes && byteLength(text) > maxLineBytes) {
          bad = new LineTooLong({
            line: lineNo,
            offset: -1,
            limit: maxLineBytes,
          });
          break;
        }
        if (text.charCodeAt(text.length - 1) === 13) {
          text = text.slice(0, -1);
          crlfLines++;
        }
        const decoded = decodeLine(
          text,
          skipped + dropped + events.length,
          runs,
          decodeOptions,
        );
        if (decoded._tag === "Failure") {
          bad = corrupt(lineNo, text, decoded.failure);
          break;
        }
        events.push(decoded.success);
      }
      if (events.length > before) {
        const batch = before === 0 ? events : events.slice(before);
        const from = surface.nextSeq;
        // The surface is this read's own: nothing reads the one before.
        const folded = replayOwned(batch, surface, { stored: true });
        if (folded._tag === "Success") {
          surface = folded.success;
          keep(before, events.length);
        } else {
          const { error, surface: at } = folded.failure;
          const index = before + (at.nextSeq - from);
          const event = events[index];
          surface = at;
          events.length = index;
          const line = resume.lines + 1 + dropped + index;
          keep(before, index);
          bad = new FoldFailed({
            line,
            seq: event?.seq ?? at.nextSeq,
            innerTag: error._tag,
            inner: error,
          });
        }
      }
      if (bad === undefined) return true;
      stop = bad;
      return false;
    };

    const rows = client.unsafe<{ line: string }>(
      `SELECT line FROM ${EVENTS_TABLE} WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
      [id, start, head.nextSeq],
    ).stream;
    return Effect.gen(function* () {
      yield* Stream.runForEachWhile(
        Stream.chunks(rows),
        // Yielding once a chunk lets a timeout or an interrupting fiber in
        // while a large session is read.
        (chunk) => Effect.map(Effect.yieldNow, () => push(chunk)),
      ).pipe(Effect.mapError(failed("read the events of", id)));
      let bytes = head.bytes;
      let stoppedAt: Stop | undefined;
      if (stop !== undefined) {
        if (!recover) {
          return yield* stop._tag === "LineTooLong"
            ? new LineTooLong({
              ...stop,
              offset: yield* prefixBytes(client, id, head, stop.line, failed),
            })
            : stop;
        }
        bytes = yield* prefixBytes(client, id, head, stop.line, failed);
        stoppedAt = stop._tag === "LineTooLong"
          ? new LineTooLong({ ...stop, offset: bytes })
          : stop;
      }
      const held = tail === undefined
        ? { surface, events }
        : heldSurface(surface, events, tail, dropped);
      return {
        version: FORMAT_VERSION,
        session: { ...session, surface: held.surface },
        events: held.events,
        report: {
          lines: stoppedAt === undefined ? lineNo : stoppedAt.line - 1,
          bytes,
          tornTail: undefined,
          crlfLines,
          stoppedAt,
        },
      } satisfies LoadedLog;
    });
  });

/**
 * The surface of a lean read: every event again when none was let go, else
 * the surface, the open work's events and the prior (as the file reader
 * builds it).
 */
const heldSurface = (
  folded: Surface,
  kept: ReadonlyArray<SessionEvent>,
  tail: HeldTail,
  dropped: number,
): { surface: Surface; events: ReadonlyArray<SessionEvent> } => {
  const nodes: SurfaceEvent[] = [];
  forEachNode(folded, (_seq, event) => {
    nodes.push(event);
  });
  const all = dropped === 0;
  const events = all ? kept : tail.held();
  const surface = restoreSurface(
    [
      folded.baseSeq,
      SessionSeq.make(folded.nextSeq - events.length),
      folded.nextSeq,
      folded.replacements,
    ],
    nodes,
    events,
    all ? undefined : tail.prior(),
    openCallsOf(folded),
  );
  if (surface === undefined) {
    throw new Error("A folded surface did not restore");
  }
  return { surface, events };
};

/** The bytes of the log before line `line` (the header is line 1). */
const prefixBytes = (
  client: SqlClient,
  id: string,
  head: HeadRow,
  line: number,
  failed: Failed,
): Effect.Effect<number, StorageError> =>
  Effect.map(
    client.unsafe<{ bytes: string | number | bigint | null }>(
      `SELECT sum(octet_length(line) + 1) AS bytes FROM (SELECT line FROM ${EVENTS_TABLE} WHERE session_id = $1 AND seq < $2 ORDER BY seq LIMIT $3) AS served`,
      [id, head.nextSeq, line - 2],
    ),
    (rows) => byteLength(head.header) + 1 + Number(rows[0]?.bytes ?? 0),
  ).pipe(Effect.mapError(failed("read the events of", id)));

/**
 * The events of seqs `[from, to)` of a stored session (fewer when its log
 * is shorter), read in pages of rows and decoded as the reader decodes
 * them, without reading the rest (the store's `readRange`). A log of
 * another format version fails (`FormatTooOld`, `FormatTooNew`): the
 * caller reads it whole.
 *
 * @param client The pool.
 * @param id The session id.
 * @param range The first seq and the seq after the last.
 * @param vocabulary Extra log-only types.
 * @param pageSize Rows per query.
 * @param failed How a failed SQL call is reported.
 * @returns `Effect<ReadonlyArray<SessionEvent>, OpenError>`.
 */
export const readEventRange = (
  client: SqlClient,
  id: string,
  range: readonly [from: number, to: number],
  vocabulary: Vocabulary | undefined,
  pageSize: number,
  failed: Failed,
): Effect.Effect<ReadonlyArray<SessionEvent>, OpenError> =>
  Effect.gen(function* () {
    const head = yield* readHeadRow(client, id, failed);
    if (head === undefined) return yield* new SessionNotFound({ id });
    if (head.version < FORMAT_VERSION) {
      return yield* new FormatTooOld({
        version: head.version,
        supported: FORMAT_VERSION,
      });
    }
    if (head.version > FORMAT_VERSION) {
      return yield* new FormatTooNew({
        line: 1,
        version: head.version,
        supported: FORMAT_VERSION,
      });
    }
    const end = Math.min(range[1], head.nextSeq);
    const runs = makeRunBudget();
    const options = vocabulary === undefined ? undefined : { vocabulary };
    const out: SessionEvent[] = [];
    let at = range[0];
    while (at < end) {
      const rows = yield* readEventPage(client, id, at, end, pageSize, failed);
      for (const row of rows) {
        const text = row.line.endsWith("\r") ? row.line.slice(0, -1) : row.line;
        const event = decodeLine(text, row.seq, runs, options);
        if (Result.isFailure(event)) {
          return yield* corrupt(row.seq + 2, text, event.failure);
        }
        out.push(event.success);
      }
      const last = rows[rows.length - 1];
      if (last === undefined) break;
      at = last.seq + 1;
    }
    return out;
  });
