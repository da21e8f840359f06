/**
 * Reading a source file as JSON records, one per line, without ever holding
 * the file as one string: 64 KiB reads, a line is decoded only when its `\n`
 * arrives, and a line longer than the bound is dropped as it streams past
 * (it never grows the buffer past the bound).
 *
 * A line that is not JSON, or too long, is a refusal naming the line, or
 * under `recover` a skipped line the caller reports. Blank lines are
 * ignored. A final line without `\n` that does not parse is a torn write: it
 * is reported, not refused.
 *
 * Uses `node:fs` synchronously, which works on Deno and Node alike.
 *
 * @module
 * @internal
 */
import * as fs from "node:fs";
import * as Result from "effect/Result";
import { ioError } from "../fs/io.ts";
import type { FileIoError } from "../fs/errors.ts";
import { ImportLineNotJson, ImportLineTooLong } from "./errors.ts";

/** A line skipped under `recover`. */
export interface SkippedLine {
  /** The 1-based line. */
  readonly line: number;
  /** Why: not JSON, too long, or a torn final line. */
  readonly reason: "not-json" | "too-long" | "torn";
  /** The start of the line. */
  readonly excerpt: string;
}

/** How {@link forEachRecord} reads. */
export interface RecordReadOptions {
  /** Skip bad lines (and report them) instead of refusing. */
  readonly recover: boolean;
  /** The longest line accepted, in bytes. */
  readonly maxLineBytes: number;
}

/** What a pass over the file saw besides the records. */
export interface RecordReadSummary {
  /** Lines read, blank ones included. */
  readonly lines: number;
  /** Lines skipped. */
  readonly skipped: ReadonlyArray<SkippedLine>;
}

const excerptOf = (text: string): string =>
  text.length > 60 ? `${text.slice(0, 57)}...` : text;

type LineError = ImportLineNotJson | ImportLineTooLong;

/**
 * Calls `f` with every JSON record of the file and its 1-based line.
 *
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param f Called per record; a failure stops the pass.
 * @returns The pass summary, or the first refusal.
 */
export const forEachRecord = <E>(
  file: string,
  options: RecordReadOptions,
  f: (value: unknown, line: number) => Result.Result<void, E>,
): Result.Result<RecordReadSummary, E | LineError | FileIoError> => {
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch (error) {
    return Result.fail(
      ioError("open", file, error),
    );
  }
  try {
    return readAll(fd, file, options, f);
  } finally {
    fs.closeSync(fd);
  }
};

const readAll = <E>(
  fd: number,
  file: string,
  options: RecordReadOptions,
  f: (value: unknown, line: number) => Result.Result<void, E>,
): Result.Result<RecordReadSummary, E | LineError | FileIoError> => {
  const skipped: SkippedLine[] = [];
  const decoder = new TextDecoder();
  const chunk = new Uint8Array(1 << 16);
  let parts: Uint8Array[] = [];
  let size = 0;
  let tooLong = false;
  let line = 0;

  const take = (
    last: boolean,
  ): Result.Result<void, E | LineError> => {
    line += 1;
    if (tooLong) {
      const bytes = size;
      parts = [];
      size = 0;
      tooLong = false;
      if (!options.recover) {
        return Result.fail(
          new ImportLineTooLong({ line, bytes, limit: options.maxLineBytes }),
        );
      }
      skipped.push({ line, reason: "too-long", excerpt: "" });
      return Result.succeed(undefined);
    }
    let text: string;
    if (parts.length === 1 && parts[0] !== undefined) {
      text = decoder.decode(parts[0]);
    } else {
      const joined = new Uint8Array(size);
      let offset = 0;
      for (const part of parts) {
        joined.set(part, offset);
        offset += part.length;
      }
      text = decoder.decode(joined);
    }
    parts = [];
    size = 0;
    if (text.trim() === "") return Result.succeed(undefined);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      if (last) {
        skipped.push({ line, reason: "torn", excerpt: excerptOf(text) });
        return Result.succeed(undefined);
      }
      if (!options.recover) {
        return Result.fail(
          new ImportLineNotJson({ line, excerpt: excerptOf(text) }),
        );
      }
      skipped.push({ line, reason: "not-json", excerpt: excerptOf(text) });
      return Result.succeed(undefined);
    }
    return f(value, line);
  };

  const push = (bytes: Uint8Array): void => {
    if (tooLong) {
      size += bytes.length;
      return;
    }
    if (size + bytes.length > options.maxLineBytes) {
      tooLong = true;
      parts = [];
      size += bytes.length;
      return;
    }
    // The read buffer is reused, so a kept part must be a copy.
    parts.push(bytes.slice());
    size += bytes.length;
  };

  for (;;) {
    let read: number;
    try {
      read = fs.readSync(fd, chunk, 0, chunk.length, null);
    } catch (error) {
      return Result.fail(
        ioError("read", file, error),
      );
    }
    if (read === 0) break;
    const bytes = chunk.subarray(0, read);
    let start = 0;
    for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) {
      if (size === 0 && !tooLong && i - start <= options.maxLineBytes) {
        // A line within this read needs no copy.
        parts.push(bytes.subarray(start, i));
        size = i - start;
      } else {
        push(bytes.subarray(start, i));
      }
      start = i + 1;
      const taken = take(false);
      if (Result.isFailure(taken)) return Result.fail(taken.failure);
    }
    if (start < bytes.length) push(bytes.subarray(start));
  }
  if (size > 0 || tooLong) {
    const taken = take(true);
    if (Result.isFailure(taken)) return Result.fail(taken.failure);
  }
  return Result.succeed({ lines: line, skipped });
};
