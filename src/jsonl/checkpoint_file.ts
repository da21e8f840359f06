/**
 * The JSONL layer's checkpoint: a sidecar file `<session file>.checkpoint`
 * beside the session's file, replaced atomically. Only the writer claim's
 * holder writes it, as every durable publish does (`fs/durable_file.ts`):
 * the text goes to an owned temporary file beside it, is fsynced, then
 * renamed over the sidecar and the folder fsynced, so a reader sees the old
 * checkpoint or the new one, never a torn one (and the checkpoint's own
 * hash catches anything else); the temporary files a killed writer left
 * are removed by the next write. It is derived data: deleting it costs the
 * next open a whole replay and loses nothing.
 *
 * A reader stats the sidecar first: one larger than the bound for its log
 * (`checkpointBound`) is not read at all, whatever its size.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as fs from "node:fs";
import type { FileIoError } from "../fs/errors.ts";
import { errorCode, ioError } from "../fs/io.ts";
import {
  closeQuietly,
  nodeAppendIo,
  publishNewFile,
  unlinkQuietly,
  writeAll,
} from "../fs/durable_file.ts";
import {
  type ByteLog,
  checkpointBound,
  type StoredCheckpoint,
} from "../store/checkpoints.ts";
import { readSessionFileFrom } from "../log/reader.ts";

/** The suffix of a session file's checkpoint. */
const CHECKPOINT_SUFFIX = ".checkpoint";

/**
 * The path of a session file's checkpoint.
 *
 * @param path The session file.
 * @returns Its sidecar's path.
 */
export const checkpointPathOf = (path: string): string =>
  `${path}${CHECKPOINT_SUFFIX}`;

/**
 * Reads a session file's checkpoint text; undefined when there is none, its
 * size and bound when it is larger than a checkpoint of this log can be.
 *
 * @param path The session file.
 * @param maxLineBytes The open's `maxLineBytes`.
 * @returns `Effect<StoredCheckpoint, FileIoError>`.
 */
export const readCheckpointFile = (
  path: string,
  maxLineBytes?: number,
): Effect.Effect<StoredCheckpoint, FileIoError> =>
  Effect.suspend((): Effect.Effect<StoredCheckpoint, FileIoError> => {
    const sidecar = checkpointPathOf(path);
    let fd: number | undefined;
    try {
      fd = fs.openSync(sidecar, "r");
      const size = fs.fstatSync(fd).size;
      const bound = checkpointBound(fs.statSync(path).size, maxLineBytes);
      if (size > bound) return Effect.succeed({ size, bound });
      return Effect.succeed(fs.readFileSync(fd, "utf8"));
    } catch (cause) {
      return errorCode(cause) === "ENOENT"
        ? Effect.succeed(undefined)
        : Effect.fail(ioError("read the checkpoint", sidecar, cause));
    } finally {
      closeQuietly(fd);
    }
  });

/**
 * Replaces a session file's checkpoint atomically and durably; removes what
 * a killed write left (an owned temporary file whose owner is dead, and the
 * `<sidecar>.tmp` older versions wrote).
 *
 * @param path The session file.
 * @param text The checkpoint's text.
 * @returns `Effect<void, FileIoError>`.
 */
export const writeCheckpointFile = (
  path: string,
  text: string,
): Effect.Effect<void, FileIoError> => {
  const sidecar = checkpointPathOf(path);
  return Effect.andThen(
    Effect.sync(() => unlinkQuietly(`${sidecar}.tmp`)),
    Effect.catchTag(
      publishNewFile(sidecar, (fd, temp) =>
        Effect.suspend(() => {
          try {
            writeAll(nodeAppendIo, fd, new TextEncoder().encode(text), 0);
            return Effect.void;
          } catch (cause) {
            return Effect.fail(ioError("write the checkpoint", temp, cause));
          }
        }), { replace: true }),
      "TargetExists",
      () => Effect.void,
    ),
  );
};

/**
 * A session file as an open from a checkpoint reads it.
 *
 * @param path The session file.
 * @returns Its byte log.
 */
export const fileByteLog = (path: string): ByteLog<FileIoError> => ({
  range: (offset, length) =>
    Effect.suspend(() => {
      let fd: number | undefined;
      try {
        fd = fs.openSync(path, "r");
        const buffer = new Uint8Array(length);
        let filled = 0;
        while (filled < length) {
          const n = fs.readSync(
            fd,
            buffer,
            filled,
            length - filled,
            offset + filled,
          );
          if (n === 0) break;
          filled += n;
        }
        return Effect.succeed(buffer.subarray(0, filled));
      } catch (cause) {
        return Effect.fail(ioError("read", path, cause));
      } finally {
        closeQuietly(fd);
      }
    }),
  readFrom: (resume, options) => readSessionFileFrom(path, resume, options),
});
