/**
 * The one-writer lock of a session file: `<file>.lock`, holding the
 * writer's pid, its process start time and a random token.
 *
 * A lock is published with `link` from a fully written temp file, which has
 * the no-clobber semantics of `open(..., "wx")` and never leaves an empty
 * lock behind. A lock whose pid is dead (`process.kill(pid, 0)` fails
 * `ESRCH`), or whose pid now belongs to a process started at another time
 * (Linux `/proc`), is stale: it is moved aside under a unique name, checked
 * to be the one seen, and deleted, then the lock is taken again. A live
 * lock, including one held by this process, is `SessionLocked`.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import process from "node:process";
import type { JsonlIoError } from "./errors.ts";
import { SessionLocked } from "../store/errors.ts";
import { errorCode, ioError } from "./io.ts";

/** What a lock file holds. */
interface LockInfo {
  readonly pid: number;
  readonly start: string | null;
  readonly token: string;
}

/** A held lock. */
export interface HeldLock {
  /** The lock file. */
  readonly path: string;
  /** The token written in it. */
  readonly token: string;
}

/** The start time of a process from `/proc`, or null where unavailable. */
const processStart = (pid: number): string | null => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19] ?? null;
  } catch {
    return null;
  }
};

const ownStart: string | null = processStart(process.pid);

const isAlive = (info: LockInfo): boolean => {
  try {
    process.kill(info.pid, 0);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ESRCH") return false;
    if (code !== "EPERM") {
      // No permission to signal (a Deno sandbox): ask /proc where it exists.
      try {
        if (
          fs.existsSync("/proc/self") && !fs.existsSync(`/proc/${info.pid}`)
        ) {
          return false;
        }
      } catch {
        // /proc is not readable either: assume the holder is alive.
      }
    }
  }
  if (info.start === null) return true;
  const start = processStart(info.pid);
  return start === null || start === info.start;
};

const readLock = (path: string): LockInfo | undefined | "missing" => {
  let text: string;
  try {
    text = fs.readFileSync(path, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return "missing";
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    if (
      typeof value === "object" && value !== null && "pid" in value &&
      typeof value.pid === "number" && "token" in value &&
      typeof value.token === "string"
    ) {
      const start = "start" in value && typeof value.start === "string"
        ? value.start
        : null;
      return { pid: value.pid, start, token: value.token };
    }
  } catch {
    // An unreadable lock was not written by this module: treat it as stale.
  }
  return undefined;
};

const unlinkQuietly = (path: string): void => {
  try {
    fs.unlinkSync(path);
  } catch {
    // Already gone.
  }
};

/**
 * Takes the lock of a session file.
 * @internal
 */
export const acquireLock = (
  path: string,
  id: string,
): Result.Result<HeldLock, SessionLocked | JsonlIoError> => {
  const token = randomUUID();
  const info: LockInfo = { pid: process.pid, start: ownStart, token };
  const temp = `${path}.${token}.tmp`;
  for (let attempt = 0; attempt < 4; attempt++) {
    try {
      fs.writeFileSync(temp, JSON.stringify(info), { flag: "wx" });
    } catch (error) {
      return Result.fail(ioError("write the lock", temp, error));
    }
    try {
      fs.linkSync(temp, path);
      unlinkQuietly(temp);
      return Result.succeed({ path, token });
    } catch (error) {
      unlinkQuietly(temp);
      if (errorCode(error) !== "EEXIST") {
        return Result.fail(ioError("take the lock", path, error));
      }
    }
    const seen = readLock(path);
    if (seen === "missing") continue;
    if (seen !== undefined && isAlive(seen)) {
      return Result.fail(new SessionLocked({ id, pid: seen.pid }));
    }
    // Stale: move it aside, and delete it only if it is the lock we judged.
    const aside = `${path}.${token}.stale`;
    try {
      fs.renameSync(path, aside);
    } catch (error) {
      if (errorCode(error) === "ENOENT") continue;
      return Result.fail(ioError("reclaim the lock", path, error));
    }
    const moved = readLock(aside);
    const same = seen === undefined
      ? moved === undefined
      : moved !== undefined && moved !== "missing" &&
        moved.token === seen.token;
    if (!same) {
      // A fresh lock replaced the stale one meanwhile: put it back.
      try {
        fs.linkSync(aside, path);
      } catch {
        // Someone holds the lock again; theirs stays.
      }
      unlinkQuietly(aside);
      return Result.fail(
        new SessionLocked({
          id,
          pid: moved !== undefined && moved !== "missing"
            ? moved.pid
            : undefined,
        }),
      );
    }
    unlinkQuietly(aside);
  }
  const last = readLock(path);
  return Result.fail(
    new SessionLocked({
      id,
      pid: last !== undefined && last !== "missing" ? last.pid : undefined,
    }),
  );
};

/**
 * Releases a held lock, if the file still holds its token.
 * @internal
 */
export const releaseLock = (lock: HeldLock): void => {
  const current = readLock(lock.path);
  if (
    current !== undefined && current !== "missing" &&
    current.token === lock.token
  ) {
    unlinkQuietly(lock.path);
  }
};

/**
 * Whether a live writer holds the lock at `path`.
 * @internal
 */
export const isLocked = (path: string): boolean => {
  const current = readLock(path);
  return current !== undefined && current !== "missing" && isAlive(current);
};
