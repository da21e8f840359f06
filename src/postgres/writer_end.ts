/**
 * Whether a failed writer can still commit, for `resolveAppend`. A writer
 * that gave up on a write (its connection cut, the answer late) may leave
 * the write running on the server for as long as the server does not see
 * the client gone, and a copy of it may still be on its way; so an answer
 * is sound only once no write of the session is in flight (the head row,
 * which every write locks first, can be locked) and the failed writer's
 * lease is revoked (so that its token, which a late copy carries, never
 * matches again). This module waits for that, up to a bound, and ends the
 * server process whose transaction holds the head row when the caller
 * allows it.
 *
 * @module
 * @internal
 */
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import type { SqlError } from "effect/sql/SqlError";
import { AppendOutcomeUnknown, StorageError } from "../store/errors.ts";
import type { StoreCore } from "../store/core.ts";
import type { ClaimContext } from "./claim.ts";
import {
  HOLDING_PROCESS_STATEMENT,
  PROBE_CREATE_STATEMENT,
  RELEASE_STATEMENT,
  SETTLE_HEAD_STATEMENT,
} from "./lease.ts";
import { sqlState } from "./rows.ts";

/** How long a process ended by `pg_terminate_backend` is given to go. */
const TERMINATED_MILLIS = 5000;

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
    writerToken: error.writerToken,
    reason,
  });

/**
 * Locks session `id`'s head row within `millis` (so no write of it is in
 * flight) and revokes the lease of `token`. False when the lock was not
 * had in time.
 */
const revokeWithin = (
  context: ClaimContext,
  id: string,
  token: string,
  millis: number,
  create: boolean,
): Effect.Effect<boolean, SqlError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* context.checks;
      yield* sql.unsafe("BEGIN");
      yield* sql.unsafe(`SET LOCAL lock_timeout = ${Math.max(1, millis)}`);
      // A create in flight holds its new row's key, which a probe of the
      // same key waits for (its row is not there to lock yet); a probe
      // that inserts shows no session, and is rolled back.
      const probed = yield* Effect.result(
        create
          ? sql.unsafe<{ id: string }>(PROBE_CREATE_STATEMENT, [id])
          : Effect.succeed([]),
      );
      if (probed._tag === "Success" && probed.success.length > 0) {
        yield* sql.unsafe("ROLLBACK");
        return true;
      }
      const locked = probed._tag === "Failure"
        ? probed
        : yield* Effect.result(sql.unsafe(SETTLE_HEAD_STATEMENT, [id]));
      if (locked._tag === "Failure") {
        yield* Effect.ignore(sql.unsafe("ROLLBACK"));
        if (sqlState(locked.failure) === "55P03") return false;
        return yield* locked.failure;
      }
      yield* sql.unsafe(RELEASE_STATEMENT, [id, token]);
      yield* sql.unsafe("COMMIT");
      return true;
    }),
  );

/**
 * The {@link StoreCore} `writerEnded` of a PostgreSQL store.
 *
 * @param context The store's claim context.
 * @returns The check.
 */
export const makeWriterEnded = (
  context: ClaimContext,
): NonNullable<StoreCore["writerEnded"]> =>
(error, options) => {
  const token = error.writerToken;
  if (token === undefined) return Effect.void;
  const { id } = error;
  const wait = options?.writerWait === undefined
    ? context.settleWait
    : Duration.toMillis(Duration.fromInputUnsafe(options.writerWait));
  const terminate = options?.terminateWriter === true;
  return Effect.gen(function* () {
    const create = error.header !== undefined;
    if (yield* revokeWithin(context, id, token, wait, create)) return true;
    if (!terminate) return false;
    yield* Effect.scoped(Effect.flatMap(
      context.checks,
      (sql) =>
        sql.unsafe(
          `SELECT pg_terminate_backend(pid) FROM (${HOLDING_PROCESS_STATEMENT}) AS p`,
          [id],
        ),
    ));
    return yield* revokeWithin(context, id, token, TERMINATED_MILLIS, create);
  }).pipe(
    // A server that stops answering cannot hold the caller forever.
    Effect.timeout(wait + TERMINATED_MILLIS + 10_000),
    Effect.mapError((cause) =>
      stillUnknown(
        error,
        "the check of its writer failed",
        cause._tag === "SqlError"
          ? context.failed("check the writer of a write in", id)(cause)
          : new StorageError({
            operation:
              `check the writer of a write (no answer) in ${context.address}`,
            id,
            code: "timeout",
            cause,
          }),
      )
    ),
    Effect.flatMap((ended) =>
      ended ? Effect.void : Effect.fail(stillUnknown(
        error,
        `a write of the session ${
          terminate
            ? "outlived pg_terminate_backend"
            : `still runs after ${Math.round(wait)} ms`
        } and can still commit it${
          terminate ? "" : "; resolveAppend's terminateWriter option ends it"
        }`,
        undefined,
      ))
    ),
  );
};
