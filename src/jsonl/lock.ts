/**
 * The writer claim of a session file: at most one writer holds it, under
 * every interleaving of acquire, reclaim and release among any number of
 * processes, Deno and Node alike, and a released claim never comes back.
 *
 * The protocol ({@link claimStep}, one file call per step):
 *
 * 1. **Publish.** A would-be writer publishes its own claim file
 *    `<file>.lock.<uuid>`, holding its pid, process start time, token and
 *    whether it holds an `flock`: written to an owned temporary file first
 *    (under Deno `flock`ed before anything is written, see `owner.ts`),
 *    then `link`ed into place, so a claim is never empty and, under Deno,
 *    never visible unlocked.
 * 2. **List** the session's claim files, the 0.2 single `<file>.lock`
 *    included (judged by its pid, so a 0.2 writer still excludes this one).
 * 3. **Judge** each other claim: dead only when proven (the kernel dropped
 *    its owner's `flock`; or, for a pid claim, the pid is gone or belongs to
 *    a process started at another time), then **remove** it. Live claims,
 *    and claims whose owner this process cannot judge (Deno without
 *    `--allow-run` before a Node writer's pid claim), block.
 * 4. **Decide.** With no blocker the claim is won; otherwise the writer
 *    **withdraws** its claim and drops its lock, and fails `SessionLocked`
 *    (after a few attempts with a random back-off of a few milliseconds).
 *
 * Why one winner: a claim is removed only by its owner (withdraw, release)
 * or once its owner is proven dead, and names are never reused. If two
 * writers held the claim at once, the one that published later listed the
 * folder after its own publish, so after the other's claim was published
 * and before it was removed: it saw that claim, judged it live and withdrew.
 * Two contenders can both withdraw (a spurious refusal, which the retry
 * absorbs) but never both win. `tests/store/claim_interleavings_test.ts`
 * runs these step functions over a model file system through every
 * interleaving of three processes.
 *
 * Release removes the own claim, then drops the lock. `isClaimed` means some
 * claim is live (or cannot be judged).
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Random from "effect/Random";
import * as Result from "effect/Result";
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import process from "node:process";
import type { FileIoError } from "../fs/errors.ts";
import { SessionLocked } from "../store/errors.ts";
import { errorCode, ioError, missingPermission } from "../fs/io.ts";
import {
  createOwnedTemp,
  judgeOwner,
  type Liveness,
  type LockableFile,
  type Owner,
  ownStart,
  releaseOwnedTemp,
  sweepStaleTemps,
} from "../fs/owner.ts";

/** What is known of one claim's owner, as the protocol judged it. */
export interface Judged {
  /** Live, dead, gone or unknown. */
  readonly liveness: Liveness;
  /** The pid the claim names, when readable. */
  readonly pid: number | undefined;
}

/** A claim that stops this process from winning. */
export interface Blocker {
  /** The claim's name. */
  readonly name: string;
  /** The pid it names, when readable. */
  readonly pid: number | undefined;
  /** Live, or unknown (with why). */
  readonly liveness: Liveness;
}

/** This process's published claim, and what holds its lock. */
export interface OwnClaim<H> {
  /** The claim's name. */
  readonly name: string;
  /** The holder (under Deno the `flock`ed file), dropped last. */
  readonly holder: H;
}

/**
 * The file calls of the claim protocol, one per step. The real ones work on
 * the folder of a session file; tests supply a model.
 */
export interface ClaimIo<H> {
  /** Publishes a new complete claim of this process under a new name. */
  readonly publish: () => Result.Result<OwnClaim<H>, FileIoError>;
  /** The names of the session's claim files. */
  readonly list: () => Result.Result<ReadonlyArray<string>, FileIoError>;
  /** Judges the owner of a claim. */
  readonly judge: (name: string) => Judged;
  /** Removes a claim's name (a missing name is no error). */
  readonly remove: (name: string) => void;
  /** Drops what holds the own claim's lock. */
  readonly drop: (holder: H) => void;
}

