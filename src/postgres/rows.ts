/**
 * The PostgreSQL store's rows and transactions: the head row and the event
 * rows (one canonical JSONL line each), reading them in pages, encoding a
 * session's events as rows and inserting them, a write transaction run by
 * hand with its three outcomes, and how a failed SQL call is reported.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Option from "effect/Option";
import * as Result from "effect/Result";
import * as Stream from "effect/Stream";
import type { SqlClient } from "effect/sql/SqlClient";
import type { SqlError } from "effect/sql/SqlError";
import type { MigrationError } from "effect/sql/Migrator";
import { knownEvents, type Session } from "../session/session.ts";
import { SessionSeq } from "../core/seq.ts";
import { encodeEventLine } from "../log/codec.ts";
import { errorCode } from "../fs/io.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../log/reader.ts";
import { redactAddress } from "../store/redact.ts";
import { StorageError, WriterClaimLost } from "../store/errors.ts";
import { EVENTS_TABLE, SESSIONS_TABLE } from "./schema.ts";
import {
  appendStatement,
  MISMATCH_STATEMENT,
  MORE_ROWS_STATEMENT,
} from "./lease.ts";
import { writeCatalogue } from "./catalogue.ts";
import type { CatalogueChange } from "../store/catalogue.ts";

/**
 * The longest message from the server the store's connections accept: an
 * event row whose line is as long as a read accepts by default (256 MiB),
 * with room for the row around it. The driver's own bound (16 MiB) let a
 * longer line be stored and then refused every read of its session.
 */
export const MAX_MESSAGE_BYTES: number = DEFAULT_MAX_LINE_BYTES + 1024 * 1024;

/**
 * A stored event: its session, its seq, its line without `\n`. (A type, not
 * an interface: the driver's `insert` wants a record.)
 */
export type EventRow = {
  /** The session id. */
  readonly session_id: string;
  /** The event's seq. */
  readonly seq: number;
  /** The event's canonical line, without `\n`. */
  readonly line: string;
};

/** A session's head row, as a reader reads it. */
export interface HeadRow {
  /** The header line, without `\n`. */
  readonly header: string;
  /** The format version. */
  readonly version: number;
  /** The seq the next event takes: the rows below it are the log. */
  readonly nextSeq: number;
  /** The log's size as a JSONL file. */
  readonly bytes: number;
}

const encoder = new TextEncoder();

/** The UTF-8 length of a text, as stored. */
export const byteLength = (text: string): number => encoder.encode(text).length;
/** Rows read per query by default. */
export const DEFAULT_PAGE = 1000;
/** Rows one `INSERT` carries. */
const INSERT_CHUNK = 1000;

/** The URL without its secrets, for messages and handles. */
export const displayAddress = (url: string): string => redactAddress(url);

const UNDEFINED_TABLE = "42P01";

/** The SQL state the driver gave a failed call (`42P01`, `23505`, ...). */
export const sqlState = (error: SqlError): string | undefined =>
  errorCode(error.reason.cause);

/**
 * Whether a failed call shows the connection gone: the driver lost it, or
 * the server ended the session (class 08, `57P0x` such as
 * `pg_terminate_backend`'s `57P01`, `25P03` an idle transaction's timeout).
 * A connection that is gone took the writer's claim with it.
 */
export const brokeConnection = (error: SqlError): boolean =>
  error.reason._tag === "ConnectionError" ||
  /^(08|57P0|25P03)/.test(sqlState(error) ?? "");

/** How a write transaction ended. */
export type Transacted<A, E> =
  /** `COMMIT` answered: the batch is stored. */
  | { readonly _tag: "Committed"; readonly value: A }
  /** It failed before `COMMIT` was sent: nothing is stored. */
  | { readonly _tag: "NotCommitted"; readonly error: E | SqlError }
  /** `COMMIT` was sent and no answer settles it (`error` why). */
  | { readonly _tag: "CommitUnsettled"; readonly error: unknown };

/** The command tag a raw result of the driver carries. */
const commandOf = (raw: unknown): unknown =>
  typeof raw === "object" && raw !== null && "command" in raw
    ? raw.command
    : undefined;

/**
 * Runs `body` in a transaction on `client`, by hand rather than with
 * `withTransaction`, whose rollback on a broken connection is a defect and
 * which cannot tell a `COMMIT` that failed from one whose answer was lost.
 * Interruption is not caught: the caller closes the connection, and the
 * server rolls back what it did not commit.
 */
