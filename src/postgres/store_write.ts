/**
 * The writing steps of the PostgreSQL store, each one statement on a
 * connection of the pool (one transaction for a large batch) and the
 * reading of how it ended: {@link createSession} ({@link createRows},
 * {@link createEnded}) and {@link appendEvents} ({@link appendBatch} of
 * `rows.ts`, {@link appendEnded}). The lease the writer holds is
 * `claim.ts`'s; the statements are `lease.ts`'s. Each step takes the
 * store's state record (`store_state.ts`).
 *
 * @module
 * @internal
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Result from "effect/Result";
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
import { type HandleState, newToken } from "./claim.ts";
import {
  type AppendBatch,
  appendBatch,
  byteLength,
  rowsOf,
  sqlState,
  type Transacted,
  writeRows,
} from "./rows.ts";
import { CREATE_STATEMENT, MORE_ROWS_STATEMENT } from "./lease.ts";
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
 * The create: the head row with the writer's lease (unless one with the id
 * exists: `SessionAlreadyExists`) and the events, in one transaction, so
 * that a created session is whole or absent.
 *
 * @param store The store.
 * @param created The session's rows.
 * @param token The writer's token.
 * @returns How the write ended.
 */
export const createRows = (
  store: PostgresStoreState,
  created: CreatedRows,
  token: string,
): Effect.Effect<Transacted<void, SessionAlreadyExists>> => {
  const { header } = created;
  return writeRows(
    store.writers,
    created.rows,
    ([seqs, lines]) =>
      store.writers.unsafe(CREATE_STATEMENT, [
        header.id,
        FORMAT_VERSION,
        created.text,
        created.to,
        created.bytes,
        header.createdAt,
        token,
        store.writer,
        store.claims.leaseSeconds,
        seqs,
        lines,
      ]),
    MORE_ROWS_STATEMENT,
    header.id,
    Effect.fail(new SessionAlreadyExists({ id: header.id })),
    // Always a transaction: a new row has no token to fence a late copy
    // of its statement with.
    false,
    writeCatalogue(store.writers, header.id, created.catalogue),
  );
};

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
          const token = newToken();
          const state = writerState(store, token, scope, session, {
            seq: 0,
            since: undefined,
          });
          yield* store.claims.guard(header.id, token, () => state, scope);
          const handle = store.handles.make(
            header.id,
            "write",
            wholeReport(rows.length),
            state,
          );
          const ended = yield* createRows(store, created, token);
          const made = yield* createEnded(
            store,
            state,
            handle,
            ended,
            created,
            session,
          );
          yield* store.claims.keepAlive(header.id, state, scope);
          return made;
        })),
    );
  });

/**
 * What an append whose write `ended` so comes to. A failure the server
 * answered stored nothing; a lease taken over stops the writer
 * (`state.lostClaim`). A write left without an answer is settled on a
 * fresh connection (`claim.ts`), and the writer stops.
 *
 * @param store The store (its reporting and its claims).
 * @param state The writer's state.
 * @param ended How the transaction ended.
 * @param batch The batch, and the session it came from.
 * @returns Succeeds when the batch is stored.
 */
export const appendEnded = (
  store: Pick<PostgresStoreState, "failed" | "claims" | "address">,
  state: HandleState,
  ended: Transacted<void, StorageError | WriterClaimLost>,
  batch: AppendBatch & { readonly from: SessionSeq; readonly next: Session },
): Effect.Effect<void, WriteError> =>
  Effect.gen(function* () {
    const { id, from, to } = batch;
    switch (ended._tag) {
      case "Committed":
        return;
      case "NotCommitted": {
        const error = ended.error;
        if (error._tag === "WriterClaimLost") state.lostClaim = error;
        if (error._tag !== "SqlError") return yield* error;
        return yield* store.failed(appendFailure(error), id)(error);
      }
      case "CommitUnsettled": {
        const { stored } = yield* store.claims.settleUnanswered(
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
        return yield* state.lostClaim ??
          new WriterClaimLost({ id, cause: ended.error });
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
 * handle's session in one statement under the writer's lease (which it
 * renews); a writer whose lease was taken over stops (the caller opens the
 * session again). Once the batch is durable
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
        const token = state.token;
        if (token === undefined) {
          return Effect.fail(
            new WriterClaimLost({ id: handle.id, cause: undefined }),
          );
        }
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
          appendBatch(client, batch, {
            token,
            leaseSeconds: store.claims.leaseSeconds,
            notify: store.notify,
          }),
          (ended) => appendEnded(store, state, ended, { ...batch, next }),
        ).pipe(
          Effect.tap(() =>
            Effect.map(Clock.currentTimeMillis, (now) => {
              state.renewedAt = now;
            })
          ),
          // A writer whose append failed stops: its view of the head may
          // be wrong, or its lease gone (the caller opens the session
          // again).
          Effect.onExit((exit) =>
            Exit.isSuccess(exit)
              ? Effect.void
              : store.claims.release(handle.id, state)
          ),
        );
      },
    ),
    () => checkpointAfterBatch(store, state, next),
  );