/** Where one process is in the claim protocol. */
export type ClaimStep<H> =
  | { readonly _tag: "Publish" }
  | { readonly _tag: "List"; readonly own: OwnClaim<H> }
  | {
    readonly _tag: "Judge";
    readonly own: OwnClaim<H>;
    readonly pending: ReadonlyArray<string>;
    readonly blockers: ReadonlyArray<Blocker>;
  }
  | {
    readonly _tag: "Remove";
    readonly own: OwnClaim<H>;
    readonly target: string;
    readonly pending: ReadonlyArray<string>;
    readonly blockers: ReadonlyArray<Blocker>;
  }
  | {
    readonly _tag: "Withdraw";
    readonly own: OwnClaim<H>;
    readonly blockers: ReadonlyArray<Blocker>;
    readonly error: FileIoError | undefined;
  }
  | {
    readonly _tag: "Drop";
    readonly own: OwnClaim<H>;
    readonly blockers: ReadonlyArray<Blocker>;
    readonly error: FileIoError | undefined;
  }
  | { readonly _tag: "Won"; readonly own: OwnClaim<H> }
  | { readonly _tag: "Lost"; readonly blockers: ReadonlyArray<Blocker> }
  | { readonly _tag: "Failed"; readonly error: FileIoError }
  | { readonly _tag: "Release"; readonly own: OwnClaim<H> }
  | { readonly _tag: "ReleaseDrop"; readonly own: OwnClaim<H> }
  | { readonly _tag: "Released" };

/** The first step of an acquire. */
export const startAcquire: ClaimStep<never> = { _tag: "Publish" };

/** Whether a step is the end of an acquire or a release. */
export const isSettled = <H>(step: ClaimStep<H>): boolean =>
  step._tag === "Won" || step._tag === "Lost" || step._tag === "Failed" ||
  step._tag === "Released";

/**
 * Runs one step of the claim protocol: at most one call of `io`.
 *
 * @param io The file calls.
 * @param step Where the process is.
 * @returns Where it is next; a settled step is returned as it is.
 */
export const claimStep = <H>(
  io: ClaimIo<H>,
  step: ClaimStep<H>,
): ClaimStep<H> => {
  switch (step._tag) {
    case "Publish": {
      const published = io.publish();
      return Result.isFailure(published)
        ? { _tag: "Failed", error: published.failure }
        : { _tag: "List", own: published.success };
    }
    case "List": {
      const listed = io.list();
      if (Result.isFailure(listed)) {
        return {
          _tag: "Withdraw",
          own: step.own,
          blockers: [],
          error: listed.failure,
        };
      }
      return {
        _tag: "Judge",
        own: step.own,
        pending: listed.success.filter((name) => name !== step.own.name),
        blockers: [],
      };
    }
    case "Judge": {
      const [name, ...pending] = step.pending;
      if (name === undefined) {
        return step.blockers.length === 0 ? { _tag: "Won", own: step.own } : {
          _tag: "Withdraw",
          own: step.own,
          blockers: step.blockers,
          error: undefined,
        };
      }
      const judged = io.judge(name);
      switch (judged.liveness._tag) {
        case "Gone":
          return { ...step, pending };
        case "Dead":
          return {
            _tag: "Remove",
            own: step.own,
            target: name,
            pending,
            blockers: step.blockers,
          };
        case "Live":
        case "Unknown":
          return {
            ...step,
            pending,
            blockers: [...step.blockers, {
              name,
              pid: judged.pid,
              liveness: judged.liveness,
            }],
          };
      }
      // Unreachable: the switch is exhaustive.
      return step;
    }
    case "Remove":
      io.remove(step.target);
      return {
        _tag: "Judge",
        own: step.own,
        pending: step.pending,
        blockers: step.blockers,
      };
    case "Withdraw":
      io.remove(step.own.name);
      return { ...step, _tag: "Drop" };
    case "Drop":
      io.drop(step.own.holder);
      return step.error === undefined
        ? { _tag: "Lost", blockers: step.blockers }
        : { _tag: "Failed", error: step.error };
    case "Release":
      io.remove(step.own.name);
      return { _tag: "ReleaseDrop", own: step.own };
    case "ReleaseDrop":
      io.drop(step.own.holder);
      return { _tag: "Released" };
    case "Won":
    case "Lost":
    case "Failed":
    case "Released":
      return step;
  }
};

