/**
 * The PostgreSQL layer's checkpoints: one row per session in
 * `palimpsest_checkpoints` (see `schema.ts`), holding the text
 * `src/log/checkpoint.ts` encodes and verifies.
 *
 * - **Written atomically.** Only the writer claim's holder writes it, on
 *   its own connection, with one `INSERT … ON CONFLICT DO UPDATE`: a reader
 *   sees the old row or the new one, never a torn one (and the
 *   checkpoint's own hash catches anything else).
 * - **Read at open with its boundary.** One query reads the checkpoint row
 *   (only when it is no larger than the bound for the log's size and the
 *   open's `maxLineBytes`: a larger one is `unreadable` unread) and the
 *   event row just before its seq; the checkpoint is checked against
 *   itself, the head row's header and that line; the rows it references by
 *   seq (the surface nodes before its first held seq, then every row from
 *   there to its seq) are read and each must decode to its seq's event;
 *   the surface is restored, and the rows from its seq on are streamed onto
 *   it (`read.ts`). Whatever does not match (the checkpoint, or the rows after
 *   it) is reported as `checkpointRejected` and the open replays the whole
 *   log, which is then the authority on every error.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import type { SqlClient } from "effect/sql/SqlClient";
import type * as Statement from "effect/sql/Statement";
import { FORMAT_VERSION } from "../core/event.ts";
import {
  checkHeader,
  type CheckpointRejected,
  decodeCheckpoint,
  readsOfCheckpoint,
  type ReferencedEvents,
  sinceOf,
} from "../log/checkpoint.ts";
import { decodeReferencedLine, makeRunBudget } from "../log/line.ts";
import type { Vocabulary } from "../core/decode.ts";
import type { SessionEvent } from "../core/event.ts";
import { decodeSessionHeader } from "../log/codec.ts";
import { decodeHeaderText } from "../log/line.ts";
import type { LoadedLog } from "../log/reader.ts";
import type { LogReadError } from "../log/errors.ts";
import type { SessionHeader } from "../session/session.ts";
import type { SessionSeq } from "../core/seq.ts";
import type { StorageError } from "../store/errors.ts";
import type { OpenOptions } from "../store/store.ts";
import { readOptionsOf, reportOf } from "../store/open.ts";
import {
  checkpointBound,
  type CheckpointMark,
  type LoadedFrom,
  loadWhole,
  oversized,
  type ResolvedPolicy,
  restoreAndRead,
} from "../store/checkpoints.ts";
import {
  type Failed,
  type HeadRow,
  readEventPage,
  readHeadRow,
} from "./rows.ts";
import { readStoredSession } from "./read.ts";
import { CHECKPOINTS_TABLE, EVENTS_TABLE } from "./schema.ts";

/** A stored checkpoint and the event line just before its seq. */
interface CheckpointRow {
  /** The checkpoint's text (undefined: over the bound, not read). */
  readonly body: string | undefined;
  /** Its size in bytes. */
  readonly size: number;
  /** The bound it was read under. */
  readonly bound: number;
  /** The line of the event at its `seq - 1`, if the log has one. */
  readonly lastLine: string | undefined;
}

/**
 * Replaces the checkpoint of session `id`: one statement, so the row is
 * the old one or the new one.
 *
 * @param client The writer's connection.
 * @param id The session id.
 * @param seq The seq the checkpoint covers up to.
 * @param text The checkpoint's text.
 * @returns The statement.
 */
export const putCheckpoint = (
  client: SqlClient,
  id: string,
  seq: number,
  text: string,
): Statement.Statement<object> =>
  client.unsafe(
    `INSERT INTO ${CHECKPOINTS_TABLE} (session_id, seq, body) VALUES ($1, $2, $3)
     ON CONFLICT (session_id) DO UPDATE
       SET seq = EXCLUDED.seq, body = EXCLUDED.body, written_at = now()`,
    [id, seq, text],
  );

/**
 * The checkpoint row of `id` and its boundary line; undefined for none. A
 * body over `bound` bytes is not sent.
 */
