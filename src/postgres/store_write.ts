/**
 * The writing steps of the PostgreSQL store, each a transaction on the
 * writer's own connection and the reading of how it ended:
 * {@link createSession} ({@link createTransaction}, {@link createEnded})
 * and {@link appendEvents} ({@link appendTransaction},
 * {@link appendEnded}). The claim the writer holds is `claim.ts`'s; the
 * transaction runner and the statements are `rows.ts`'s. Each step takes
 * the store's state record (`store_state.ts`).
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Result from "effect/Result";
import type { SqlClient } from "effect/sql/SqlClient";
import type { SqlError } from "effect/sql/SqlError";
import { FORMAT_VERSION } from "../core/event.ts";
import {
  knownEvents,
  type Session,
  type SessionHeader,
} from "../session/session.ts";
import { encodeHeaderLine } from "../log/codec.ts";
import { checkSessionId } from "../store/ids.ts";
import {
  type AppendOutcomeUnknown,
  SessionAlreadyExists,
  StorageError,
  WriterClaimLost,
} from "../store/errors.ts";
import { SessionSeq } from "../core/seq.ts";
import type { SessionHandle, WriteError } from "../store/store.ts";
import type { StoreCore } from "../store/core.ts";
import { writeNewEvents } from "../store/handles.ts";
import { createdFrom, wholeReport } from "../store/open.ts";
import type { HandleState } from "./claim.ts";
import { WRITE_KEY } from "./locks.ts";
import {
  type AppendBatch,
  appendRows,
  brokeConnection,
  byteLength,
  insertRows,
  rowsOf,
  sqlState,
  transact,
  type Transacted,
} from "./rows.ts";
import { SESSIONS_TABLE } from "./schema.ts";
import { writeCatalogue } from "./catalogue.ts";
import { catalogueChange } from "../store/catalogue.ts";
import { type PostgresStoreState, writerState } from "./store_state.ts";
import {
  checkpointAfterBatch,
  scopedHandle,
  withHandleScope,
} from "./store_handle.ts";

/**
 * A new session as its create transaction writes it: a batch from seq 0
 * whose bytes are the whole log's, and the header line.
 */
export interface CreatedRows extends AppendBatch {
  /** The session's header. */
  readonly header: SessionHeader;
  /** Its header line, without `\n`. */
  readonly text: string;
}

/**
 * The create transaction: under the session's write lock, the head row
 * (unless one exists: `SessionAlreadyExists`) and the events, together, so
 * that a created session is whole or absent.
 *
 * @param client The writer's connection.
 * @param created The session's rows.
 * @returns How the transaction ended.
 */
export const createTransaction = (
  client: SqlClient,
  created: CreatedRows,
): Effect.Effect<Transacted<void, SessionAlreadyExists>> =>
  transact(
    client,
    Effect.gen(function* () {
      const { header } = created;
      yield* client.unsafe(
        `SELECT count(*) AS n FROM (SELECT pg_advisory_xact_lock(${WRITE_KEY})) AS l`,
        [header.id],
      );
      const made = yield* client.unsafe<{ id: string }>(
        `INSERT INTO ${SESSIONS_TABLE} (id, version, header, next_seq, bytes, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING id`,
        [
          header.id,
          FORMAT_VERSION,
          created.text,
          created.to,
          created.bytes,
          header.createdAt,
        ],
      );
      if (made.length === 0) {
        return yield* new SessionAlreadyExists({ id: header.id });
      }
      yield* insertRows(client, created.rows);
      yield* writeCatalogue(client, header.id, created.catalogue);
    }),
  );

/**
 * What a create whose transaction `ended` so comes to: the handle when the
 * session is stored (one whose `COMMIT` went unanswered but is found
 * stored cannot write); else why not.
 *
 * @param store The store.
 * @param state The writer's state.
 * @param handle The handle on the new session.
 * @param ended How the create transaction ended.
 * @param created The session's rows.
 * @param session The session created.
 * @returns The handle.
 */
export const createEnded = (
  store: PostgresStoreState,
  state: HandleState,
  handle: SessionHandle,
  ended: Transacted<void, SessionAlreadyExists>,
  created: CreatedRows,
  session: Session,
): Effect.Effect<
  SessionHandle,
  SessionAlreadyExists | StorageError | AppendOutcomeUnknown
> =>
  Effect.gen(function* () {
    const { header } = created;
    switch (ended._tag) {
      case "Committed":
        return handle;
      case "NotCommitted": {
        const error = ended.error;
        return yield* error._tag === "SqlError"
          ? store.failed("create a session in", header.id)(error)
          : error;
      }
      case "CommitUnsettled": {
        const { stored } = yield* store.claims.settleUnanswered(
          state,
          header.id,
          ended.error,
          {
            header: created.text,
            from: 0,
            to: created.to,
            lines: created.rows.map((row) => row.line),
          },
          {
            events: created.rows.length,
            batch: knownEvents(session, SessionSeq.make(0)),
            header,
          },
        );
        // Stored: the session exists, but the handle cannot write.
        if (stored) return handle;
        return yield* new StorageError({
          operation:
            `create a session (the connection broke) in ${store.address}`,
          id: header.id,
          code: "connection",
          cause: ended.error,
        });
      }
    }
  });

/**
 * The store's `create`: claims the new session on a writer's connection,
 * then writes it in one transaction.
 *
 * @param store The store.
 * @param init The header, or the session, to create.
 * @param options The vocabulary.
 * @returns A write handle held by the caller's scope.
 */
