/**
 * Writing the migrated log to a new current-version file beside the old one.
 *
 * The old file is only ever opened for reading. The new file is published by the library's
 * durable-file module: written under a temporary name created with `wx` (it never replaces
 * anything), fsynced, and then linked to the target name, which fails rather than overwrite an
 * existing file; the temporary name is then removed and the folder fsynced. The source
 * descriptor and the temporary file are released on success, failure and interruption alike,
 * and a long run yields between chunks so a timeout can stop it. So the target either does not exist or holds the whole
 * migrated log, and an existing target is never touched. Reading streams the file in 64 KiB
 * chunks: memory stays flat with the log's length. A final line without `\n` is a torn write: it
 * is not migrated and is reported.
 *
 * This uses `node:fs` synchronously, which works on Deno and Node alike.
 *
 * @module
 */
import * as fs from "node:fs";
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { type FileIoError, TargetExists } from "../src/fs/errors.ts";
import {
  attempt,
  closeQuietly,
  publishNewFile,
} from "../src/fs/durable_file.ts";
import {
  CorruptLegacyLine,
  InvalidLegacyHeader,
  type MigrationError,
} from "./errors.ts";
import {
  makeMigrator,
  type MigrationOptions,
  type Migrator,
  toJsonLine,
} from "./migrate.ts";

/** Options of {@link migrateFile}. */
export interface MigrateFileOptions extends MigrationOptions {
  /** The new file's path (default: the source with `.jsonl` replaced by `.v3.jsonl`). */
  readonly target?: string;
  /** Called with the number of lines read so far, every 65 536 lines (for progress output). */
  readonly progress?: (lines: number) => void;
}

/** What {@link migrateFile} wrote. */
export interface MigrateFileSummary {
  /** The old file (unchanged). */
  readonly source: string;
  /** The new file. */
  readonly target: string;
  /** The version the old file declared. */
  readonly fromVersion: number;
  /** Event lines read (the header not counted, a torn tail not counted). */
  readonly eventsRead: number;
  /** Event lines written. */
  readonly eventsWritten: number;
  /** A final line without `\n`, left out: its 1-based line and byte length. */
  readonly tornTail?: { readonly line: number; readonly bytes: number };
}

/**
 * The default target of a source path: `x.jsonl` → `x.v3.jsonl`, anything else gets `.v3.jsonl`
 * appended.
 *
 * @param source The old file's path.
 * @returns The new file's path.
 *
 * @example Naming the new file
 * ```ts
 * import { defaultTarget } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * assert.equal(defaultTarget("/logs/s.jsonl"), "/logs/s.v3.jsonl");
 * ```
 */
export function defaultTarget(source: string): string {
  return source.endsWith(".jsonl")
    ? `${source.slice(0, -6)}.v3.jsonl`
    : `${source}.v3.jsonl`;
}

const excerptOf = (
  text: string,
): string => (text.length > 60 ? `${text.slice(0, 57)}...` : text);

interface Writer {
  readonly fd: number;
  readonly file: string;
  buffer: Array<string>;
  size: number;
}

const flush = (w: Writer): Result.Result<void, FileIoError> => {
  if (w.buffer.length === 0) return Result.succeed(undefined);
  const text = w.buffer.join("");
  w.buffer = [];
  w.size = 0;
  return attempt("write", w.file, () => {
    const bytes = new TextEncoder().encode(text);
    let offset = 0;
    while (offset < bytes.length) offset += fs.writeSync(w.fd, bytes, offset);
  });
};

const write = (
  w: Writer,
  line: string,
): Result.Result<void, FileIoError> => {
  w.buffer.push(line, "\n");
  w.size += line.length + 1;
  return w.size >= 1 << 16 ? flush(w) : Result.succeed(undefined);
};

