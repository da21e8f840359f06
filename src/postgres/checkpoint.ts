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
 *   and the event row just before its seq; the checkpoint is checked
 *   against itself, the head row's header and that line, the surface it
 *   holds is restored, and the rows from its seq on are streamed onto it
 *   (`read.ts`). Whatever does not match (the checkpoint, or the rows after
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
import { FORMAT_VERSION } from "../event.ts";
import {
  checkHeader,
  type CheckpointRejected,
  decodeCheckpoint,
  sinceOf,
} from "../log/checkpoint.ts";
import { decodeSessionHeader } from "../log/codec.ts";
import { decodeHeaderText } from "../log/line.ts";
import type { LoadedLog } from "../log/reader.ts";
import type { LogReadError } from "../log/errors.ts";
import type { SessionHeader } from "../session.ts";
import type { SessionSeq } from "../seq.ts";
import type { StorageError } from "../store/errors.ts";
import type { OpenOptions } from "../store/store.ts";
import { readOptionsOf, reportOf } from "../store/open.ts";
import {
  type CheckpointMark,
  HOLD_LOG_UP_TO,
  type LoadedFrom,
  type ResolvedPolicy,
  restoreAndRead,
} from "../store/checkpoints.ts";
import { type Failed, type HeadRow, readHeadRow } from "./rows.ts";
import { readStoredSession } from "./read.ts";
import { CHECKPOINTS_TABLE, EVENTS_TABLE } from "./schema.ts";

/** A stored checkpoint and the event line just before its seq. */
interface CheckpointRow {
  /** The checkpoint's text. */
  readonly body: string;
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

/** The checkpoint row of `id` and its boundary line; undefined for none. */
const readCheckpointRow = (
  client: SqlClient,
  id: string,
): Effect.Effect<CheckpointRow | undefined> =>
  Effect.map(
    client.unsafe<{ body: string; line: string | null }>(
      `SELECT c.body, e.line FROM ${CHECKPOINTS_TABLE} c
       LEFT JOIN ${EVENTS_TABLE} e ON e.session_id = c.session_id AND e.seq = c.seq - 1
       WHERE c.session_id = $1`,
      [id],
    ),
    (rows): CheckpointRow | undefined => {
      const row = rows[0];
      return row === undefined
        ? undefined
        : { body: row.body, lastLine: row.line ?? undefined };
    },
  ).pipe(
    // An unreadable checkpoint (no table yet, a lost row) is no checkpoint:
    // it is derived data, and the whole read reports a real failure.
    Effect.orElseSucceed(() => undefined),
  );

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
    const outcome = yield* restoreAndRead(
      candidate,
      { header, lastLine: row.lastLine },
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
      const row = yield* readCheckpointRow(client, id);
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
    const read = readOptionsOf(options, strict);
    const log = yield* readStoredSession(
      client,
      id,
      head,
      pageSize,
      failed,
      options.wholeLog === true
        ? read
        : { ...read, holdLogUpTo: policy?.holdLogUpTo ?? HOLD_LOG_UP_TO },
    );
    return {
      log,
      report: rejected === undefined
        ? reportOf(log)
        : { ...reportOf(log), checkpointRejected: rejected },
      mark: { seq: 0, since: undefined },
    };
  });
