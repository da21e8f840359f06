/**
 * The JSONL layer of the session store: one file per session in a root
 * folder, `<encoded id>.jsonl`.
 *
 * - **Durable batches.** A batch is encoded, written with one write loop at
 *   the end of the last good line and fdatasynced before it resolves. A
 *   failed write truncates the file back to the last good length; if that
 *   fails too the batch is `AppendOutcomeUnknown` and the handle is
 *   released (see `src/fs/durable_file.ts`).
 * - **No overwrite on create.** A new session (its header, and its events
 *   when created from a session) is written to a temp file, fsynced, and
 *   published with `link`, which fails when the name exists
 *   (`SessionAlreadyExists`); the folder is fsynced after.
 * - **Committed lines are never rewritten.** Opening for write only cuts a
 *   torn tail (a final line without `\n`, which no resolved batch left).
 * - **One writer per session.** Each writer publishes its own claim file
 *   `<file>.lock.<uuid>` (`flock`ed under Deno) and wins only when no other
 *   claim is live (see `src/jsonl/lock.ts`); another writer, in this process
 *   or another, gets `SessionLocked`; a claim whose owner is proven dead is
 *   removed. Readers take no claim and see a snapshot of the complete lines
 *   at open.
 * - **Scoped.** The lock and the descriptor are registered with the scope
 *   before they are taken, and released at once when `open` or `create`
 *   fails or is interrupted (a long read yields between 1 MiB chunks, so a
 *   timeout stops it).
 * - **Follow.** `follow` polls the file (every 50 ms by default) and serves
 *   only complete lines that are in the file (see `follow_file.ts`): it
 *   reads again from the end of the last complete line it served whenever
 *   the file changed, so a torn tail cut by a writer or by `repair` is
 *   never glued to the lines written in its place. A concurrent reader can
 *   see a batch's complete lines before its fsync; a batch whose write
 *   fails is cut back, and is so rare that a follower that served some of
 *   it then fails (`StorageError`, code `ETRUNCATED`) rather than guess;
 *   so does a follower whose served lines were rewritten. With
 *   `waitForSession`, a follow of a missing session looks for its file at
 *   each poll.
 * - **Safe names.** Ids are encoded reversibly into file names (see
 *   `encodeSessionId`); no id can name a path outside the root.
 *
 * File-system failures are `StorageError`s whose `cause` is the
 * `FileIoError` naming the path.
 *
 * This module assembles the store from named steps over one state record,
 * each in a module beside it: `store_state.ts` (the record, a handle's
 * state, its claim, descriptor, release and checkpoints), `store_write.ts`
 * (create, open for write, append), `store_read.ts` (open for read,
 * follow, ranges, list, stat), `store_remove.ts` (remove) and
 * `catalogue.ts` (the catalogue index and `list` with a query).
 *
 * @module
 */
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import type { StorageError } from "../store/errors.ts";
import { SessionStore } from "../store/store.ts";
import { makeSessionStore, type StoreCore } from "../store/core.ts";
import { openWith } from "../store/open.ts";
import { type CheckpointOptions, resolvePolicy } from "../store/checkpoints.ts";
import { ioError } from "../fs/io.ts";
import { type AppendIo, nodeAppendIo } from "../fs/durable_file.ts";
import {
  checkpointNow,
  closeHandle,
  type JsonlStoreState,
  locate,
  makeJsonlStoreState,
  storageError,
} from "./store_state.ts";
import { appendEvents, createSession, openForWrite } from "./store_write.ts";
import { removeSession } from "./store_remove.ts";
import { queryCatalogue } from "./catalogue.ts";
import {
  followSession,
  listSessions,
  openForRead,
  readEventRange,
  statSession,
} from "./store_read.ts";

/** Options of {@link layerJsonlStore}. */
export interface JsonlStoreOptions {
  /** The folder; created when missing. */
  readonly root: string;
  /** How often `follow` looks at a file for new lines; 50 ms by default. */
  readonly pollInterval?: Duration.Input;
  /**
   * When to write checkpoints (`<file>.checkpoint`, beside the session's
   * file): every 10,000 events, and on close after 1,000, by default;
   * `false` for none (then opens never read one either).
   */
  readonly checkpoints?: CheckpointOptions;
}

