/**
 * Repairing a log named by its path: the store's durable `repair` when the
 * file name is a store name (`<encoded id>.jsonl`), else a small adapter
 * that does the same steps on the file itself.
 *
 * Adapter: the store opens sessions by id inside a root folder, and not
 * every file name is the encoding of an id (`session.v3.jsonl`, written by
 * `migrate`, is not: `.` is encoded). For those, this module takes the same
 * writer claim the store would (`lock.ts`, so a store writer and this
 * command exclude each other), reads strictly, cuts a torn tail, appends the
 * closers in one write and fsyncs, then releases the claim.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import type { SessionEvent } from "../core/event.ts";
import type { Session } from "../session/session.ts";
import { interruptedTurnClosers } from "../session/repair.ts";
import { replayResult } from "../surface/mod.ts";
import type { SurfaceError } from "../core/errors.ts";
import { sessionIdOfFileName } from "./names.ts";
import type { FileIoError } from "../fs/errors.ts";
import {
  AppendOutcomeUnknown,
  type SessionLocked,
  StorageError,
} from "../store/errors.ts";
import { acquireClaim, type HeldClaim, releaseClaim } from "./lock.ts";
import { readSessionFile, type TornTail } from "../log/reader.ts";
import { makeJsonlStore } from "./store.ts";
import type { OpenError, RepairOptions, WriteError } from "../store/store.ts";
import { appendBatch, closeQuietly, nodeAppendIo } from "../fs/durable_file.ts";
import { ioError } from "../fs/io.ts";
import { encodeEventLines } from "../store/lines.ts";
import { writableLog } from "../store/open.ts";

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

const viaStore = (
  file: string,
  id: string,
  options: RepairOptions | undefined,
): Effect.Effect<RepairDone, RepairFileError> =>
  Effect.gen(function* () {
    const store = yield* makeJsonlStore({ root: nodePath.dirname(file) });
    return yield* store.withSession(id, (handle) =>
      Effect.map(store.repair(handle, options), (done) => ({
        session: done.session,
        closers: done.closers,
        cutTornTail: handle.report.tornTail,
        viaStore: true,
      })));
  });

const storage = (error: FileIoError): StorageError =>
  new StorageError({
    operation: "repair",
    id: undefined,
    code: error.code,
    cause: error,
    ...(error.permission === undefined ? {} : { permission: error.permission }),
  });

/** The file's writer claim, released when the scope closes. */
const lockFile = (file: string) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      let held: HeldClaim | undefined;
      return Effect.mapError(
        Effect.map(
          acquireClaim(file, nodePath.basename(file), (claim) => {
            held = claim;
          }),
          () => held,
        ),
        (error) => error._tag === "SessionLocked" ? error : storage(error),
      );
    }),
    (claim) =>
      Effect.sync(() => {
        if (claim !== undefined) releaseClaim(claim);
      }),
  );

/** A descriptor of the file open for writing, closed when the scope closes. */
const openForWrite = (file: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => fs.openSync(file, "r+"),
      catch: (cause) => storage(ioError("open for write", file, cause)),
    }),
    (fd) => Effect.sync(() => closeQuietly(fd)),
  );

const viaFile = (
  file: string,
  options: RepairOptions | undefined,
): Effect.Effect<RepairDone, RepairFileError> =>
  Effect.scoped(Effect.gen(function* () {
    yield* lockFile(file);
    const log = yield* writableLog(
      yield* Effect.mapError(
        readSessionFile(file),
        (error) => error._tag === "FileIoError" ? storage(error) : error,
      ),
    );
    const closers = interruptedTurnClosers(log.events, options);
    const folded = replayResult(closers, log.session.surface);
    if (folded._tag === "Failure") return yield* folded.failure.error;
    const torn = log.report.tornTail;
    if (closers.length === 0 && torn === undefined) {
      return {
        session: log.session,
        closers,
        cutTornTail: undefined,
        viaStore: false,
      };
    }
    const fd = yield* openForWrite(file);
    const bytes = new TextEncoder().encode(
      encodeEventLines(closers, undefined),
    );
    if (torn !== undefined) {
      yield* Effect.try({
        try: () => {
          fs.ftruncateSync(fd, log.report.bytes);
          fs.fsyncSync(fd);
        },
        catch: (cause) => storage(ioError("cut the torn tail of", file, cause)),
      });
    }
    const outcome = appendBatch(nodeAppendIo, fd, log.report.bytes, bytes);
    if (outcome._tag === "NotWritten") {
      return yield* storage(ioError("append to", file, outcome.cause));
    }
    if (outcome._tag === "Unknown") {
      return yield* new AppendOutcomeUnknown({
        id: log.session.header.id,
        fromSeq: log.session.surface.nextSeq,
        events: closers.length,
        batch: closers,
        header: undefined,
        cause: ioError("append to", file, outcome.cause),
        undo: ioError("truncate back", file, outcome.undo),
      });
    }
    return {
      session: { ...log.session, surface: folded.success },
      closers,
      cutTornTail: torn,
      viaStore: false,
    };
  }));

/**
 * Appends the closers of an interrupted last turn to a log file, durably,
 * after cutting a torn tail. The lock and the descriptor are released on
 * success, failure and interruption alike.
 *
 * @param file The log file (current format version).
 * @param options What becomes of a partial answer (`partialAnswer`).
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
  options?: RepairOptions,
): Effect.Effect<RepairDone, RepairFileError> {
  return Effect.suspend(() => {
    // Checked first: making the store would create a missing folder.
    try {
      fs.statSync(file);
    } catch (cause) {
      return Effect.fail(storage(ioError("open", file, cause)));
    }
    const id = sessionIdOfFileName(nodePath.basename(file));
    return id === undefined
      ? viaFile(file, options)
      : viaStore(file, id, options);
  });
}
