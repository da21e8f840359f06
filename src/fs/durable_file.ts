/**
 * Durable file writes, in one place for the JSONL store, `migrateFile`,
 * `importFile`, `writeSessionHtmlFile` and the command line's repair:
 *
 * - **Publish a new file** ({@link publishNewFile}): write it under a
 *   temporary name created with `wx` in the target's folder, fsync it, then
 *   `link` it to the target name, which fails (`EEXIST`) rather than replace
 *   an existing file, and fsync the folder. The target either does not
 *   exist or holds the whole content. Asked to replace, it `rename`s the
 *   temporary file over the target instead: the target keeps what it held
 *   or holds the whole new content. The temporary name and its descriptor
 *   are released on success, failure and interruption alike.
 * - **No litter after a kill.** The temporary file is owned
 *   (`.<target>.<uuid>.<owner>.tmp`, see `owner.ts`: `flock`ed under Deno,
 *   named by pid and start time elsewhere), and each publish to a target
 *   first removes the temporary files of that target whose owner is proven
 *   dead, never a live one's.
 * - **Append a batch** ({@link appendBatch}): one write loop at the end of
 *   the last good length, then `fdatasync`. A failed write is undone by
 *   truncating back to that length and syncing; when the undo fails too the
 *   outcome is unknown, and the caller must stop writing through the file.
 *
 * The calls are synchronous `node:fs` calls, so one never stops half way
 * for an interruption, and they run the same on Deno and Node.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import { type FileIoError, TargetExists } from "./errors.ts";
import { errorCode, ioError } from "./io.ts";
import { createOwnedTemp, releaseOwnedTemp, sweepStaleTemps } from "./owner.ts";

/** The file calls of an append, replaceable so tests can make one fail. */
export interface AppendIo {
  /** `fs.writeSync(fd, bytes, offset, length, position)`. */
  readonly write: (
    fd: number,
    bytes: Uint8Array,
    offset: number,
    length: number,
    position: number,
  ) => number;
  /** `fs.fdatasyncSync(fd)`. */
  readonly sync: (fd: number) => void;
  /** `fs.ftruncateSync(fd, length)`. */
  readonly truncate: (fd: number, length: number) => void;
}

/** The real file calls. */
export const nodeAppendIo: AppendIo = {
  write: (fd, bytes, offset, length, position) =>
    fs.writeSync(fd, bytes, offset, length, position),
  sync: (fd) => fs.fdatasyncSync(fd),
  truncate: (fd, length) => fs.ftruncateSync(fd, length),
};

/** How an append ended. */
export type AppendOutcome =
  | { readonly _tag: "Written" }
  /** The write failed and the file was cut back: nothing of the batch stays. */
  | { readonly _tag: "NotWritten"; readonly cause: unknown }
  /** The write failed and cutting back failed too: the file may hold part of it. */
  | {
    readonly _tag: "Unknown";
    readonly cause: unknown;
    readonly undo: unknown;
  };

/** Writes all of `bytes` at `position`. */
export const writeAll = (
  io: AppendIo,
  fd: number,
  bytes: Uint8Array,
  position: number,
): void => {
  let done = 0;
  while (done < bytes.length) {
    done += io.write(fd, bytes, done, bytes.length - done, position + done);
  }
};

/**
 * Appends `bytes` at `length` (the last good length) and syncs (unless
 * `sync` is false: the bytes are then in the system's hands, which a killed
 * process does not lose, and the next synced append makes them durable);
 * on failure, truncates back to `length` and syncs.
 *
 * @param io The file calls.
 * @param fd An open descriptor of the file.
 * @param length The last good length: where the batch goes.
 * @param bytes The batch.
 * @param sync False to leave the batch unsynced; true by default.
 * @returns How it ended.
 */
export const appendBatch = (
  io: AppendIo,
  fd: number,
  length: number,
  bytes: Uint8Array,
  sync = true,
): AppendOutcome => {
  try {
    writeAll(io, fd, bytes, length);
    if (sync) io.sync(fd);
    return { _tag: "Written" };
  } catch (cause) {
    try {
      io.truncate(fd, length);
      io.sync(fd);
    } catch (undo) {
      return { _tag: "Unknown", cause, undo };
    }
    return { _tag: "NotWritten", cause };
  }
};

