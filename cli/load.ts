/**
 * Reading a log for the command line: the streaming reader of `src/jsonl/`,
 * fed from the file in 1 MiB chunks so that progress can be drawn on
 * stderr, with `catalogMigration` from the migrations plugged in so older
 * logs are read in memory.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as Stream from "effect/Stream";
import * as fs from "node:fs";
import {
  fileBytes,
  type FileIoError,
  type LoadedLog,
  type LogReadError,
  type MigrationInput,
  readSessionStream,
} from "@palimpsest/session/jsonl";
import type {
  InvalidSessionId,
  SessionNotFound,
  StorageError,
} from "@palimpsest/session";
import type * as Postgres from "@palimpsest/session/postgres";
import type { InvalidAddress } from "@palimpsest/session/postgres";
import {
  catalogMigration,
  type MigrationError,
} from "@palimpsest/session/migrations";
import type { CliIo } from "./io.ts";
import type { CommandSpec } from "./args.ts";
import { classifiedFailure, type Command, type Outcome } from "./outcome.ts";

/** Files larger than this show progress on a terminal's stderr. */
export const PROGRESS_BYTES: number = 4 * 1024 * 1024;

const CHUNK = 1024 * 1024;

/** A session address in PostgreSQL rather than a file path. */
const POSTGRES = /^postgres(ql)?:\/\//i;

/**
 * Whether to draw progress for a file: stderr is a terminal and the file is
 * larger than {@link PROGRESS_BYTES}.
 *
 * @param io The output channel.
 * @param file The file.
 * @returns Its size when progress is shown, else undefined.
 */
export function showProgress(io: CliIo, file: string): number | undefined {
  if (!io.stderrIsTerminal) return undefined;
  try {
    const size = fs.statSync(file).size;
    return size > PROGRESS_BYTES ? size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Errors of loading a log: its content, the migration, or the storage (the
 * file, or the PostgreSQL session: a bad address, a missing session).
 */
export type LoadError =
  | LogReadError
  | MigrationError
  | FileIoError
  | StorageError
  | InvalidAddress
  | InvalidSessionId
  | SessionNotFound;

/** Tags of the load errors that are about where the log is (exit 2). */
export const storageTags: ReadonlySet<string> = new Set([
  "FileIoError",
  "StorageError",
  "InvalidAddress",
  "InvalidSessionId",
  "SessionNotFound",
]);

/**
 * Runs `f` on a session address in PostgreSQL (`postgres://…?session=ID`)
 * with the PostgreSQL module, which is loaded only then; a malformed one
 * fails `InvalidAddress`.
 *
 * @param address The address as typed: a file path or a `postgres://` URL.
 * @param f What to do with the module and the parsed address.
 * @returns `f`'s effect, or `undefined` when `address` is a file path.
 */
export function onPostgres<A, E>(
  address: string,
  f: (
    postgres: typeof Postgres,
    parsed: Postgres.PostgresAddress,
  ) => Effect.Effect<A, E>,
): Effect.Effect<A, E | InvalidAddress> | undefined {
  if (!POSTGRES.test(address)) return undefined;
  return Effect.flatMap(
    Effect.promise(() => import("@palimpsest/session/postgres")),
    (postgres): Effect.Effect<A, E | InvalidAddress> => {
      const parsed = postgres.parseSessionAddress(address);
      if (postgres.isAddressError(parsed)) return Effect.fail(parsed);
      // The POSTGRES test above makes this a PostgreSQL address.
      if (parsed.kind === "jsonl") return Effect.die(parsed);
      return f(postgres, parsed);
    },
  );
}

const mib = (bytes: number): string => (bytes / (1024 * 1024)).toFixed(1);

/** Options of {@link loadLog}. */
export interface LoadOptions {
  /** Serve the valid prefix before a bad line (see the reader). */
  readonly recover: boolean;
  /** Told the version of an older log before it is migrated. */
  readonly onOlderVersion?: (version: number) => void;
}

/**
 * Reads, migrates if older, decodes and folds a log: a file, or a session
 * in PostgreSQL named `postgres://…?session=ID` (the driver is loaded only
 * for such an address).
 *
 * @param file The file or the address.
 * @param io Where progress goes (stderr, only when it is a terminal).
 * @param options `recover`.
 * @returns `Effect<LoadedLog, LoadError>`.
 */
export function loadLog(
  file: string,
  io: CliIo,
  options: LoadOptions,
): Effect.Effect<LoadedLog, LoadError> {
  return Effect.suspend((): Effect.Effect<LoadedLog, LoadError> => {
    const migrate = (input: MigrationInput) => {
      options.onOlderVersion?.(input.version);
      return catalogMigration(input);
    };
    const stored = onPostgres(
      file,
      (postgres, address) =>
        postgres.loadPostgresSession(address.url, address.session, {
          recover: options.recover,
          migrate,
        }),
    );
    if (stored !== undefined) return stored;
    const size = showProgress(io, file);
    let done = 0;
    let shown = -1;
    const bytes = size === undefined
      ? fileBytes(file, CHUNK)
      : fileBytes(file, CHUNK).pipe(
        Stream.tap((chunk) =>
          Effect.sync(() => {
            done += chunk.length;
            const percent = Math.floor((done / size) * 100);
            if (percent === shown) return;
            shown = percent;
            io.stderr(
              `\rreading ${file}: ${percent}% (${mib(done)} of ${
                mib(size)
              } MiB)`,
            );
          })
        ),
        Stream.ensuring(Effect.sync(() => io.stderr("\r\x1b[K"))),
      );
    return readSessionStream(bytes, { recover: options.recover, migrate });
  });
}

/**
 * Loads a log strictly for a command that needs it whole: the log, or the
 * outcome that reports why it could not be loaded (exit 2 for I/O, 1 for a
 * log that is invalid or refused).
 *
 * @param file The file.
 * @param io Where progress goes.
 * @returns `Effect<Result<LoadedLog, Outcome>>`.
 */
export function loadOrFail(
  file: string,
  io: CliIo,
): Effect.Effect<Result.Result<LoadedLog, Outcome>> {
  return Effect.map(
    Effect.result(loadLog(file, io, { recover: false })),
    (result) =>
      Result.mapError(
        result,
        (error) => classifiedFailure(storageTags, file, error),
      ),
  );
}

/** The one positional of a command that reads a session log. */
export const LOG_POSITIONAL = {
  name: "FILE",
  summary: "the session log (JSONL)",
} as const;

/**
 * A command that takes one session log, loads it whole with
 * {@link loadOrFail} and reports on it: the load's failure outcome, or what
 * `report` makes of the log.
 *
 * @param spec The command's name, summary and description.
 * @param report The outcome for the loaded log and the file it came from.
 * @returns The {@link Command}.
 */
export function logCommand(
  spec: Pick<CommandSpec, "name" | "summary" | "description">,
  report: (log: LoadedLog, file: string) => Outcome,
): Command {
  return {
    spec: { ...spec, positionals: [LOG_POSITIONAL], options: [] },
    run: (args, io) => {
      const file = args.positionals[0] ?? "";
      return Effect.map(
        loadOrFail(file, io),
        (result) =>
          result._tag === "Failure"
            ? result.failure
            : report(result.success, file),
      );
    },
  };
}
