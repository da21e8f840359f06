/**
 * Whether a failed writer's server process can still commit, for
 * `resolveAppend`. A client that gave up on a `COMMIT` (its connection
 * cut, the answer late) leaves the server process behind it running for as
 * long as the server does not see the client gone, and that process can
 * still commit the batch and holds the session's claim meanwhile; so an
 * answer is sound only once it has ended, or holds neither the claim nor a
 * transaction. This module waits for that, up to a bound, and ends the
 * process when the caller allows it.
 *
 * @module
 * @internal
 */
import * as Clock from "effect/Clock";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import type { SqlClient } from "effect/sql/SqlClient";
import type { SqlError } from "effect/sql/SqlError";
import { AppendOutcomeUnknown, StorageError } from "../store/errors.ts";
import type { StoreCore } from "../store/core.ts";
import { quote } from "../core/quote.ts";
import { CLAIM_LOCKS, type WriterBackend } from "./locks.ts";
import type { Failed } from "./rows.ts";

/** How often the server process is looked for while it runs. */
const POLL_MILLIS = 100;

/** How long a process ended by `pg_terminate_backend` is given to exit. */
const TERMINATED_MILLIS = 5000;

/**
 * The rows of `pg_stat_activity` (as `a`) of the process whose pid is the
 * parameter `pid` and whose start time is `started` (when known).
 */
const sameProcess = (pid: string, started: string) =>
  `a.pid = ${pid} AND (${started}::text IS NULL OR a.backend_start IS NULL
  OR extract(epoch FROM a.backend_start)::text = ${started})`;

/**
 * Whether the process `writer` still runs with the claim on `id` or a
 * transaction open (a state the server does not show counts as open).
 */
const stillWriting = (
  client: SqlClient,
  id: string,
  writer: WriterBackend,
): Effect.Effect<boolean, SqlError> =>
  Effect.map(
    client.unsafe<{ writing: boolean }>(
      `SELECT (a.state IS DISTINCT FROM 'idle' OR EXISTS (
           SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND ${CLAIM_LOCKS}
         )) AS writing
       FROM pg_stat_activity a WHERE ${sameProcess("$2", "$3")}`,
      [id, writer.pid, writer.startedAt ?? null],
    ),
    (rows) => rows.some((row) => row.writing),
  );

/** Polls until the process stops writing or `millis` have passed. */
const waitFor = (
  client: SqlClient,
  id: string,
  writer: WriterBackend,
  millis: number,
): Effect.Effect<boolean, SqlError> =>
  Effect.gen(function* () {
    const start = yield* Clock.currentTimeMillis;
    for (;;) {
      const writing = yield* stillWriting(client, id, writer);
      if (!writing) return false;
      if ((yield* Clock.currentTimeMillis) - start >= millis) return true;
      yield* Effect.sleep(POLL_MILLIS);
    }
  });

/** `error` again, still unknown, for `reason`. */
const stillUnknown = (
  error: AppendOutcomeUnknown,
  reason: string,
  undo: unknown,
): AppendOutcomeUnknown =>
  new AppendOutcomeUnknown({
    id: error.id,
    fromSeq: error.fromSeq,
    events: error.events,
    batch: error.batch,
    header: error.header,
    cause: error.cause,
    undo,
    writer: error.writer,
    reason,
  });

/**
 * The {@link StoreCore} `writerEnded` of a PostgreSQL store.
 *
 * @param checkConnection A fresh connection of the store's, to look with.
 * @param defaultWait How long to wait by default, in milliseconds.
 * @param failed How a failed SQL call is reported.
 * @param address The store's address without secrets, for messages.
 * @returns The check.
 */
export const makeWriterEnded = (
  checkConnection: Effect.Effect<SqlClient, SqlError, Scope.Scope>,
  defaultWait: number,
  failed: Failed,
  address: string,
): NonNullable<StoreCore["writerEnded"]> =>
(error, options) => {
  const writer = error.writer;
  if (writer === undefined) return Effect.void;
  const { id } = error;
  const wait = options?.writerWait === undefined
    ? defaultWait
    : Duration.toMillis(Duration.fromInputUnsafe(options.writerWait));
  const terminate = options?.terminateWriter === true;
  return Effect.scoped(Effect.gen(function* () {
    const client = yield* checkConnection;
    if (!(yield* waitFor(client, id, writer, wait))) return false;
    if (!terminate) return true;
    yield* client.unsafe(
      `SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a
       WHERE ${sameProcess("$1", "$2")}`,
      [writer.pid, writer.startedAt ?? null],
    );
    return yield* waitFor(client, id, writer, TERMINATED_MILLIS);
  })).pipe(
    // A server that stops answering cannot hold the caller forever.
    Effect.timeout(wait + TERMINATED_MILLIS + 10_000),
    Effect.mapError((cause) =>
      stillUnknown(
        error,
        `the check of its writer's server process ${quote(writer.pid)} failed`,
        cause._tag === "SqlError"
          ? failed("check the writer of a write in", id)(cause)
          : new StorageError({
            operation: `check the writer of a write (no answer) in ${address}`,
            id,
            code: "timeout",
            cause,
          }),
      )
    ),
    Effect.flatMap((writing) =>
      writing
        ? Effect.fail(stillUnknown(
          error,
          `its writer's server process ${quote(writer.pid)} ${
            terminate
              ? "outlived pg_terminate_backend"
              : `still runs after ${Math.round(wait)} ms`
          } and can still commit it${
            terminate ? "" : "; resolveAppend's terminateWriter option ends it"
          }`,
          undefined,
        ))
        : Effect.void
    ),
  );
};