const readCheckpointRow = (
  client: SqlClient,
  id: string,
  bound: number,
): Effect.Effect<CheckpointRow | undefined> =>
  Effect.map(
    client.unsafe<
      { body: string | null; size: number | bigint; line: string | null }
    >(
      `SELECT CASE WHEN octet_length(c.body) <= $2 THEN c.body END AS body,
         octet_length(c.body) AS size, e.line FROM ${CHECKPOINTS_TABLE} c
       LEFT JOIN ${EVENTS_TABLE} e ON e.session_id = c.session_id AND e.seq = c.seq - 1
       WHERE c.session_id = $1`,
      [id, bound],
    ),
    (rows): CheckpointRow | undefined => {
      const row = rows[0];
      return row === undefined ? undefined : {
        body: row.body ?? undefined,
        size: Number(row.size),
        bound,
        lastLine: row.line ?? undefined,
      };
    },
  ).pipe(
    // An unreadable checkpoint (no table yet, a lost row) is no checkpoint:
    // it is derived data, and the whole read reports a real failure.
    Effect.orElseSucceed(() => undefined),
  );

/** Seqs read through between two referenced rows in one query. */
const GAP = 64;

/**
 * Reads the rows a checkpoint references: the surface nodes before its
 * first held seq (runs of near seqs one range each), then every row from
 * there to its seq; undefined when one is missing or does not decode to
 * its seq's event.
 */
const readReferencedRows = (
  client: SqlClient,
  id: string,
  [pinned, heldFrom, seq]: readonly [
    pinned: ReadonlyArray<number>,
    heldFrom: number,
    seq: number,
  ],
  vocabulary: Vocabulary | undefined,
  pageSize: number,
  failed: Failed,
): Effect.Effect<ReferencedEvents | undefined, StorageError> =>
  Effect.gen(function* () {
    const runs = makeRunBudget();
    const found = new Map<number, SessionEvent>();
    const wanted = new Set(pinned);
    const sorted = [...pinned].sort((a, b) => a - b);
    /** Reads `[from, to)`, keeping the wanted rows (all when `keep`). */
    const readRange = (from: number, to: number, keep: boolean) =>
      Effect.gen(function* () {
        let at = from;
        while (at < to) {
          const rows = yield* readEventPage(
            client,
            id,
            at,
            to,
            pageSize,
            failed,
          );
          for (const row of rows) {
            if (!keep && !wanted.has(row.seq)) continue;
            const event = decodeReferencedLine(
              row.line,
              row.seq,
              runs,
              vocabulary,
            );
            if (event === undefined) return false;
            found.set(row.seq, event);
          }
          const last = rows[rows.length - 1];
          if (last === undefined) return true;
          at = last.seq + 1;
        }
        return true;
      });
    let i = 0;
    while (i < sorted.length) {
      const from = sorted[i] ?? 0;
      let to = from + 1;
      while (i + 1 < sorted.length && (sorted[i + 1] ?? 0) - to <= GAP) {
        to = (sorted[++i] ?? 0) + 1;
      }
      i++;
      if (!(yield* readRange(from, to, false))) return undefined;
    }
    const pinnedEvents: SessionEvent[] = [];
    for (const at of pinned) {
      const event = found.get(at);
      if (event === undefined) return undefined;
      pinnedEvents.push(event);
    }
    found.clear();
    if (!(yield* readRange(heldFrom, seq, true))) return undefined;
    const held: SessionEvent[] = [];
    for (let at = heldFrom; at < seq; at++) {
      const event = found.get(at);
      if (event === undefined) return undefined;
      held.push(event);
    }
    return { pinned: pinnedEvents, held };
  });

/** The head row's header, when it is of the current version. */
const currentHeader = (head: HeadRow): SessionHeader | undefined => {
  const line = decodeHeaderText(head.header);
  if (Result.isFailure(line) || line.success.version !== FORMAT_VERSION) {
    return undefined;
  }
  const header = decodeSessionHeader(line.success.raw);
  return Result.isSuccess(header) ? header.success : undefined;
};

type Tried =
  | {
    readonly _tag: "Used";
    readonly log: LoadedLog;
    readonly seq: SessionSeq;
    readonly mark: CheckpointMark;
  }
  | { readonly _tag: "Rejected"; readonly rejected: CheckpointRejected };

const rejectedAt = (
  seq: number | undefined,
  problem: CheckpointRejected["problem"],
  detail: string,
): Tried => ({ _tag: "Rejected", rejected: { problem, seq, detail } });