export const transact = <A, E>(
  client: SqlClient,
  body: Effect.Effect<A, E | SqlError>,
): Effect.Effect<Transacted<A, E>> =>
  Effect.gen(function* () {
    const begun = yield* Effect.result(client.unsafe("BEGIN"));
    if (Result.isFailure(begun)) {
      return { _tag: "NotCommitted", error: begun.failure } as const;
    }
    const ran = yield* Effect.result(body);
    if (Result.isFailure(ran)) {
      // A live connection rolls back here; a broken one already has: a
      // transaction never outlives its connection.
      yield* Effect.ignore(client.unsafe("ROLLBACK"));
      return { _tag: "NotCommitted", error: ran.failure } as const;
    }
    const committed = yield* Effect.result(client.unsafe("COMMIT").raw);
    if (Result.isFailure(committed)) {
      // Even an error answer may come after the commit is durable (a
      // backend terminated while it waits for a synchronous standby).
      return { _tag: "CommitUnsettled", error: committed.failure } as const;
    }
    const command = commandOf(committed.success);
    return command === "COMMIT"
      ? { _tag: "Committed", value: ran.success } as const
      : { _tag: "CommitUnsettled", error: command } as const;
  });

/**
 * How a failed SQL call is reported, for a store at `address`: a
 * `StorageError` whose code is the SQL state (or the Migrator's kind) and
 * whose cause is the SqlError itself.
 */
export type Failed = (
  operation: string,
  id?: string,
) => (error: SqlError | MigrationError) => StorageError;

export const failedAt =
  (address: string): Failed => (operation, id) => (error) =>
    new StorageError({
      operation: `${operation} ${address}`,
      id,
      code: "_tag" in error && error._tag === "SqlError"
        ? sqlState(error) ?? error.reason._tag
        : error.kind,
      cause: error,
    });

/** The head row of a session, or undefined (no row, or no table yet). */
export const readHeadRow = (
  client: SqlClient,
  id: string,
  failed: Failed,
): Effect.Effect<HeadRow | undefined, StorageError> =>
  Effect.map(
    client.unsafe<
      {
        header: string;
        version: number;
        next_seq: bigint | number;
        bytes: bigint | number;
      }
    >(
      `SELECT header, version, next_seq, bytes FROM ${SESSIONS_TABLE} WHERE id = $1`,
      [id],
    ),
    (rows): HeadRow | undefined => {
      const row = rows[0];
      return row === undefined ? undefined : {
        header: row.header,
        version: row.version,
        nextSeq: Number(row.next_seq),
        bytes: Number(row.bytes),
      };
    },
  ).pipe(
    Effect.catchIf(
      (error) => sqlState(error) === UNDEFINED_TABLE,
      () => Effect.succeed(undefined),
    ),
    Effect.mapError(failed("read the head of")),
  );

/** One page of event lines, `[from, end)`, at most `limit` rows. */
export const readEventPage = (
  client: SqlClient,
  id: string,
  from: number,
  end: number | undefined,
  limit: number,
  failed: Failed,
): Effect.Effect<
  ReadonlyArray<{ readonly seq: number; readonly line: string }>,
  StorageError