const run = (
  source: string,
  target: string,
  input: number,
  output: number,
  temp: string,
  options: MigrateFileOptions,
): Effect.Effect<MigrateFileSummary, MigrationError> => {
  const writer: Writer = { fd: output, file: temp, buffer: [], size: 0 };
  let migrator: Migrator | undefined;
  let line = 0;
  let eventsRead = 0;
  let eventsWritten = 0;
  let rest = "";
  let restBytes = 0;
  const decoder = new TextDecoder();
  const chunk = new Uint8Array(1 << 16);

  const progress = options.progress;
  const take = (text: string): Result.Result<void, MigrationError> => {
    line += 1;
    if (progress !== undefined && (line & 0xffff) === 0) progress(line);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return Result.fail(
        new CorruptLegacyLine({ line, excerpt: excerptOf(text) }),
      );
    }
    if (migrator === undefined) {
      const made = makeMigrator(value, options);
      if (Result.isFailure(made)) return Result.fail(made.failure);
      migrator = made.success;
      return write(writer, toJsonLine(migrator.header));
    }
    eventsRead += 1;
    const events = migrator.push(value, line);
    if (Result.isFailure(events)) return Result.fail(events.failure);
    for (const e of events.success) {
      const written = write(writer, toJsonLine(e));
      if (Result.isFailure(written)) return Result.fail(written.failure);
      eventsWritten += 1;
    }
    return Result.succeed(undefined);
  };

  /** Reads and migrates one chunk; `true` at the end of the source. */
  const step = (): Result.Result<boolean, MigrationError> => {
    const read = attempt(
      "read",
      source,
      () => fs.readSync(input, chunk, 0, chunk.length, null),
    );
    if (Result.isFailure(read)) return Result.fail(read.failure);
    if (read.success === 0) return Result.succeed(true);
    const bytes = chunk.subarray(0, read.success);
    let start = 0;
    for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) {
      const text = rest + decoder.decode(bytes.subarray(start, i));
      rest = "";
      restBytes = 0;
      start = i + 1;
      const taken = take(text);
      if (Result.isFailure(taken)) return Result.fail(taken.failure);
    }
    if (start < bytes.length) {
      rest += decoder.decode(bytes.subarray(start), { stream: true });
      restBytes += bytes.length - start;
    }
    return Result.succeed(false);
  };

  const end = (): Result.Result<MigrateFileSummary, MigrationError> => {
    const torn = restBytes > 0
      ? { line: line + 1, bytes: restBytes }
      : undefined;
    if (migrator === undefined) {
      return Result.fail(
        new InvalidLegacyHeader({ line: 1, reason: "header" }),
      );
    }
    const ended = migrator.end();
    if (Result.isFailure(ended)) return Result.fail(ended.failure);
    for (const e of ended.success) {
      const written = write(writer, toJsonLine(e));
      if (Result.isFailure(written)) return Result.fail(written.failure);
      eventsWritten += 1;
    }
    const flushed = flush(writer);
    if (Result.isFailure(flushed)) return Result.fail(flushed.failure);
    return Result.succeed({
      source,
      target,
      fromVersion: migrator.header.fromVersion,
      eventsRead,
      eventsWritten,
      ...(torn === undefined ? {} : { tornTail: torn }),
    });
  };

  // A yield between chunks lets a timeout or an interrupt stop a long run.
  const loop = (): Effect.Effect<MigrateFileSummary, MigrationError> =>
    Effect.suspend(() => {
      const stepped = step();
      if (Result.isFailure(stepped)) return Effect.fail(stepped.failure);
      if (stepped.success) return Effect.fromResult(end());
      return Effect.flatMap(Effect.yieldNow, loop);
    });
  return loop();
};

/**
 * Migrate a JSONL log file of any released version to a new current-version file beside it.
 * Never modifies the source and never overwrites anything: an existing target fails with
 * `TargetExists`. On any refusal the target is not created.
 *
 * @param source The old file.
 * @param options `target` (default {@link defaultTarget}) and the catalog.
 * @returns What was written, or the first refusal with its line.
 *
 * @example Migrating a v2 file
 * ```ts
 * import { migrateFile } from "@palimpsest/session/migrations";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * const source = `${dir}/s.jsonl`;
 * Deno.writeTextFileSync(source, [
 *   '{"type":"session","version":2,"id":"s","createdAt":0,"isSeeded":false}',
 *   '{"type":"turn/start","seq":0,"time":1,"data":{"turn":0}}',
 *   "",
 * ].join("\n"));
 * const summary = Effect.runSync(migrateFile(source));
 * assert.equal(summary.target, `${dir}/s.v3.jsonl`);
 * assert.equal(Deno.readTextFileSync(summary.target).split("\n")[0], '{"type":"session","version":3,"id":"s","createdAt":0,"isSeeded":false}');
 * const again = Effect.runSync(Effect.flip(migrateFile(source)));
 * assert.equal(again._tag, "TargetExists");
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function migrateFile(
  source: string,
  options: MigrateFileOptions = {},
): Effect.Effect<MigrateFileSummary, MigrationError> {
  return Effect.suspend(() => {
    const target = options.target ?? defaultTarget(source);
    if (fs.existsSync(target)) {
      return Effect.fail(new TargetExists({ path: target }));
    }
    // The source descriptor and the temporary file are released on
    // success, failure and interruption alike.
    return Effect.acquireUseRelease(
      Effect.fromResult(
        attempt("open", source, () => fs.openSync(source, "r")),
      ),
      (input) =>
        publishNewFile(
          target,
          (output, temp) => run(source, target, input, output, temp, options),
        ),
      (input) => Effect.sync(() => closeQuietly(input)),
    );
  });
}
