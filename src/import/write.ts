/**
 * Publishing an imported log as a new file without overwriting anything:
 * written under a temporary name created with `wx`, fsynced, then linked to
 * the target name (a link fails rather than replace an existing file), the
 * temporary name removed and the folder fsynced. So the target either does
 * not exist or holds the whole log. Lines are written in 64 KiB batches.
 *
 * @module
 * @internal
 */
import * as fs from "node:fs";
import * as path from "node:path";
import process from "node:process";
import * as Result from "effect/Result";
import type { SessionEvent, SessionHeader } from "../../mod.ts";
import { encodeEventLine, encodeHeaderLine } from "../jsonl/mod.ts";
import { ImportIoError, ImportTargetExists } from "./errors.ts";

const reasonOf = (error: unknown): string => {
  if (
    typeof error === "object" && error !== null && "code" in error &&
    typeof error.code === "string"
  ) {
    return error.code;
  }
  return error instanceof Error ? error.message : String(error);
};

const io = <A>(
  file: string,
  operation: string,
  f: () => A,
): Result.Result<A, ImportIoError> => {
  try {
    return Result.succeed(f());
  } catch (error) {
    return Result.fail(
      new ImportIoError({ path: file, operation, reason: reasonOf(error) }),
    );
  }
};

const writeText = (fd: number, text: string): void => {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset);
};

/**
 * Writes `header` and `events` as a v3 JSONL file at `target`, refusing an
 * existing target.
 *
 * @param target The new file.
 * @param header The session header.
 * @param events The events, in seq order.
 * @returns Nothing, or why the file was not published.
 */
export const publishLog = (
  target: string,
  header: SessionHeader,
  events: ReadonlyArray<SessionEvent>,
): Result.Result<void, ImportIoError | ImportTargetExists> => {
  if (fs.existsSync(target)) {
    return Result.fail(new ImportTargetExists({ path: target }));
  }
  const temp = `${target}.tmp-${process.pid}-${
    Math.random().toString(36).slice(2)
  }`;
  const created = io(temp, "create", () => fs.openSync(temp, "wx"));
  if (Result.isFailure(created)) return Result.fail(created.failure);
  const fd = created.success;
  const written = io(temp, "write", () => {
    let buffer: string[] = [encodeHeaderLine(header)];
    let size = 0;
    for (const event of events) {
      const line = encodeEventLine(event);
      buffer.push(line);
      size += line.length;
      if (size >= 1 << 16) {
        writeText(fd, buffer.join(""));
        buffer = [];
        size = 0;
      }
    }
    writeText(fd, buffer.join(""));
    fs.fsyncSync(fd);
  });
  fs.closeSync(fd);
  const linked = Result.isFailure(written)
    ? written
    : io(target, "link", () => fs.linkSync(temp, target));
  try {
    fs.unlinkSync(temp);
  } catch {
    // Nothing to clean when the temporary name is already gone.
  }
  if (Result.isFailure(linked)) {
    return linked.failure.reason === "EEXIST"
      ? Result.fail(new ImportTargetExists({ path: target }))
      : Result.fail(linked.failure);
  }
  const folder = path.dirname(target);
  return io(folder, "sync", () => {
    const dir = fs.openSync(folder, "r");
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  });
};
