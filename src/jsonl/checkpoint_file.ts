/**
 * The JSONL layer's checkpoint: a sidecar file `<session file>.checkpoint`
 * beside the session's file, replaced atomically. Only the writer claim's
 * holder writes it: the text goes to `<session file>.checkpoint.tmp`, is
 * fsynced, then renamed over the sidecar and the folder fsynced, so a
 * reader sees the old checkpoint or the new one, never a torn one (and the
 * checkpoint's own hash catches anything else). It is derived data:
 * deleting it costs the next open a whole replay and loses nothing.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import type { JsonlIoError } from "../fs/errors.ts";
import { errorCode, ioError } from "../fs/io.ts";
import { closeQuietly, syncFolder } from "../fs/durable_file.ts";
import type { ByteLog } from "../store/checkpoints.ts";
import { readSessionFileFrom } from "../log/reader.ts";

/** The suffix of a session file's checkpoint. */
const CHECKPOINT_SUFFIX = ".checkpoint";

/**
 * The path of a session file's checkpoint.
 *
 * @param path The session file.
 * @returns Its sidecar's path.
 */
const checkpointPathOf = (path: string): string =>
  `${path}${CHECKPOINT_SUFFIX}`;

/**
 * Reads a session file's checkpoint text; undefined when there is none.
 *
 * @param path The session file.
 * @returns `Effect<string | undefined, JsonlIoError>`.
 */
export const readCheckpointFile = (
  path: string,
): Effect.Effect<string | undefined, JsonlIoError> =>
  Effect.suspend(() => {
    const sidecar = checkpointPathOf(path);
    try {
      return Effect.succeed(fs.readFileSync(sidecar, "utf8"));
    } catch (cause) {
      return errorCode(cause) === "ENOENT"
        ? Effect.succeed(undefined)
        : Effect.fail(ioError("read the checkpoint", sidecar, cause));
    }
  });

/**
 * Replaces a session file's checkpoint atomically and durably.
 *
 * @param path The session file.
 * @param text The checkpoint's text.
 * @returns `Effect<void, JsonlIoError>`.
 */
export const writeCheckpointFile = (
  path: string,
  text: string,
): Effect.Effect<void, JsonlIoError> =>
  Effect.suspend(() => {
    const sidecar = checkpointPathOf(path);
    const temp = `${sidecar}.tmp`;
    let fd: number | undefined;
    try {
      fd = fs.openSync(temp, "w");
      fs.writeFileSync(fd, text);
      fs.fsyncSync(fd);
      closeQuietly(fd);
      fd = undefined;
      fs.renameSync(temp, sidecar);
    } catch (cause) {
      closeQuietly(fd);
      return Effect.fail(ioError("write the checkpoint", sidecar, cause));
    }
    syncFolder(nodePath.dirname(sidecar));
    return Effect.void;
  });

/**
 * A session file as an open from a checkpoint reads it.
 *
 * @param path The session file.
 * @returns Its byte log.
 */
export const fileByteLog = (path: string): ByteLog<JsonlIoError> => ({
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
