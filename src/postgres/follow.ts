/**
 * The PostgreSQL store's `follow`: one `LISTEN` connection shared by every
 * follower of the store (opened with the first, closed with the last; on
 * the store's URL or a direct address given for it), the append's `NOTIFY`
 * as the wake-up, polling as the fallback; without `LISTEN` (behind a
 * transaction pooler, where a probe notification of the first follower
 * never arrives, or on an engine without notifications), polling by seq
 * that quickens after a change (50 ms) and backs off to 400 ms while
 * nothing comes. Each row
 * decoded by the log's one line decoder with the reader's bounds. A read
 * whose connection broke is tried again every poll interval from the same
 * cursor, so nothing is skipped or served twice.
 *
 * @module
 * @internal
 */
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Option from "effect/Option";
import * as PubSub from "effect/PubSub";
import * as Queue from "effect/Queue";
import * as RcRef from "effect/RcRef";
import * as Result from "effect/Result";
import * as Schedule from "effect/Schedule";
import type * as Scope from "effect/Scope";
import * as Stream from "effect/Stream";
import { isSqlError, type SqlError } from "effect/sql/SqlError";
import type { PgClient, PgConnection } from "@effect/sql-pg";
import type { SessionEvent } from "../core/event.ts";
import type { CorruptLine } from "../log/errors.ts";
import { corrupt, decodeLine, makeRunBudget } from "../log/line.ts";
import { checkSessionId } from "../store/ids.ts";
import { SessionNotFound, type StorageError } from "../store/errors.ts";
import type { FollowError, FollowOptions } from "../store/store.ts";
import {
  brokeConnection,
  type Failed,
  readEventPage,
  readHeadRow,
} from "./rows.ts";
import { EVENTS_CHANNEL } from "./schema.ts";

/** How long the first follower waits for its probe notification. */
const PROBE_WAIT = "2 seconds";

/** The first wait of a polling follower after a change, in ms. */
const FASTEST_POLL = 50;

/** The longest wait of a polling follower, in ms (unless `pollInterval` is less). */
const SLOWEST_POLL = 400;

/** What {@link makeFollow} needs of its store. */
export interface FollowSource {
  /** The store's pool. */
  readonly pool: PgClient.PgClient;
  /**
   * Listens on a channel (the pool's own, or a connection to a direct
   * address); undefined when followers poll only.
   */
  readonly listener:
    | ((
      channel: string,
    ) => Effect.Effect<
      Queue.Dequeue<PgConnection.Notification, SqlError>,
      SqlError,
      Scope.Scope
    >)
    | undefined;
  /** The longest a follower waits between two reads of the head. */
  readonly pollInterval: Duration.Duration;
  /** Rows read per query. */
  readonly pageSize: number;
  /** How a failed SQL call is reported. */
  readonly failed: Failed;
}

/**
 * The store's `follow`, over its pool; the shared `LISTEN` lives in the
 * store's scope.
 *
 * @param source The pool and the tuning.
 * @returns The follow operation.
 */
