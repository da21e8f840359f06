/**
 * Publishing an imported log or an exported file as a new file without overwriting anything,
 * through the library's durable-file module: written under a temporary name
 * created with `wx`, fsynced, then linked to the target name (a link fails
 * rather than replace an existing file), the temporary name removed and the
 * folder fsynced. So the target either does not exist or holds the whole
 * file. Lines are written in 64 KiB batches.
 *
 * @module
 * @internal
 */
import * as fs from "node:fs";
import * as Effect from "effect/Effect";
import type { SessionEvent } from "../core/event.ts";
import type { SessionHeader } from "../session/session.ts";
import { encodeEventLine, encodeHeaderLine } from "../log/codec.ts";
import { nodeAppendIo, publishNewFile, writeAll } from "../fs/durable_file.ts";
import { ioError } from "../fs/io.ts";
import { type FileIoError, TargetExists } from "../fs/errors.ts";

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
): Effect.Effect<void, FileIoError | TargetExists> =>
  publishLines(target, function* () {
    yield encodeHeaderLine(header);
    for (const event of events) yield encodeEventLine(event);
  });

/**
 * Writes lines (each ending in a newline) as a new file at `target`,
 * refusing an existing target: the file either does not exist or holds
 * every line.
 *
 * @param target The new file.
 * @param lines The lines, made as they are written.
 * @returns Nothing, or why the file was not published.
 */
export const publishLines = (
  target: string,
  lines: () => Iterable<string>,
): Effect.Effect<void, FileIoError | TargetExists> =>
  Effect.suspend(() => {
    if (fs.existsSync(target)) {
      return Effect.fail(new TargetExists({ path: target }));
    }
    return publishNewFile(target, (fd, temp) =>
      Effect.try({
        try: () => {
          const encoder = new TextEncoder();
          let position = 0;
          const flush = (text: string): void => {
            const bytes = encoder.encode(text);
            writeAll(nodeAppendIo, fd, bytes, position);
            position += bytes.length;
          };
          let buffer: string[] = [];
          let size = 0;
          for (const line of lines()) {
            buffer.push(line);
            size += line.length;
            if (size >= 1 << 16) {
              flush(buffer.join(""));
              buffer = [];
              size = 0;
            }
          }
          flush(buffer.join(""));
        },
        catch: (cause) => ioError("write", temp, cause),
      }));
  });