/** Runs steps until settled. */
const settle = <H>(io: ClaimIo<H>, first: ClaimStep<H>): ClaimStep<H> => {
  let step = first;
  while (!isSettled(step)) step = claimStep(io, step);
  return step;
};

/** What a claim file holds. */
interface ClaimInfo {
  readonly pid: number;
  readonly start: string | null;
  readonly token: string;
  readonly flock: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether `name` is a claim file of the session file named `base`. */
const isClaimName = (name: string, base: string): boolean =>
  name === `${base}.lock` ||
  (name.startsWith(`${base}.lock.`) &&
    UUID.test(name.slice(base.length + 6)));

const parseClaim = (text: string): ClaimInfo | undefined => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (
    typeof value !== "object" || value === null || !("pid" in value) ||
    typeof value.pid !== "number" || !Number.isSafeInteger(value.pid) ||
    value.pid <= 0
  ) {
    return undefined;
  }
  return {
    pid: value.pid,
    start: "start" in value && typeof value.start === "string"
      ? value.start
      : null,
    token: "token" in value && typeof value.token === "string"
      ? value.token
      : "",
    flock: "flock" in value && value.flock === true,
  };
};

/**
 * The real file calls of the claim of the session file `file`. Under Deno
 * the holder is the `flock`ed claim file; under Node there is none.
 *
 * @param file The session file.
 * @returns The calls.
 */
const fileClaimIo = (
  file: string,
): ClaimIo<LockableFile | undefined> => {
  const folder = nodePath.dirname(file);
  const base = nodePath.basename(file);
  return {
    publish: () => {
      // A claim's temporary file left by a killed acquire: remove it.
      sweepStaleTemps(folder, `${base}.lock`);
      const created = createOwnedTemp(folder, `${base}.lock`);
      if ("error" in created) return Result.fail(created.error);
      const temp = created.ok;
      const token = randomUUID();
      const name = `${file}.lock.${token}`;
      const info: ClaimInfo = {
        pid: process.pid,
        start: ownStart,
        token,
        flock: temp.owner.flock,
      };
      try {
        fs.writeSync(temp.fd, JSON.stringify(info));
        fs.linkSync(temp.path, name);
      } catch (error) {
        releaseOwnedTemp(temp);
        return Result.fail(ioError("publish the writer claim", name, error));
      }
      // The name goes, the lock stays: it now guards the claim.
      try {
        fs.closeSync(temp.fd);
        fs.unlinkSync(temp.path);
      } catch {
        // A leftover temporary name is swept by the next acquire.
      }
      return Result.succeed({ name, holder: temp.lock });
    },
    list: () => {
      try {
        return Result.succeed(
          fs.readdirSync(folder).filter((name) => isClaimName(name, base))
            .map((name) => nodePath.join(folder, name)),
        );
      } catch (error) {
        return Result.fail(ioError("list the writer claims", folder, error));
      }
    },
    judge: (name) => judgeClaim(name),
    remove: (name) => {
      try {
        fs.unlinkSync(name);
      } catch {
        // Gone already; a claim that cannot be removed is judged again.
      }
    },
    drop: (holder) => holder?.close(),
  };
};