export const makeFollow = (
  source: FollowSource,
): Effect.Effect<
  (
    id: string,
    options?: FollowOptions,
  ) => Stream.Stream<SessionEvent, FollowError>,
  never,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const { pool, listener, pollInterval, pageSize, failed } = source;
    // Without notifications a follower polls by seq, soon after a change
    // and less often while nothing comes.
    const slowest = Math.min(Duration.toMillis(pollInterval), SLOWEST_POLL);
    // A connection that broke (a server restart, a pooler's reconnect) is
    // waited out here as a page read is.
    const readHead = (id: string) =>
      readHeadRow(pool, id, failed).pipe(Effect.retry({
        schedule: Schedule.spaced(pollInterval),
        while: (error) =>
          isSqlError(error.cause) && brokeConnection(error.cause),
      }));
    const readPage = (id: string, from: number) =>
      readEventPage(pool, id, from, undefined, pageSize, failed);
    // One LISTEN connection for every follower of this store, opened with
    // the first follower and closed with the last.
    // Whether LISTEN delivers here: a transaction pooler accepts it but
    // hands the listening server connection to others, so notifications
    // never arrive; the first follower finds out with a probe, and then
    // every follower polls instead.
    let delivers: boolean | undefined;
    const notifications = yield* RcRef.make({
      acquire: Effect.gen(function* () {
        const hub = yield* PubSub.unbounded<string>();
        if (listener === undefined || delivers === false) {
          return yield* Effect.fail("no LISTEN");
        }
        const queue = yield* listener(EVENTS_CHANNEL);
        if (delivers === undefined) {
          const probe = `palimpsest-probe-${crypto.randomUUID()}`;
          yield* Effect.ignore(
            pool.unsafe("SELECT pg_notify($1, $2)", [EVENTS_CHANNEL, probe]),
          );
          const seen = yield* Effect.timeoutOption(
            Effect.repeat(
              Effect.tap(
                Queue.take(queue),
                (note) => PubSub.publish(hub, note.payload),
              ),
              { until: (note) => note.payload === probe },
            ),
            PROBE_WAIT,
          );
          delivers = Option.isSome(seen);
          if (!delivers) return yield* Effect.fail("LISTEN delivers nothing");
        }
        yield* Effect.forkScoped(
          Effect.forever(
            Effect.flatMap(
              Queue.take(queue),
              (note) => PubSub.publish(hub, note.payload),
            ),
          ),
        );
        return hub;
      }),
    });

    const follow = (
      id: string,
      followOptions?: FollowOptions,
    ): Stream.Stream<SessionEvent, FollowError> =>
      Stream.unwrap(Effect.gen(function* () {
        const checked = checkSessionId(id);
        if (Result.isFailure(checked)) return yield* checked.failure;
        // Subscribe before the first read, so no commit falls between.
        const hub = yield* Effect.option(RcRef.get(notifications));
        const subscription = Option.isSome(hub)
          ? Option.some(yield* PubSub.subscribe(hub.value))
          : Option.none();
        const vocabulary = followOptions?.vocabulary === undefined
          ? undefined
          : { vocabulary: followOptions.vocabulary };
        const runs = makeRunBudget();
        let delay = FASTEST_POLL;
        const wake: Effect.Effect<void> = Option.match(subscription, {
          onNone: () =>
            Effect.suspend(() => {
              const now = delay;
              delay = Math.min(slowest, delay * 2);
              return Effect.sleep(now);
            }),
          onSome: (sub) =>
            Effect.raceFirst(
              Effect.asVoid(
                Effect.repeat(PubSub.take(sub), {
                  until: (payload) => payload === id,
                }),
              ),
              Effect.sleep(pollInterval),
            ),
        });
        // A session not created yet is looked for again at each wake (a
        // notification of its first append, or the poll interval).
        while ((yield* readHead(id)) === undefined) {
          if (followOptions?.waitForSession !== true) {
            return yield* new SessionNotFound({ id });
          }
          yield* wake;
        }
        return Stream.paginate(
          { from: Math.max(0, followOptions?.fromSeq ?? 0), wait: false },
          (
            cursor,
          ): Effect.Effect<
            readonly [
              ReadonlyArray<SessionEvent>,
              Option.Option<{ from: number; wait: boolean }>,
            ],
            CorruptLine | StorageError
          > =>
            Effect.gen(function* () {
              if (cursor.wait) yield* wake;
              // A server that restarts (or a connection that breaks) is
              // waited out: the read is tried again every poll interval
              // from the same cursor, so nothing is skipped or served twice.
              const rows = yield* readPage(id, cursor.from)
                .pipe(Effect.retry({
                  schedule: Schedule.spaced(pollInterval),
                  while: (error) =>
                    isSqlError(error.cause) && brokeConnection(error.cause),
                }));
              const events: SessionEvent[] = [];
              for (const row of rows) {
                // The reader's line decoder and bounds; a row's index is
                // its seq.
                const decoded = decodeLine(row.line, row.seq, runs, vocabulary);
                if (Result.isFailure(decoded)) {
                  return yield* corrupt(row.seq + 2, row.line, decoded.failure);
                }
                events.push(decoded.success);
              }
              const last = rows[rows.length - 1];
              if (last !== undefined) delay = FASTEST_POLL;
              return [
                events,
                Option.some({
                  from: last === undefined ? cursor.from : last.seq + 1,
                  wait: rows.length < pageSize,
                }),
              ] as const;
            }),
        );
      })).pipe(Stream.scoped);

    return follow;
  });
