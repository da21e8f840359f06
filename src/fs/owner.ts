/**
 * Who owns a file this library leaves beside a session while it works (a
 * writer's claim, a temporary file being published), and whether that owner
 * is proven dead, so that what a killed process left is cleaned and what a
 * live one holds is never touched.
 *
 * - **Flock owners** (Deno, where `Deno.FsFile.tryLockSync` exists): the
 *   owner holds an exclusive `flock` on the file for as long as it owns it.
 *   The kernel drops the lock when the process dies, so the file's owner is
 *   dead exactly when another descriptor can take the lock. No pid is
 *   needed, and no `--allow-run`.
 * - **Pid owners** (Node, which has no `flock`, or a file system that
 *   refuses it): the owner is named by its pid and process start time
 *   (Linux `/proc`). It is dead when `process.kill(pid, 0)` says `ESRCH`,
 *   or when the pid now belongs to a process started at another time. Where
 *   the runtime refuses the check (Deno without `--allow-run`), the owner's
 *   liveness is unknown, and the refusal names the permission.
 *
 * Unknown counts as alive: nothing is removed on a guess. Pids hold on one
 * host and one pid namespace only; `flock` holds on one host's local file
 * systems (not NFS).
 *
 * Temporary files are named `.<target>.<uuid>.<owner>.tmp`, the owner being
 * `f<pid>-<start>` (flock) or `p<pid>-<start>` (pid; `x` for an unknown start
 * time), so the next publish to the same target can judge and remove them
 * ({@link sweepStaleTemps}).
 *
 * @module
 * @internal
 */
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import process from "node:process";
import type { FileIoError } from "./errors.ts";
import { errorCode, ioError, missingPermission } from "./io.ts";

/** A file open through Deno, holding or able to take an `flock`. */
export interface LockableFile {
  /** Takes the exclusive lock if free: `false` when another holds it. */
  readonly tryLockSync: (exclusive?: boolean) => boolean;
  /** The file's inode, to tell whether a name still names this file. */
  readonly statSync: () => { readonly ino: number | null };
  /** Closes the descriptor, dropping its lock. */
  readonly close: () => void;
}

/** The part of the `Deno` namespace this module uses. */
interface DenoFiles {
  readonly openSync: (
    path: string,
    options: {
      readonly read?: boolean;
      readonly write?: boolean;
      readonly createNew?: boolean;
    },
  ) => LockableFile;
  readonly statSync: (path: string) => { readonly ino: number | null };
}

const isDenoFiles = (value: unknown): value is DenoFiles => {
  if (typeof value !== "object" || value === null) return false;
  if (!("openSync" in value) || typeof value.openSync !== "function") {
    return false;
  }
  if (!("statSync" in value) || typeof value.statSync !== "function") {
    return false;
  }
  if (!("FsFile" in value) || typeof value.FsFile !== "function") return false;
  const proto: unknown = value.FsFile.prototype;
  return typeof proto === "object" && proto !== null &&
    "tryLockSync" in proto && typeof proto.tryLockSync === "function";
};

/** Deno's file calls where the runtime has `flock`, else undefined (Node). */
const denoFiles: DenoFiles | undefined = (() => {
  const deno: unknown = Reflect.get(globalThis, "Deno");
  return isDenoFiles(deno) ? deno : undefined;
})();

/** The start time of a process from `/proc`, or null where unavailable. */
const processStart = (pid: number): string | null => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const start = fields[19];
    return start !== undefined && /^\d+$/.test(start) ? start : null;
  } catch {
    return null;
  }
};

/** This process's start time, read once. */
export const ownStart: string | null = processStart(process.pid);

/** The owner of a file: a process, and how it holds the file. */
export interface Owner {
  /** The owner's pid. */
  readonly pid: number;
  /** Its start time from `/proc`, when it could read it. */
  readonly start: string | null;
  /** Whether it holds an `flock` on the file while it owns it. */
  readonly flock: boolean;
}

/** What is known of an owner. */
export type Liveness =
  | { readonly _tag: "Live" }
  | { readonly _tag: "Dead" }
  /** The file is gone: its owner released it, or someone removed it. */
  | { readonly _tag: "Gone" }
  /** This process could not tell; treated as live. */
  | {
    readonly _tag: "Unknown";
    readonly reason: string;
    readonly permission: string | undefined;
  };

