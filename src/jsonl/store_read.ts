/**
 * The reading steps of the JSONL store: {@link readStored} (a session's
 * file, from its checkpoint when one fits), {@link openForRead},
 * {@link followSession}, {@link readEventRange}, {@link listSessions} and
 * {@link statSession}. Each takes the store's state record
 * (`store_state.ts`); `store.ts` assembles them.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as fs from "node:fs";
import { SessionNotFound } from "../store/errors.ts";
import type { OpenError, OpenOptions, SessionHandle } from "../store/store.ts";
import type { StoreCore } from "../store/core.ts";
import type { Vocabulary } from "../core/decode.ts";
import type { LineIndex } from "../log/range.ts";
import { scanByteRange } from "../store/history.ts";
import { errorCode, ioError } from "../fs/io.ts";
import { DEFAULT_MAX_LINE_BYTES, readSessionFile } from "../log/reader.ts";
import { followLines } from "../store/lines.ts";
import { type LoadedFrom, loadWithCheckpoint } from "../store/checkpoints.ts";
import { fileByteLog, readCheckpointFile } from "./checkpoint_file.ts";
import { makeFileFollower } from "./follow_file.ts";
import { isClaimed } from "./lock.ts";
import { sessionIdOfFileName } from "./names.ts";
import {
  type JsonlStoreState,
  locate,
  newHandleState,
  pathOf,
  storageError,
} from "./store_state.ts";

/**
 * Reads the session in `path`, from its checkpoint when the policy reads
 * one and it fits, else whole; `strict` for a writer (no `recover`, no
 * `migrate`). A missing file is `SessionNotFound`.
 *
 * @param store The store.
 * @param id The session.
 * @param path Its file.
 * @param options The open's options.
 * @param strict Whether a write handle is being opened.
 * @returns The session's log, the open's report and the checkpoint mark.
 */
export const readStored = <E>(
  store: JsonlStoreState,
  id: string,
  path: string,
  options: OpenOptions<E>,
  strict: boolean,
): Effect.Effect<LoadedFrom, OpenError | E> =>
  Effect.mapError(
    loadWithCheckpoint(
      store.policy,
      // An unreadable checkpoint is no checkpoint: it is derived data.
      (maxLineBytes) =>
        Effect.orElseSucceed(
          readCheckpointFile(path, maxLineBytes),
          () => undefined,
        ),
      fileByteLog(path),
      options,
      strict,
      (read) => readSessionFile(path, read),
    ),
    (error) =>
      typeof error === "object" && error !== null && "_tag" in error &&
        error._tag === "FileIoError"
        ? error.code === "ENOENT"
          ? new SessionNotFound({ id })
          : storageError("open", id, error)
        : error,
  );

/**
 * The read half of the store's `open`: a snapshot of the complete lines,
 * holding no claim and no descriptor.
 *
 * @param store The store.
 * @param id The session.
 * @param path Its file.
 * @param options The open's options.
 * @returns A read handle.
 */
export const openForRead = <E>(
  store: JsonlStoreState,
  id: string,
  path: string,
  options: OpenOptions<E>,
): Effect.Effect<SessionHandle, OpenError | E> =>
  Effect.map(readStored(store, id, path, options, false), (loaded) => {
    const state = newHandleState(path, loaded.log.session);
    Object.assign(state.mark, loaded.mark);
    return store.handles.make(id, "read", loaded.report, state);
  });

/**
 * The store's `follow`: polls the session's file every poll interval and
 * serves its complete lines (`follow_file.ts`).
 *
 * @param store The store.
 * @param id The session.
 * @param options The follow's options (already checked).
 * @returns The stream of events.
 */
export const followSession = (
  store: JsonlStoreState,
  id: string,
  options: Parameters<StoreCore["follow"]>[1],
): ReturnType<StoreCore["follow"]> =>
  followLines(
    () => locate(store, id),
    options,
    (path, follower) => {
      const file = makeFileFollower(path, follower, DEFAULT_MAX_LINE_BYTES);
      return {
        read: Effect.suspend(() => {
          const looked = file.look();
          if (Result.isSuccess(looked)) return Effect.succeed(looked.success);
          const error = looked.failure;
          return Effect.fail(
            error._tag === "FileIoError"
              ? storageError("follow", id, error)
              : error,
          );
        }),
        idle: Effect.sleep(store.pollInterval),
      };
    },
    Effect.sleep(store.pollInterval),
  );

/**
 * The store's `readRange`: the events of seqs `[from, to)` read from the
 * file's bytes, starting from the nearest line `index` knows.
 *
 * @param store The store.
 * @param id The session.
 * @param from The first seq.
 * @param to The seq after the last.
 * @param vocabulary The session's vocabulary.
 * @param index The lines known so far; added to.
 * @returns The events.
 */
export const readEventRange = (
  store: JsonlStoreState,
  id: string,
  from: number,
  to: number,
  vocabulary: Vocabulary | undefined,
  index: LineIndex,
): ReturnType<StoreCore["readRange"]> =>
  Effect.suspend((): ReturnType<StoreCore["readRange"]> => {
    const located = locate(store, id);
    if (Result.isFailure(located)) return Effect.fail(located.failure);
    return Effect.mapError(
      scanByteRange(
        fileByteLog(located.success).range,
        from,
        to,
        vocabulary,
        index,
      ),
      (error) =>
        error._tag === "FileIoError"
          ? storageError("read the events of", id, error)
          : error,
    );
  });

/**
 * The store's `list`: the ids of the session files in the root, sorted.
 *
 * @param store The store.
 * @returns The ids.
 */
export const listSessions = (
  store: JsonlStoreState,
): ReturnType<StoreCore["list"]> =>
  Effect.suspend(() => {
    const ids: string[] = [];
    let names: string[];
    try {
      names = fs.readdirSync(store.root);
    } catch (cause) {
      return Effect.fail(
        storageError("list", undefined, ioError("list", store.root, cause)),
      );
    }
    for (const name of names) {
      const id = sessionIdOfFileName(name);
      if (id !== undefined) ids.push(id);
    }
    return Effect.succeed(ids.sort());
  });

/**
 * The store's `stat`: the file's size and time, and whether a writer
 * claims it.
 *
 * @param store The store.
 * @param id The session.
 * @returns What the store knows of the session without reading it.
 */
export const statSession = (
  store: JsonlStoreState,
  id: string,
): ReturnType<StoreCore["stat"]> =>
  Effect.suspend((): ReturnType<StoreCore["stat"]> => {
    const located = pathOf(store, id);
    if (Result.isFailure(located)) return Effect.fail(located.failure);
    const path = located.success;
    let info: fs.Stats;
    try {
      info = fs.statSync(path);
    } catch (cause) {
      return errorCode(cause) === "ENOENT"
        ? Effect.fail(new SessionNotFound({ id }))
        : Effect.fail(storageError("stat", id, ioError("stat", path, cause)));
    }
    return Effect.succeed({
      id,
      bytes: info.size,
      modifiedAt: info.mtimeMs,
      locked: isClaimed(path),
    });
  });
