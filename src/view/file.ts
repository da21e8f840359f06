/**
 * Writing a page to a file through the library's durable-file module: the
 * page is written chunk by chunk under a temporary name in the target's
 * folder (created with `wx`), fsynced, then published: linked to the target
 * name, which fails rather than replace an existing file, or, when asked to
 * replace, renamed over it. The target either keeps what it held or holds
 * the whole page; the temporary name is removed whatever happens,
 * interruption included.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as fs from "node:fs";
import * as Result from "effect/Result";
import { eventsFrom, type Session } from "../session/session.ts";
import type { EventsNotHeld } from "../core/errors.ts";
import { nodeAppendIo, publishNewFile, writeAll } from "../fs/durable_file.ts";
import { ioError } from "../fs/io.ts";
import { type FileIoError, TargetExists } from "../fs/errors.ts";
import { type ViewOptions, writePage } from "./page.ts";

/** Options of {@link writeSessionHtmlFile}. */
export interface WriteFileOptions extends ViewOptions {
  /** Replace an existing file (by default an existing file is refused). */
  readonly force?: boolean;
}

/** What {@link writeSessionHtmlFile} wrote. */
export interface WrittenPage {
  /** The page's path. */
  readonly path: string;
  /** Its size in bytes. */
  readonly bytes: number;
}

/**
 * Writes the page of a session to a file, never leaving a partial page at
 * `target`.
 *
 * @param session The session.
 * @param target The page's path.
 * @param options `force` to replace an existing file, and the page's
 * options.
 * @returns `Effect<WrittenPage, TargetExists | FileIoError |
 * EventsNotHeld>`: `EventsNotHeld`, before anything is written, when the
 * session does not hold its whole log (opened from a checkpoint: open it
 * with `wholeLog: true`, or write the page inside `store.withHistory`).
 *
 * @example Writing a page, then refusing to overwrite it
 * ```ts
 * import { Session } from "@palimpsest/session";
 * import { writeSessionHtmlFile } from "@palimpsest/session/view";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 *
 * const session = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 * const page = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "view-")), "s.html");
 * const written = Effect.runSync(writeSessionHtmlFile(session, page));
 * assert.equal(written.bytes, fs.statSync(page).size);
 * const again = Effect.runSync(Effect.flip(writeSessionHtmlFile(session, page)));
 * assert.equal(again._tag, "TargetExists");
 * ```
 */
export function writeSessionHtmlFile(
  session: Session,
  target: string,
  options: WriteFileOptions = {},
): Effect.Effect<WrittenPage, TargetExists | FileIoError | EventsNotHeld> {
  return Effect.suspend((): Effect.Effect<
    WrittenPage,
    TargetExists | FileIoError | EventsNotHeld
  > => {
    const held = eventsFrom(session, session.surface.baseSeq);
    if (Result.isFailure(held)) return Effect.fail(held.failure);
    const replace = options.force === true;
    if (!replace && fs.existsSync(target)) {
      return Effect.fail(new TargetExists({ path: target }));
    }
    return publishNewFile(
      target,
      (fd, temp) =>
        Effect.try({
          try: (): WrittenPage => {
            let bytes = 0;
            const encoder = new TextEncoder();
            // The session holds its log (checked above): the page is written.
            writePage(session, options, (chunk) => {
              const data = encoder.encode(chunk);
              writeAll(nodeAppendIo, fd, data, bytes);
              bytes += data.length;
            });
            return { path: target, bytes };
          },
          catch: (cause) => ioError("write", temp, cause),
        }),
      { replace },
    );
  });
}