const live: Liveness = { _tag: "Live" };
const dead: Liveness = { _tag: "Dead" };
const gone: Liveness = { _tag: "Gone" };

const unknown = (what: string, error: unknown): Liveness => {
  const permission = missingPermission(error);
  return {
    _tag: "Unknown",
    reason: permission === undefined
      ? `${what} failed${
        errorCode(error) === undefined ? "" : ` (${errorCode(error)})`
      }`
      : `${what} needs ${permission}`,
    permission,
  };
};

/** Judges a pid owner: `process.kill(pid, 0)`, then the start time. */
const judgePid = (pid: number, start: string | null): Liveness => {
  if (pid === process.pid) {
    return start === null || ownStart === null || start === ownStart
      ? live
      : dead;
  }
  try {
    process.kill(pid, 0);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ESRCH") return dead;
    if (code !== "EPERM") {
      return unknown(`checking whether process ${pid} is alive`, error);
    }
    // EPERM: the pid is alive and belongs to another user.
  }
  if (start === null) return live;
  const now = processStart(pid);
  if (now !== null) return now === start ? live : dead;
  // The pid may have died since the signal: a missing /proc entry says so.
  try {
    fs.statSync(`/proc/${pid}`);
  } catch (error) {
    if (errorCode(error) === "ENOENT" && fs.existsSync("/proc/self")) {
      return dead;
    }
  }
  return live;
};

/**
 * Judges a flock-held file by taking its lock: free means the owner is
 * gone. With `remove`, a dead file is unlinked while the lock is held, so
 * an owner that created the file but has not locked it yet finds the name
 * gone (see {@link createOwnedTemp}) instead of losing it later.
 */
const judgeFlock = (
  files: DenoFiles,
  path: string,
  remove: boolean,
): Liveness | undefined => {
  let file: LockableFile;
  try {
    file = files.openSync(path, { read: true });
  } catch (error) {
    if (errorCode(error) === "ENOENT" || isNotFound(error)) return gone;
    return unknown(`opening ${path}`, error);
  }
  try {
    let free: boolean;
    try {
      free = file.tryLockSync(true);
    } catch {
      // No flock on this file system: the caller judges by pid.
      return undefined;
    }
    if (!free) return live;
    if (remove) unlinkIfPresent(path);
    return dead;
  } finally {
    file.close();
  }
};

const isNotFound = (error: unknown): boolean =>
  error instanceof Error && error.name === "NotFound";

/**
 * Runs a tidying step whose failure changes nothing: a file gone already
 * or not ours to remove is judged again next time, a descriptor that does
 * not close is closed already.
 */
const quietly = (tidy: () => void): void => {
  try {
    tidy();
  } catch {
    // Nothing to do: see above.
  }
};

const unlinkIfPresent = (path: string): void =>
  quietly(() => fs.unlinkSync(path));

/**
 * Judges the owner of the file at `path`, and with `remove` unlinks the
 * file when the owner is proven dead.
 *
 * @param owner Who owns the file.
 * @param path The file.
 * @param remove Remove the file when its owner is dead.
 * @returns What is known of the owner.
 */
export const judgeOwner = (
  owner: Owner,
  path: string,
  remove: boolean,
): Liveness => {
  if (owner.flock && denoFiles !== undefined) {
    const judged = judgeFlock(denoFiles, path, remove);
    if (judged !== undefined) return judged;
  }
  const judged = judgePid(owner.pid, owner.start);
  if (judged._tag === "Dead" && remove) unlinkIfPresent(path);
  return judged;
};

/** A temporary file this process owns, open for writing. */
export interface OwnedTemp {
  /** Its path. */
  readonly path: string;
  /** A `node:fs` descriptor open for reading and writing. */
  readonly fd: number;
  /** The Deno file holding its `flock`, kept open while it is owned. */
  readonly lock: LockableFile | undefined;
  /** The owner written in its name. */
  readonly owner: Owner;
}

const ownerTag = (owner: Owner): string =>
  `${owner.flock ? "f" : "p"}${owner.pid}-${owner.start ?? "x"}`;

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const TEMP_TAIL = new RegExp(`^(${UUID})\\.([fp])(\\d+)-(\\d+|x)\\.tmp$`);