> =>
  Effect.map(
    end === undefined
      ? client.unsafe<{ seq: bigint | number; line: string }>(
        `SELECT seq, line FROM ${EVENTS_TABLE} WHERE session_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
        [id, from, limit],
      )
      : client.unsafe<{ seq: bigint | number; line: string }>(
        `SELECT seq, line FROM ${EVENTS_TABLE} WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq LIMIT $4`,
        [id, from, end, limit],
      ),
    (rows) => rows.map((row) => ({ seq: Number(row.seq), line: row.line })),
  ).pipe(Effect.mapError(failed("read the events of")));

/** The stored log as JSONL bytes: the header line, then pages of lines. */
export const storedLogBytes = (
  client: SqlClient,
  id: string,
  head: HeadRow,
  pageSize: number,
  failed: Failed,
): Stream.Stream<Uint8Array, StorageError> =>
  Stream.concat(
    Stream.make(encoder.encode(`${head.header}\n`)),
    Stream.paginate(0, (from: number) =>
      Effect.map(
        from >= head.nextSeq
          ? Effect.succeed([])
          : readEventPage(client, id, from, head.nextSeq, pageSize, failed),
        (rows) => {
          const last = rows[rows.length - 1];
          const text = rows.map((row) => `${row.line}\n`).join("");
          return [
            text.length === 0 ? [] : [encoder.encode(text)],
            last === undefined || rows.length < pageSize
              ? Option.none()
              : Option.some(last.seq + 1),
          ] as const;
        },
      )),
  );

/** Event rows of `session` from seq `from` on, and their bytes. */
export const rowsOf = (
  session: Session,
  from: number,
): { readonly rows: ReadonlyArray<EventRow>; readonly bytes: number } => {
  const encodeOptions = session.vocabulary === undefined
    ? undefined
    : { vocabulary: session.vocabulary };
  const rows: EventRow[] = [];
  let bytes = 0;
  const id = session.header.id;
  for (const event of knownEvents(session, SessionSeq.make(from))) {
    const line = encodeEventLine(event, encodeOptions);
    bytes += encoder.encode(line).length;
    rows.push({ session_id: id, seq: event.seq, line: line.slice(0, -1) });
  }
  return { rows, bytes };
};

/** An append's batch, as {@link appendBatch} writes it. */
export interface AppendBatch {
  /** The session id. */
  readonly id: string;
  /** The seq the head must be at. */
  readonly from: number;
  /** The head's seq after the batch. */
  readonly to: number;
  /** The batch's rows. */
  readonly rows: ReadonlyArray<EventRow>;
  /** The bytes the rows add to the log. */
  readonly bytes: number;
  /** The store's address without secrets, for messages. */
  readonly address: string;
  /** What the batch changes in the session's catalogue columns. */
  readonly catalogue?: CatalogueChange | undefined;
}

/** How a writer writes: its token and lease, and whether appends notify. */
export interface WriteLease {
  /** The writer's fencing token. */
  readonly token: string;
  /** The lease each write renews, in seconds. */
  readonly leaseSeconds: number;
  /** Whether an append signals followers with `pg_notify`. */
  readonly notify: boolean;
}

/**
 * Runs `body` with every statement of `pool` on one connection of it
 * (taken for the body, given back after), so that a transaction run by
 * hand stays on its connection. A body that fails leaves no transaction
 * open on the connection it gives back.
 */
export const onOneConnection = <A, E, R>(
  pool: SqlClient,
  body: Effect.Effect<A, E, R>,
): Effect.Effect<A, E | SqlError, R> =>
  Effect.scoped(
    Effect.flatMap(pool.reserve, (connection) =>
      Effect.provideService(
        Effect.onExit(body, (exit) =>
          exit._tag === "Success" ? Effect.void : Effect.ignore(
            Effect.timeoutOption(pool.unsafe("ROLLBACK"), 2000),
          )),
        pool.transactionService,
        [connection, 0],
      )),
  );

/** The rows' seqs and lines as the two arrays a statement takes. */
const columnsOf = (
  rows: ReadonlyArray<EventRow>,
): readonly [ReadonlyArray<number>, ReadonlyArray<string>] => [
  rows.map((row) => row.seq),
  rows.map((row) => row.line),
];

/**
 * Rows, in chunks a statement carries: at most {@link INSERT_CHUNK} rows
 * or about 32 MiB of lines each.
 */
export const chunksOf = (
  rows: ReadonlyArray<EventRow>,
): ReadonlyArray<ReadonlyArray<EventRow>> => {
  const chunks: Array<ReadonlyArray<EventRow>> = [];
  let start = 0;
  let size = 0;
  for (let i = 0; i < rows.length; i++) {
    size += rows[i]?.line.length ?? 0;
    if (i + 1 - start >= INSERT_CHUNK || size >= CHUNK_CHARS) {
      chunks.push(rows.slice(start, i + 1));
      start = i + 1;
      size = 0;
    }
  }
  if (start < rows.length || chunks.length === 0) {
    chunks.push(rows.slice(start));
  }
  return chunks;
};

/** About how many characters of lines one statement carries. */
const CHUNK_CHARS = 32 * 1024 * 1024;

/**
 * A write as one statement (when `alone` allows it), or as a transaction
 * when its rows take more than one: the first statement is `first` (with
 * the first chunk), the others insert `MORE_ROWS_STATEMENT` chunks.
 * `first` answers with no row when it wrote nothing; then `refused` says
 * why; `after` runs last in the same transaction (a batch's catalogue
 * columns). A statement alone must be fenced by what it matches (an
 * append's token): one held on its way may arrive after its writer gave
 * up on it, where a transaction's statement arrives to a transaction that
 * can no longer commit.
 */
export const writeRows = <E>(
  pool: SqlClient,
  rows: ReadonlyArray<EventRow>,
  first: (
    chunk: readonly [ReadonlyArray<number>, ReadonlyArray<string>],
  ) => Effect.Effect<ReadonlyArray<unknown>, SqlError>,
  more: string,
  id: string,
  refused: Effect.Effect<never, E | SqlError>,
  alone: boolean,
  after?: Effect.Effect<void, SqlError>,
): Effect.Effect<Transacted<void, E>> => {
  const [head, ...rest] = chunksOf(rows);
  const body = Effect.gen(function* () {
    const answered = yield* first(columnsOf(head ?? []));
    if (answered.length === 0) return yield* refused;
    for (const chunk of rest) {
      yield* pool.unsafe(more, [id, ...columnsOf(chunk)]);
    }
    if (after !== undefined) yield* after;
  });
  return onOneConnection(
    pool,
    alone && rest.length === 0 && after === undefined
      ? single(body)
      : transact(pool, body),
  ).pipe(
    // The connection could not be had: nothing was sent.
    Effect.catch((error) =>
      Effect.succeed({ _tag: "NotCommitted", error } as const)
    ),
  );
};

/**
 * How one statement run outside a transaction ended: its own commit. A
 * failure the server answered stored nothing; a connection lost on the
 * way leaves the outcome to be settled.
 */
const single = <E>(
  body: Effect.Effect<void, E | SqlError>,
): Effect.Effect<Transacted<void, E>> =>
  Effect.map(Effect.result(body), (ran): Transacted<void, E> => {
    if (Result.isSuccess(ran)) return { _tag: "Committed", value: undefined };
    const error = ran.failure;
    return isSqlFailure(error) && brokeConnection(error)
      ? { _tag: "CommitUnsettled", error }
      : { _tag: "NotCommitted", error };
  });

/** Whether a failure is the driver's. */
const isSqlFailure = (error: unknown): error is SqlError =>
  typeof error === "object" && error !== null && "_tag" in error &&
  error._tag === "SqlError";

/**
 * An append: moves the head from `from` to `to` under the writer's token,
 * renews its lease and inserts the rows, in one statement (or one
 * transaction for a large batch). A refusal says why: the head moved
 * (`StorageError` `conflict`), or another writer holds the lease
 * (`WriterClaimLost`).
 *
 * @param pool The store's pool.
 * @param batch The batch.
 * @param lease The writer's token and lease.
 * @returns How the write ended.
 */
export const appendBatch = (
  pool: SqlClient,
  batch: AppendBatch,
  lease: WriteLease,
): Effect.Effect<Transacted<void, StorageError | WriterClaimLost>> => {
  const { id, from, to, bytes, address } = batch;
  const statement = lease.notify ? APPEND_NOTIFY : APPEND_QUIET;
  return writeRows(
    pool,
    batch.rows,
    ([seqs, lines]) =>
      pool.unsafe(statement, [
        id,
        from,
        to,
        bytes,
        lease.token,
        lease.leaseSeconds,
        seqs,
        lines,
        batch.catalogue?.firstText ?? null,
      ]),
    MORE_ROWS_STATEMENT,
    id,
    Effect.flatMap(
      pool.unsafe<{ next_seq: bigint | number; mine: boolean }>(
        MISMATCH_STATEMENT,
        [id, lease.token],
      ),
      (rows): Effect.Effect<never, StorageError | WriterClaimLost> => {
        const row = rows[0];
        if (row !== undefined && !row.mine) {
          return Effect.fail(
            new WriterClaimLost({
              id,
              cause: "its lease was taken over by another writer",
            }),
          );
        }
        const actual = row === undefined ? undefined : Number(row.next_seq);
        return Effect.fail(
          new StorageError({
            operation:
              `append at seq ${from} (the head says ${actual}) in ${address}`,
            id,
            code: "conflict",
            cause: undefined,
          }),
        );
      },
    ),
    true,
    // A batch that sets metadata writes its catalogue columns in the same
    // transaction (the first user text goes in the statement itself).
    batch.catalogue?.metadata === undefined
      ? undefined
      : writeCatalogue(pool, id, { ...batch.catalogue, firstText: undefined }),
  );
};

const APPEND_NOTIFY = appendStatement(true);
const APPEND_QUIET = appendStatement(false);