/** Fsyncs a folder, where the platform allows it. */
export const syncFolder = (folder: string): void => {
  let fd: number | undefined;
  try {
    fd = fs.openSync(folder, "r");
    fs.fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a folder; the file itself is synced.
  } finally {
    if (fd !== undefined) closeQuietly(fd);
  }
};

/** Closes a descriptor, ignoring a second close. */
export const closeQuietly = (fd: number | undefined): void => {
  if (fd === undefined) return;
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed.
  }
};

/** Removes a name, ignoring a missing one. */
export const unlinkQuietly = (path: string): void => {
  try {
    fs.unlinkSync(path);
  } catch {
    // Never created, or already gone.
  }
};

/** A writer of the new file's content, given its descriptor. */
export type FillFile<A, E> = (
  fd: number,
  temp: string,
) => Effect.Effect<A, E>;

/** Options of {@link publishNewFile}. */
export interface PublishOptions {
  /**
   * Replace an existing target (`rename`) instead of refusing it (`link`).
   * Default `false`.
   */
  readonly replace?: boolean;
}

/**
 * Writes a new file under a temporary name beside `target` and publishes it
 * with `link`, never replacing an existing target (or, with `replace`, with
 * `rename` over it). `fill` writes the content (it may be long and
 * interruptible); the temporary file and its descriptor are released
 * whatever happens.
 *
 * @param target The file to create.
 * @param fill Writes the content through the descriptor.
 * @param options `replace` to rename over an existing target.
 * @returns `Effect<A, E | TargetExists | FileIoError>`; `TargetExists`
 * only without `replace`.
 */
export const publishNewFile = <A, E>(
  target: string,
  fill: FillFile<A, E>,
  options: PublishOptions = {},
): Effect.Effect<A, E | TargetExists | FileIoError> => {
  const replace = options.replace === true;
  const folder = nodePath.dirname(target);
  const base = nodePath.basename(target);
  return Effect.acquireUseRelease(
    Effect.suspend(() => {
      // What a killed publish to this target left: remove it first.
      sweepStaleTemps(folder, base);
      const created = createOwnedTemp(folder, base);
      return "error" in created
        ? Effect.fail(created.error)
        : Effect.succeed({ temp: created.ok, open: true });
    }),
    (held) =>
      Effect.flatMap(
        fill(held.temp.fd, held.temp.path),
        (value): Effect.Effect<A, TargetExists | FileIoError> => {
          const temp = held.temp.path;
          try {
            fs.fsyncSync(held.temp.fd);
          } catch (cause) {
            return Effect.fail(ioError("fsync", temp, cause));
          }
          closeQuietly(held.temp.fd);
          held.open = false;
          try {
            if (replace) fs.renameSync(temp, target);
            else fs.linkSync(temp, target);
          } catch (cause) {
            return !replace && errorCode(cause) === "EEXIST"
              ? Effect.fail(new TargetExists({ path: target }))
              : Effect.fail(
                ioError(replace ? "rename" : "link", target, cause),
              );
          }
          syncFolder(folder);
          return Effect.succeed(value);
        },
      ),
    (held) =>
      Effect.sync(() => {
        // Closes the descriptor (again if need be), removes the temporary
        // name (gone already after a rename), then drops its lock.
        releaseOwnedTemp(held.open ? held.temp : { ...held.temp, fd: -1 });
      }),
  );
};

/**
 * Writes `bytes` as a new file (see {@link publishNewFile}).
 *
 * @param target The file to create.
 * @param bytes Its content.
 * @returns `Effect<void, TargetExists | FileIoError>`.
 */
export const publishBytes = (
  target: string,
  bytes: Uint8Array,
): Effect.Effect<void, TargetExists | FileIoError> =>
  publishNewFile(target, (fd, temp) =>
    Effect.suspend(() => {
      try {
        writeAll(nodeAppendIo, fd, bytes, 0);
        return Effect.void;
      } catch (cause) {
        return Effect.fail(ioError("write", temp, cause));
      }
    }));

/** Runs a throwing file call as a `Result`. */
export const attempt = <A>(
  operation: string,
  path: string,
  f: () => A,
): Result.Result<A, FileIoError> => {
  try {
    return Result.succeed(f());
  } catch (cause) {
    return Result.fail(ioError(operation, path, cause));
  }
};