/** Opens the session from a checkpoint row, or says why not. */
const fromRow = <E>(
  client: SqlClient,
  id: string,
  headRead: HeadRow,
  pageSize: number,
  failed: Failed,
  options: OpenOptions<E>,
  strict: boolean,
  row: CheckpointRow,
): Effect.Effect<Tried> =>
  Effect.gen(function* () {
    if (row.body === undefined) {
      return { _tag: "Rejected", rejected: oversized(row) } as const;
    }
    const decoded = decodeCheckpoint(row.body);
    if (Result.isFailure(decoded)) {
      return { _tag: "Rejected", rejected: decoded.failure } as const;
    }
    const candidate = decoded.success;
    const seq = candidate.seq;
    const header = currentHeader(headRead);
    if (header === undefined) {
      return rejectedAt(seq, "stale", "the log's header is unreadable");
    }
    const foreign = checkHeader(candidate, header);
    if (foreign !== undefined) {
      return { _tag: "Rejected", rejected: foreign } as const;
    }
    let head = headRead;
    if (seq > head.nextSeq) {
      // A writer appended and wrote this checkpoint after the head row was
      // read (a checkpoint is written after its batch commits): the head
      // read now covers it, unless the log really ends before it.
      const now = yield* readHeadRow(client, id, failed).pipe(
        Effect.orElseSucceed(() => undefined),
      );
      if (now === undefined || seq > now.nextSeq) {
        return rejectedAt(seq, "stale", `the log ends at seq ${head.nextSeq}`);
      }
      head = now;
    }
    if (row.lastLine === undefined) {
      return rejectedAt(seq, "stale", `the log has no event ${seq - 1}`);
    }
    const reads = readsOfCheckpoint(candidate);
    const events = yield* readReferencedRows(
      client,
      id,
      [reads.pinned, reads.heldFrom, seq],
      options.vocabulary,
      pageSize,
      failed,
    ).pipe(Effect.orElseSucceed(() => undefined));
    const outcome = yield* restoreAndRead(
      candidate,
      { header, lastLine: row.lastLine },
      events,
      options.vocabulary,
      (session, lines) =>
        readStoredSession(
          client,
          id,
          head,
          pageSize,
          failed,
          readOptionsOf(options, strict),
          { session, lines },
        ),
    );
    if (outcome._tag !== "Used") return outcome;
    return {
      _tag: "Used",
      log: outcome.log,
      seq,
      mark: { seq, since: sinceOf(candidate) },
    } as const;
  });

/**
 * An open's load: from the session's checkpoint when the layer keeps them,
 * the open allows it and it matches; else the whole log, with a rejected
 * checkpoint in the report.
 *
 * @param client The connection to read through.
 * @param id The session id.
 * @param head Its head row.
 * @param pageSize Rows per query of the file reader's path.
 * @param failed How a failed SQL call is reported.
 * @param policy The layer's policy (undefined: checkpoints are off).
 * @param options The open's options.
 * @param strict Whether a write handle is being opened.
 * @returns The load.
 */
export const loadStored = <E>(
  client: SqlClient,
  id: string,
  head: HeadRow,
  pageSize: number,
  failed: Failed,
  policy: ResolvedPolicy | undefined,
  options: OpenOptions<E>,
  strict: boolean,
): Effect.Effect<LoadedFrom, LogReadError | StorageError | E> =>
  Effect.gen(function* () {
    let rejected: CheckpointRejected | undefined;
    if (policy !== undefined && options.wholeLog !== true) {
      const row = yield* readCheckpointRow(
        client,
        id,
        checkpointBound(head.bytes, options.maxLineBytes),
      );
      if (row !== undefined) {
        const tried = yield* fromRow(
          client,
          id,
          head,
          pageSize,
          failed,
          options,
          strict,
          row,
        );
        if (tried._tag === "Used") {
          return {
            log: tried.log,
            report: {
              ...reportOf(tried.log, tried.seq),
              checkpoint: tried.seq,
            },
            mark: tried.mark,
          };
        }
        rejected = tried.rejected;
      }
    }
    // Without `wholeLog`, a long log's session holds only its surface and
    // the work still open, as with a checkpoint.
    return yield* loadWhole(
      (read) => readStoredSession(client, id, head, pageSize, failed, read),
      options,
      strict,
      policy,
      rejected,
    );
  });