/**
 * Makes a JSONL session store over a folder (created when missing).
 *
 * @param options The root folder.
 * @returns `Effect<SessionStore, StorageError>`.
 *
 * @example Listing an empty store
 * ```ts
 * import { makeJsonlStore } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 * import assert from "node:assert/strict";
 *
 * const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "store-")), "sessions");
 * const ids = Effect.runSync(Effect.flatMap(makeJsonlStore({ root }), (store) => store.list()));
 * assert.deepEqual(ids, []);
 * ```
 */
export function makeJsonlStore(
  options: JsonlStoreOptions,
): Effect.Effect<SessionStore, StorageError> {
  return makeJsonlStoreWith(options, nodeAppendIo);
}

/**
 * A JSONL store whose append path goes through `io`; for tests.
 *
 * @param options The root folder.
 * @param io The file calls of an append.
 * @returns `Effect<SessionStore, StorageError>`.
 * @internal
 */
export function makeJsonlStoreWith(
  options: JsonlStoreOptions,
  io: AppendIo,
): Effect.Effect<SessionStore, StorageError> {
  return Effect.suspend(() => {
    const root = nodePath.resolve(options.root);
    try {
      fs.mkdirSync(root, { recursive: true });
    } catch (cause) {
      return Effect.fail(
        storageError(
          "create the store",
          undefined,
          ioError("create the store folder", root, cause),
        ),
      );
    }
    return Effect.succeed(
      makeSessionStore(
        makeCore(
          makeJsonlStoreState(
            root,
            io,
            options.pollInterval ?? Duration.millis(50),
            resolvePolicy(options.checkpoints),
          ),
        ),
      ),
    );
  });
}

/**
 * The JSONL layer of `SessionStore` over a folder.
 *
 * @param options The root folder.
 * @returns `Layer<SessionStore, StorageError>`.
 *
 * @example Writing through a scoped handle
 * ```ts
 * import { layerJsonlStore, SessionStore } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 * import assert from "node:assert/strict";
 *
 * const root = fs.mkdtempSync(path.join(os.tmpdir(), "store-"));
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   yield* Effect.scoped(store.create({ id: "chat", createdAt: 0, isSeeded: false }));
 *   const { events } = yield* store.withSession("chat", (writer) =>
 *     store.append(writer, [{ type: "turn/start", data: { turn: 0 } }]));
 *   return [events[0]?.seq, yield* store.list()] as const;
 * });
 * const [seq, ids] = await Effect.runPromise(program.pipe(Effect.provide(layerJsonlStore({ root }))));
 * assert.deepEqual([seq, ids], [0, ["chat"]]);
 * ```
 */
export function layerJsonlStore(
  options: JsonlStoreOptions,
): Layer.Layer<SessionStore, StorageError> {
  return Layer.effect(SessionStore, makeJsonlStore(options));
}

/**
 * The JSONL layer's core: the steps of `store_write.ts` and
 * `store_read.ts` over one state record.
 */
const makeCore = (store: JsonlStoreState): StoreCore => ({
  create: (init, options) => createSession(store, init, options),
  open: openWith(
    (id) => locate(store, id),
    (id, path, options) => openForRead(store, id, path, options),
    (id, path, options) => openForWrite(store, id, path, options),
  ),
  commit: store.handles.commit((handle, state, next) =>
    appendEvents(store, handle, state, next)
  ),
  close: closeHandle(store),
  checkpoint: checkpointNow(store),
  follow: (id, options) => followSession(store, id, options),
  readRange: (id, from, to, vocabulary, index) =>
    readEventRange(store, id, from, to, vocabulary, index),
  list: () => listSessions(store),
  catalogue: (query) => queryCatalogue(store.root, store.catalogue, query),
  remove: (id) => removeSession(store, id),
  stat: (id) => statSession(store, id),
});
