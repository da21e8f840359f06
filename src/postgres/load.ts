/**
 * One session in and out of a PostgreSQL store without keeping a store
 * open: {@link loadPostgresSession} reads one over a connection of its own,
 * as the reader reads a file; {@link savePostgresSession} stores a whole
 * session in one transaction. For tools that do one thing and leave (the
 * command line).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Redacted from "effect/Redacted";
import * as Result from "effect/Result";
import * as Reactivity from "effect/reactivity/Reactivity";
import { PgClient } from "@effect/sql-pg";
import type { Session } from "../session/session.ts";
import type { LogReadError } from "../log/errors.ts";
import type { LoadedLog, ReadOptions } from "../log/reader.ts";
import { checkSessionId } from "../store/ids.ts";
import {
  type InvalidSessionId,
  SessionNotFound,
  type StorageError,
} from "../store/errors.ts";
import {
  DEFAULT_PAGE,
  displayAddress,
  failedAt,
  MAX_MESSAGE_BYTES,
  readHeadRow,
} from "./rows.ts";
import { readStoredSession } from "./read.ts";
import { makePostgresStore } from "./store.ts";
import type { CreateError } from "../store/store.ts";

/** Options of {@link loadPostgresSession}. */
export interface LoadPostgresOptions<E = never> extends ReadOptions<E> {
  /**
   * Rows read per query for a session of an older version (read through the
   * file reader); 1000 by default. A current session's rows are streamed by
   * one query.
   */
  readonly pageSize?: number;
}

/**
 * Reads one session from a PostgreSQL store over a connection of its own,
 * as {@link readSessionStream} reads a file: decode, fold, `recover`,
 * `migrate`. For tools that read one session and leave (the command line);
 * a program that keeps a store open uses the store's `open`.
 *
 * @param url The connection URL.
 * @param id The session id.
 * @param options The reader's options and the page size.
 * @returns `Effect<LoadedLog, InvalidSessionId | SessionNotFound |
 * LogReadError | StorageError | E>`.
 *
 * @example Reading a session the store wrote
 * ```ts
 * import { layerPostgresStore, loadPostgresSession, PostgresStore } from "@palimpsest/session/postgres";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const url = Deno.env.get("PALIMPSEST_PG_URL"); // e.g. postgres://postgres@localhost/postgres
 * if (url !== undefined) {
 *   const id = `doc-${crypto.randomUUID()}`;
 *   await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
 *     const store = yield* PostgresStore;
 *     const writer = yield* store.create({ id, createdAt: 0, isSeeded: false });
 *     yield* store.append(writer, [{ type: "turn/start", data: { turn: 0 } }]);
 *   })).pipe(Effect.provide(layerPostgresStore({ url }))));
 *   const log = await Effect.runPromise(loadPostgresSession(url, id));
 *   assert.equal(log.events.length, 1);
 * }
 * ```
 */
export function loadPostgresSession<E = never>(
  url: string | Redacted.Redacted<string>,
  id: string,
  options: LoadPostgresOptions<E> = {},
): Effect.Effect<
  LoadedLog,
  InvalidSessionId | SessionNotFound | LogReadError | StorageError | E
> {
  return Effect.suspend((): Effect.Effect<
    LoadedLog,
    InvalidSessionId | SessionNotFound | LogReadError | StorageError | E
  > => {
    const checked = checkSessionId(id);
    if (Result.isFailure(checked)) return Effect.fail(checked.failure);
    const redacted = typeof url === "string" ? Redacted.make(url) : url;
    const failed = failedAt(displayAddress(Redacted.value(redacted)));
    const pageSize = Math.max(1, options.pageSize ?? DEFAULT_PAGE);
    return Effect.scoped(Effect.gen(function* () {
      const client = yield* PgClient.makeClient({
        url: redacted,
        applicationName: "palimpsest reader",
        maxMessageSize: MAX_MESSAGE_BYTES,
      }).pipe(
        Effect.provide(Reactivity.layer),
        Effect.mapError(failed("connect to")),
      );
      const head = yield* readHeadRow(client, id, failed);
      if (head === undefined) return yield* new SessionNotFound({ id });
      return yield* readStoredSession(
        client,
        id,
        head,
        pageSize,
        failed,
        options,
      );
    }));
  });
}

/**
 * Stores a whole session in a PostgreSQL store (creating its tables when
 * needed), never replacing a stored session (`SessionAlreadyExists`). With
 * the session read from a file, the rows hold the file's lines byte for
 * byte.
 *
 * @param url The connection URL.
 * @param session The session to store.
 * @returns `Effect<void, InvalidSessionId | SessionAlreadyExists |
 * SessionLocked | StorageError | AppendOutcomeUnknown | EventsNotHeld>`
 * (`EventsNotHeld` for a session that holds only its surface):
 * `AppendOutcomeUnknown` when the connection broke after `COMMIT` was sent
 * and the store could not tell whether it committed.
 *
 * @example Storing a session built in memory
 * ```ts
 * import { loadPostgresSession, savePostgresSession } from "@palimpsest/session/postgres";
 * import { Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const url = Deno.env.get("PALIMPSEST_PG_URL"); // e.g. postgres://postgres@localhost/postgres
 * if (url !== undefined) {
 *   const id = `doc-${crypto.randomUUID()}`;
 *   const session = await Effect.runPromise(Session.append(
 *     Session.make({ id, createdAt: 0, isSeeded: false }),
 *     { type: "turn/start", data: { turn: 0 } },
 *   ));
 *   await Effect.runPromise(savePostgresSession(url, session));
 *   const log = await Effect.runPromise(loadPostgresSession(url, id));
 *   assert.equal(log.events.length, 1);
 * }
 * ```
 */
export function savePostgresSession(
  url: string | Redacted.Redacted<string>,
  session: Session,
): Effect.Effect<void, CreateError> {
  // `create` from a whole session stores its header and events in one
  // transaction: the session is whole or absent.
  return Effect.scoped(Effect.gen(function* () {
    const store = yield* makePostgresStore({ url, maxConnections: 1 });
    yield* store.create(session);
  }));
}
