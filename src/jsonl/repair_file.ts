/**
 * Repairing a log named by its path: the store's durable `repair` when the
 * file name is a store name (`<encoded id>.jsonl`), else a small adapter
 * that does the same steps on the file itself.
 *
 * Adapter: the store opens sessions by id inside a root folder, and not
 * every file name is the encoding of an id (`session.v3.jsonl`, written by
 * `migrate`, is not: `.` is encoded). For those, this module takes the same
 * lock file the store would (`<file>.lock`, so a store writer and this
 * command exclude each other), reads strictly, cuts a torn tail, appends the
 * closers in one write and fsyncs, then releases the lock.
 *
 * @module
 */
import { Effect, Result } from "effect";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import type { SessionEvent } from "../event.ts";
import type { Session } from "../session.ts";
import { interruptedTurnClosers } from "../repair.ts";
import { replayResult } from "../surface/mod.ts";
import type { SurfaceError } from "../errors.ts";
import { decodeSessionId } from "./ids.ts";
import { encodeEventLine } from "./codec.ts";
import { FormatTooOld, JsonlIoError, type SessionLocked } from "./errors.ts";
import { acquireLock, releaseLock } from "./lock.ts";
import { readSessionFile, type TornTail } from "./reader.ts";
import { makeJsonlStore, type OpenError, type WriteError } from "./store.ts";
import { FORMAT_VERSION } from "../event.ts";

/** What {@link repairFile} did. */
export interface RepairDone {
  /** The session after the closers. */
  readonly session: Session;
  /** The closers appended; empty when the last turn was closed. */
  readonly closers: ReadonlyArray<SessionEvent>;
  /** The torn tail that was cut before appending. */
  readonly cutTornTail: TornTail | undefined;
  /** Whether the store's own `repair` did it (else the file adapter). */
  readonly viaStore: boolean;
}

/** Errors of {@link repairFile}. */
export type RepairFileError =
  | OpenError
  | SurfaceError
  | WriteError
  | SessionLocked;

const EXTENSION = ".jsonl";

/** The store id a file name encodes, if it is a store name. */
const storeIdOf = (file: string): string | undefined => {
  const base = nodePath.basename(file);
  if (!base.endsWith(EXTENSION)) return undefined;
  return decodeSessionId(base.slice(0, -EXTENSION.length));
};

const viaStore = (
  file: string,
  id: string,
): Effect.Effect<RepairDone, RepairFileError> =>
  Effect.gen(function* () {
    const store = yield* makeJsonlStore({ root: nodePath.dirname(file) });
    return yield* Effect.acquireUseRelease(
      store.open(id, { mode: "write" }),
      (handle) =>
        Effect.map(store.repair(handle), (done) => ({
          session: done.session,
          closers: done.closers,
          cutTornTail: handle.report.tornTail,
          viaStore: true,
        })),
      (handle) => store.close(handle),
    );
  });

const io = (operation: string, path: string, cause: unknown): JsonlIoError =>
  new JsonlIoError({
    operation,
    path,
    code: typeof cause === "object" && cause !== null && "code" in cause &&
        typeof cause.code === "string"
      ? cause.code
      : undefined,
    cause,
  });

const viaFile = (file: string): Effect.Effect<RepairDone, RepairFileError> =>
  Effect.suspend(() => {
    const locked = acquireLock(`${file}.lock`, nodePath.basename(file));
    if (Result.isFailure(locked)) return Effect.fail(locked.failure);
    const lock = locked.success;
    return readSessionFile(file).pipe(
      Effect.flatMap((log): Effect.Effect<RepairDone, RepairFileError> => {
        if (log.version !== FORMAT_VERSION) {
          return Effect.fail(
            new FormatTooOld({
              version: log.version,
              supported: FORMAT_VERSION,
            }),
          );
        }
        const closers = interruptedTurnClosers(log.events);
        const folded = replayResult(closers, log.session.surface);
        if (folded._tag === "Failure") {
          return Effect.fail(folded.failure.error);
        }
        const torn = log.report.tornTail;
        if (closers.length === 0 && torn === undefined) {
          return Effect.succeed({
            session: log.session,
            closers,
            cutTornTail: undefined,
            viaStore: false,
          });
        }
        const bytes = new TextEncoder().encode(
          closers.map((e) => encodeEventLine(e)).join(""),
        );
        let fd: number | undefined;
        try {
          fd = fs.openSync(file, "r+");
          if (torn !== undefined) fs.ftruncateSync(fd, log.report.bytes);
          let done = 0;
          while (done < bytes.length) {
            done += fs.writeSync(
              fd,
              bytes,
              done,
              bytes.length - done,
              log.report.bytes + done,
            );
          }
          fs.fsyncSync(fd);
        } catch (cause) {
          try {
            if (fd !== undefined) {
              fs.ftruncateSync(fd, log.report.bytes);
              fs.fsyncSync(fd);
            }
          } catch {
            // The file may hold a partial batch; its reader reports a torn tail.
          }
          return Effect.fail(io("append to", file, cause));
        } finally {
          if (fd !== undefined) fs.closeSync(fd);
        }
        return Effect.succeed({
          session: { ...log.session, surface: folded.success },
          closers,
          cutTornTail: torn,
          viaStore: false,
        });
      }),
      Effect.ensuring(Effect.sync(() => releaseLock(lock))),
    );
  });

/**
 * Appends the closers of an interrupted last turn to a log file, durably,
 * after cutting a torn tail.
 *
 * @param file The log file (current format version).
 * @returns `Effect<RepairDone, OpenError | SurfaceError | WriteError>`;
 * `FormatTooOld` for an older log (migrate it first), `SessionLocked` when a
 * writer holds it.
 *
 * @example Closing a turn a crash left open
 * ```ts
 * import { repairFile } from "@palimpsest/session/jsonl";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * const file = `${dir}/crashed.v3.jsonl`;
 * Deno.writeTextFileSync(file, [
 *   '{"type":"session","version":3,"id":"s","createdAt":0,"isSeeded":false}',
 *   '{"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}',
 *   "",
 * ].join("\n"));
 * const done = await Effect.runPromise(repairFile(file));
 * assert.deepEqual(done.closers.map((e) => e.type), ["turn/end"]);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function repairFile(
  file: string,
): Effect.Effect<RepairDone, RepairFileError> {
  return Effect.suspend(() => {
    // Checked first: making the store would create a missing folder.
    try {
      fs.statSync(file);
    } catch (cause) {
      return Effect.fail(io("open", file, cause));
    }
    const id = storeIdOf(file);
    return id === undefined ? viaFile(file) : viaStore(file, id);
  });
}