/** Judges the claim file at `path` (without removing it). */
const judgeClaim = (path: string): Judged => {
  let text: string;
  try {
    text = fs.readFileSync(path, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") {
      return { liveness: { _tag: "Gone" }, pid: undefined };
    }
    const permission = missingPermission(error);
    return {
      liveness: {
        _tag: "Unknown",
        reason: permission === undefined
          ? `its claim file could not be read${
            errorCode(error) === undefined ? "" : ` (${errorCode(error)})`
          }`
          : `reading its claim file needs ${permission}`,
        permission,
      },
      pid: undefined,
    };
  }
  const info = parseClaim(text);
  if (info === undefined) {
    // Not written by this library (claims are published whole): never
    // removed on a guess.
    return {
      liveness: {
        _tag: "Unknown",
        reason: `${path} is not a writer claim`,
        permission: undefined,
      },
      pid: undefined,
    };
  }
  const owner: Owner = { pid: info.pid, start: info.start, flock: info.flock };
  return { liveness: judgeOwner(owner, path, false), pid: info.pid };
};

/** A claim this process holds. */
export interface HeldClaim {
  /** The claim file. */
  readonly name: string;
  /** The `flock`ed claim file under Deno. */
  readonly holder: LockableFile | undefined;
  /** The session file. */
  readonly file: string;
}

const ATTEMPTS = 4;

const lockedError = (
  id: string,
  blockers: ReadonlyArray<Blocker>,
): SessionLocked => {
  const firstLive = blockers.find((b) => b.liveness._tag === "Live");
  if (firstLive !== undefined) {
    return new SessionLocked({ id, pid: firstLive.pid, liveness: "live" });
  }
  const first = blockers[0];
  const liveness = first?.liveness;
  if (liveness === undefined || liveness._tag !== "Unknown") {
    return new SessionLocked({ id, pid: first?.pid });
  }
  return new SessionLocked({
    id,
    pid: first?.pid,
    liveness: "unknown",
    reason: liveness.reason,
    ...(liveness.permission === undefined
      ? {}
      : { permission: liveness.permission }),
  });
};

/**
 * Takes the writer claim of a session file; `onHeld` runs in the same
 * uninterruptible step that wins, so an interruption cannot lose a claim.
 *
 * @param file The session file.
 * @param id The session id, for `SessionLocked`.
 * @param onHeld Keeps the claim (the caller releases it).
 * @returns `Effect<void, SessionLocked | FileIoError>`.
 * @internal
 */
export const acquireClaim = (
  file: string,
  id: string,
  onHeld: (claim: HeldClaim) => void,
): Effect.Effect<void, SessionLocked | FileIoError> => {
  const io = fileClaimIo(file);
  const attempt = (
    left: number,
  ): Effect.Effect<void, SessionLocked | FileIoError> =>
    Effect.flatMap(
      Effect.sync(() => {
        const end = settle(io, startAcquire);
        if (end._tag === "Won") {
          onHeld({ name: end.own.name, holder: end.own.holder, file });
        }
        return end;
      }),
      (end) => {
        switch (end._tag) {
          case "Won":
            return Effect.void;
          case "Failed":
            return Effect.fail(end.error);
          case "Lost":
            // A contender that withdraws too makes both lose: back off a
            // random few milliseconds and try again.
            return left <= 1
              ? Effect.fail(lockedError(id, end.blockers))
              : Effect.flatMap(
                Random.nextIntBetween(1, 4 << (ATTEMPTS - left)),
                (ms) => Effect.andThen(Effect.sleep(ms), attempt(left - 1)),
              );
          default:
            return Effect.fail(lockedError(id, []));
        }
      },
    );
  return attempt(ATTEMPTS);
};

/**
 * Releases a held claim: removes its file, then drops its lock.
 *
 * @param claim The claim.
 * @internal
 */
export const releaseClaim = (claim: HeldClaim): void => {
  settle(fileClaimIo(claim.file), {
    _tag: "Release",
    own: { name: claim.name, holder: claim.holder },
  });
};

/**
 * Whether a live writer (or one this process cannot judge) claims the
 * session file.
 *
 * @param file The session file.
 * @returns `true` when claimed.
 * @internal
 */
export const isClaimed = (file: string): boolean => {
  const io = fileClaimIo(file);
  const listed = io.list();
  if (Result.isFailure(listed)) return false;
  return listed.success.some((name) => {
    const judged = io.judge(name).liveness._tag;
    return judged === "Live" || judged === "Unknown";
  });
};