export const createSession = (
  store: PostgresStoreState,
  init: Parameters<StoreCore["create"]>[0],
  options: Parameters<StoreCore["create"]>[1],
): ReturnType<StoreCore["create"]> =>
  Effect.suspend((): ReturnType<StoreCore["create"]> => {
    const { header, session } = createdFrom(init, options);
    const checked = checkSessionId(header.id);
    if (Result.isFailure(checked)) return Effect.fail(checked.failure);
    const text = encodeHeaderLine(header).slice(0, -1);
    const { rows, bytes } = rowsOf(session, 0);
    const created: CreatedRows = {
      id: header.id,
      from: 0,
      to: session.surface.nextSeq,
      rows,
      bytes: byteLength(text) + 1 + bytes,
      address: store.address,
      header,
      text,
      catalogue: catalogueChange(
        session,
        knownEvents(session, SessionSeq.make(0)),
      ),
    };
    return scopedHandle(
      store,
      withHandleScope(store, (scope) =>
        Effect.gen(function* () {
          const claimed = yield* store.claims.claim(header.id, scope);
          const state = writerState(claimed, scope, session, {
            seq: 0,
            since: undefined,
          });
          const handle = store.handles.make(
            header.id,
            "write",
            wholeReport(rows.length),
            state,
          );
          const ended = yield* createTransaction(claimed.client, created);
          return yield* createEnded(
            store,
            state,
            handle,
            ended,
            created,
            session,
          );
        })),
    );
  });

/**
 * The append transaction: locks the head row, checks it is at the batch's
 * first seq, inserts the rows, moves the head and notifies followers.
 *
 * @param client The writer's connection.
 * @param batch The batch.
 * @returns How the transaction ended.
 */
export const appendTransaction = (
  client: SqlClient,
  batch: AppendBatch,
): Effect.Effect<Transacted<void, StorageError>> =>
  transact(client, appendRows(client, batch));

/**
 * What an append whose transaction `ended` so comes to. Before `COMMIT`
 * nothing is stored: a broken connection took the claim with it, and the
 * handle refuses further writes (`state.lostClaim`). A `COMMIT` left
 * without an answer is settled on a fresh connection (`claim.ts`).
 *
 * @param store The store (its reporting and its claims).
 * @param state The writer's state.
 * @param ended How the transaction ended.
 * @param batch The batch, and the session it came from.
 * @returns Succeeds when the batch is stored.
 */
export const appendEnded = (
  store: Pick<PostgresStoreState, "failed" | "claims">,
  state: HandleState,
  ended: Transacted<void, StorageError>,
  batch: AppendBatch & { readonly from: SessionSeq; readonly next: Session },
): Effect.Effect<void, WriteError> =>
  Effect.gen(function* () {
    const { id, from, to } = batch;
    switch (ended._tag) {
      case "Committed":
        return;
      case "NotCommitted": {
        const error = ended.error;
        if (error._tag !== "SqlError") return yield* error;
        if (brokeConnection(error)) {
          const lost = new WriterClaimLost({
            id,
            cause: store.failed("append in", id)(error),
          });
          state.lostClaim = lost;
          return yield* lost;
        }
        return yield* store.failed(appendFailure(error), id)(error);
      }
      case "CommitUnsettled": {
        const { stored, lost } = yield* store.claims.settleUnanswered(
          state,
          id,
          ended.error,
          {
            header: undefined,
            from,
            to,
            lines: batch.rows.map((row) => row.line),
          },
          {
            events: to - from,
            batch: knownEvents(batch.next, from),
            header: undefined,
          },
        );
        // Stored: the append succeeded; later writes are refused.
        if (stored) return;
        return yield* lost;
      }
    }
  });

/** The operation a failed append names, by the SQL state. */
const appendFailure = (error: SqlError): string =>
  sqlState(error) === "23505"
    ? "append (a seq is already taken) in"
    : "append in";

/**
 * The write of the store's `commit`: the events of `next` past the
 * handle's session in one transaction on the writer's connection; a writer
 * whose append failed may have lost its claim or its connection, so it
 * stops (the caller opens the session again). Once the batch is durable
 * and the handle's session is `next`, the checkpoint the policy asks for
 * (an interruption there cannot make a stored batch look unstored).
 *
 * @param store The store.
 * @param handle The write handle.
 * @param state The state behind it.
 * @param next The session to store.
 * @returns `next`, once stored.
 */
export const appendEvents = (
  store: PostgresStoreState,
  handle: SessionHandle,
  state: HandleState,
  next: Session,
): Effect.Effect<Session, WriteError> =>
  Effect.tap(
    writeNewEvents(
      handle,
      state,
      next,
      state.client,
      (client, from, to): Effect.Effect<void, WriteError> => {
        const { rows, bytes } = rowsOf(next, from);
        const batch = {
          id: handle.id,
          from,
          to,
          rows,
          bytes,
          address: store.address,
          catalogue: catalogueChange(next, knownEvents(next, from)),
        };
        return Effect.flatMap(
          appendTransaction(client, batch),
          (ended) => appendEnded(store, state, ended, { ...batch, next }),
        ).pipe(
          Effect.onExit((exit) =>
            Exit.isSuccess(exit) ? Effect.void : store.claims.release(state)
          ),
        );
      },
    ),
    () => checkpointAfterBatch(store, state, next),
  );