/**
 * The owner of a temporary file named for `base`
 * (`.<base>.<uuid>.<owner>.tmp`), or undefined for any other name.
 *
 * @param name A file name in the folder.
 * @param base The target's file name.
 * @returns The owner, when the name is such a temporary file.
 */
const tempOwner = (name: string, base: string): Owner | undefined => {
  const head = `.${base}.`;
  if (!name.startsWith(head)) return undefined;
  const match = TEMP_TAIL.exec(name.slice(head.length));
  if (match === null) return undefined;
  const [, , kind, pid, start] = match;
  if (pid === undefined || start === undefined) return undefined;
  return {
    pid: Number(pid),
    start: start === "x" ? null : start,
    flock: kind === "f",
  };
};

/**
 * Removes the temporary files named for `base` in `folder` whose owner is
 * proven dead: what a killed publish left. Live and unknown owners' files
 * stay, and so do names of any other shape.
 *
 * @param folder The folder.
 * @param base The target's file name.
 * @returns The names removed.
 */
export const sweepStaleTemps = (
  folder: string,
  base: string,
): ReadonlyArray<string> => {
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const owner = tempOwner(name, base);
    if (owner === undefined) continue;
    const path = nodePath.join(folder, name);
    if (judgeOwner(owner, path, true)._tag === "Dead") removed.push(name);
  }
  return removed;
};

const closeQuietly = (fd: number): void => quietly(() => fs.closeSync(fd));

/**
 * Creates a new temporary file for `base` in `folder`, owned by this
 * process: under Deno it is `flock`ed and checked to be still named (a
 * sweeper that judged it in the instant between its creation and its lock
 * removed it; then another name is tried), elsewhere its name carries this
 * process's pid and start time.
 *
 * @param folder The folder.
 * @param base The target's file name.
 * @returns The file, or why it could not be created.
 */
export const createOwnedTemp = (
  folder: string,
  base: string,
): { readonly ok: OwnedTemp } | { readonly error: FileIoError } => {
  const pidOwner: Owner = { pid: process.pid, start: ownStart, flock: false };
  const nameFor = (owner: Owner) =>
    nodePath.join(folder, `.${base}.${randomUUID()}.${ownerTag(owner)}.tmp`);
  if (denoFiles !== undefined) {
    const owner: Owner = { ...pidOwner, flock: true };
    for (let attempt = 0; attempt < 8; attempt++) {
      const path = nameFor(owner);
      let file: LockableFile;
      try {
        file = denoFiles.openSync(path, {
          read: true,
          write: true,
          createNew: true,
        });
      } catch (error) {
        return { error: ioError("create", path, error) };
      }
      let locked: boolean;
      try {
        locked = file.tryLockSync(true);
      } catch {
        // No flock here: own the file by pid instead.
        file.close();
        unlinkIfPresent(path);
        break;
      }
      let named = false;
      if (locked) {
        try {
          named = denoFiles.statSync(path).ino === file.statSync().ino;
        } catch {
          named = false;
        }
      }
      if (!named) {
        // A sweeper took it for a dead owner's file in the instant before
        // the lock: it removes the name; try another.
        file.close();
        continue;
      }
      let fd: number;
      try {
        fd = fs.openSync(path, "r+");
      } catch (error) {
        unlinkIfPresent(path);
        file.close();
        return { error: ioError("open", path, error) };
      }
      return { ok: { path, fd, lock: file, owner } };
    }
  }
  const path = nameFor(pidOwner);
  try {
    return {
      ok: {
        path,
        fd: fs.openSync(path, "wx"),
        lock: undefined,
        owner: pidOwner,
      },
    };
  } catch (error) {
    return { error: ioError("create", path, error) };
  }
};

/**
 * Releases an owned temporary file: closes its descriptor, removes its
 * name, then drops the lock (in that order, so the name is never seen
 * unlocked).
 *
 * @param temp The file.
 */
export const releaseOwnedTemp = (temp: OwnedTemp): void => {
  if (temp.fd >= 0) closeQuietly(temp.fd);
  unlinkIfPresent(temp.path);
  temp.lock?.close();
};
