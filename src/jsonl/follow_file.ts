/**
 * Following a session file: what to read, and when, so that a follower
 * serves only complete lines that are in the file. The bytes past the last
 * complete line may change under a follower (a torn tail is cut by a
 * writer that opens the session, or by `repair`, and new lines are written
 * in its place), so they are never kept across looks.
 *
 * - The follower keeps the offset of the end of the last complete line it
 *   took (`consumed`) and the last bytes before it (up to 4 KiB, the
 *   check that the file still holds what was served).
 * - Each look opens the file and takes its inode, size and modification
 *   time. When none changed since the last look and no partial line is
 *   held, nothing is read (a small held partial line is read again anyway:
 *   a cut and a rewrite of the same size may keep the size and the time).
 * - Otherwise the held partial line is dropped and the file is read again
 *   from the kept bytes before `consumed` to the size seen, in windows of
 *   about 1 MiB. The kept bytes must come back unchanged, and the file must
 *   be at least `consumed` long: else the lines already served are gone
 *   (a failed batch cut back, a file rewritten) and the look fails with a
 *   `FileIoError` of code `ETRUNCATED` rather than guess.
 * - A window during whose read the file changed is read a second time and
 *   served only when both reads agree; else it is left for the next look.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import * as fs from "node:fs";
import type { SessionEvent } from "../core/event.ts";
import { FileIoError } from "../fs/errors.ts";
import type { FollowLineError, LineFollower } from "../log/follow.ts";
import { ioError } from "../fs/io.ts";
import { closeQuietly } from "../fs/durable_file.ts";

/** Bytes before the end of the last complete line kept as its check. */
const TAIL = 4096;
/** Bytes read from the file before its complete lines are served. */
const WINDOW = 1 << 20;
/** Bytes per read call. */
const CHUNK = 1 << 16;
/** A held partial line up to this size is read again at every look. */
const REREAD_PARTIAL = 1 << 16;
const NL = 10;

/** What a look at the file saw of it. */
interface Seen {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
}

const seenOf = (fd: number): Seen => {
  const stat = fs.fstatSync(fd, { bigint: true });
  return {
    dev: stat.dev,
    ino: stat.ino,
    size: stat.size,
    mtimeNs: stat.mtimeNs,
    ctimeNs: stat.ctimeNs,
  };
};

const same = (a: Seen | undefined, b: Seen): boolean =>
  a !== undefined && a.dev === b.dev && a.ino === b.ino &&
  a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;

const equalBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};

const concat = (parts: ReadonlyArray<Uint8Array>, total: number) => {
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

/**
 * The read call of a follower: `fs.readSync(fd, buffer, offset, length,
 * position)`; tests pass their own to change the file between two reads.
 */
export type ReadAt = (
  fd: number,
  buffer: Uint8Array,
  offset: number,
  length: number,
  position: number,
) => number;

const nodeReadAt: ReadAt = (fd, buffer, offset, length, position) =>
  fs.readSync(fd, buffer, offset, length, position);

/** Errors of a look at a followed file. */
export type FileFollowError = FollowLineError | FileIoError;

/** A follower of one file. */
export interface FileFollower {
  /**
   * Looks at the file: the events of the complete lines stored since the
   * last look, or why the file cannot be followed.
   */
  readonly look: () => Result.Result<
    ReadonlyArray<SessionEvent>,
    FileFollowError
  >;
}

/**
 * Follows the file at `path` into `follower`.
 *
 * @param path The session file.
 * @param follower The line follower, fed from its `consumed` offset.
 * @param maxLineBytes The longest line waited for.
 * @param readAt The read call; `fs.readSync` by default.
 * @returns The file follower.
 */
export const makeFileFollower = (
  path: string,
  follower: LineFollower,
  maxLineBytes: number,
  readAt: ReadAt = nodeReadAt,
): FileFollower => {
  // The bytes just before `follower.consumed()`, as served.
  let tail = new Uint8Array(0);
  // The file as the last look that read it to its end saw it.
  let seen: Seen | undefined;

  /** Reads `[from, to)`, or less when the file is shorter by then. */
  const readRange = (fd: number, from: number, to: number): Uint8Array => {
    const out = new Uint8Array(to - from);
    let at = 0;
    while (at < out.length) {
      const n = readAt(fd, out, at, out.length - at, from + at);
      if (n === 0) break;
      at += n;
    }
    return at === out.length ? out : out.subarray(0, at);
  };

  const gone = (served: number): FileIoError =>
    new FileIoError({
      operation: `find the lines already served (up to byte ${served}) in`,
      path,
      code: "ETRUNCATED",
      cause: undefined,
    });

  /**
   * Reads from `start` (the kept tail, then the new bytes from `fresh`) up
   * to `size`: at least one complete new line when there is one, about a
   * window, or past `maxLineBytes` of one line.
   */
  const readWindow = (
    fd: number,
    start: number,
    fresh: number,
    size: number,
  ): Uint8Array => {
    const parts: Uint8Array[] = [];
    let at = start;
    let newline = false;
    while (at < size) {
      const want = Math.min(CHUNK, size - at);
      const got = readRange(fd, at, at + want);
      if (got.length === 0) break;
      parts.push(got);
      if (!newline) {
        newline = got.indexOf(NL, Math.max(0, fresh - at)) !== -1;
      }
      at += got.length;
      if (got.length < want) break;
      if (newline ? at - fresh >= WINDOW : at - fresh > maxLineBytes) break;
    }
    return concat(parts, at - start);
  };

  const look = (): Result.Result<
    ReadonlyArray<SessionEvent>,
    FileFollowError
  > => {
    let fd: number | undefined;
    const events: SessionEvent[] = [];
    try {
      fd = fs.openSync(path, "r");
      for (;;) {
        const before = seenOf(fd);
        const size = Number(before.size);
        const served = follower.consumed();
        if (size < served) return Result.fail(gone(served));
        const partial = follower.partial();
        if (
          same(seen, before) &&
          (partial === 0 || partial > REREAD_PARTIAL)
        ) {
          return Result.succeed(events);
        }
        const start = served - tail.length;
        const bytes = readWindow(fd, start, served, size);
        if (!equalBytes(bytes.subarray(0, tail.length), tail)) {
          return Result.fail(gone(served));
        }
        if (!same(before, seenOf(fd))) {
          // The file changed while it was read: what was read may mix two
          // states of it. Serve only what a second read confirms.
          const again = readRange(fd, start, start + bytes.length);
          if (!equalBytes(again, bytes)) {
            seen = undefined;
            return Result.succeed(events);
          }
        }
        follower.dropPartial();
        const pushed = follower.push(bytes.subarray(tail.length));
        if (Result.isFailure(pushed)) return pushed;
        events.push(...pushed.success);
        const end = follower.consumed() - start;
        tail = bytes.slice(Math.max(0, end - TAIL), end);
        if (start + bytes.length >= size) {
          seen = before;
          return Result.succeed(events);
        }
        seen = undefined;
      }
    } catch (cause) {
      return Result.fail(ioError("read", path, cause));
    } finally {
      closeQuietly(fd);
    }
  };

  return { look };
};
