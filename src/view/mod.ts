/**
 * `@palimpsest/session/view`: a session as one self-contained HTML page.
 *
 * The page loads nothing (no network, no other file, no framework; its
 * Content-Security-Policy allows only its own inline style and script) and
 * reads without JavaScript. It shows:
 *
 * - the header and the stats (events by type, surface length, compactions
 *   and prunes with the characters they saved, crash repairs, interrupted
 *   turns);
 * - the surface's size over the log, in characters, as an inline SVG chart
 *   with a mark at every compaction, prune and system-prompt change (each
 *   mark links to its replacement);
 * - the surface in the order the model sees it: role, texts, tool calls and
 *   results, pruned results with their size before and after;
 * - every replacement in place, with what it shadowed in a closed
 *   `<details>` one click away, recursively (a summary of a summary opens
 *   onto the first summary), and its lineage: the events it stands for and
 *   the log-only events it also cites;
 * - crash repairs (tool results that answer a call a crash left open) and
 *   interrupted turns, marked where they happened.
 *
 * It is computed in one pass over the log (the library's own fold, asked
 * what each replacement took off the surface): linear in the log, so a log
 * of a million events renders. Long texts show their start and fold the
 * rest; folded content is not laid out until opened, and surface entries
 * off screen are not laid out either (`content-visibility`).
 *
 * Every string from the log is HTML-escaped ({@link escapeHtml}); the page
 * embeds no log data in its script, style or any URL, so content from a
 * log cannot run script in the page.
 *
 * {@link writeSessionHtmlFile} writes the page to a file, never leaving a
 * partial page and never replacing an existing file unless asked (`force`).
 * The command line writes it with `palimpsest view FILE --out PAGE.html`
 * (`--force` to replace).
 *
 * @example Writing a page
 * ```ts
 * import { Session } from "@palimpsest/session";
 * import { renderSessionHtml } from "@palimpsest/session/view";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const session = Effect.runSync(Session.append(
 *   Session.make({ id: "demo", createdAt: 0, isSeeded: false }),
 *   {
 *     type: "user/message", surfaceOp: "append",
 *     data: { id: "u0", role: "user", content: [{ type: "text", text: "<b>hi</b>" }], source: { kind: "user" } },
 *   },
 * ));
 * const html = Result.getOrThrow(renderSessionHtml(session));
 * assert.ok(html.startsWith("<!DOCTYPE html>"));
 * assert.ok(html.includes("&lt;b&gt;hi&lt;/b&gt;"));
 * ```
 *
 * @module
 */
import * as Result from "effect/Result";
import type { Session } from "../session/session.ts";
import type { EventsNotHeld } from "../core/errors.ts";
import { type ViewOptions, writePage } from "./page.ts";

export type { ViewOptions } from "./page.ts";
export { FileIoError, TargetExists } from "../fs/errors.ts";
export {
  type WriteFileOptions,
  writeSessionHtmlFile,
  type WrittenPage,
} from "./file.ts";
export { escapeHtml } from "./escape.ts";

/**
 * The page of a session as one string. For a very large log prefer
 * {@link writeSessionHtml}, which never holds the whole page.
 *
 * @param session The session (a loaded log, migrated or imported, or one
 * built in memory).
 * @param options The title, the format version the log was read from, and
 * the torn tail the reader reported.
 * @returns The HTML page; or `EventsNotHeld` when the session does not
 * hold its whole log (opened from a checkpoint: open it with
 * `wholeLog: true`, or render it inside `store.withHistory`).
 *
 * @example A page for a session in memory
 * ```ts
 * import { Session } from "@palimpsest/session";
 * import { renderSessionHtml } from "@palimpsest/session/view";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const html = Result.getOrThrow(renderSessionHtml(Session.make({ id: "empty", createdAt: 0, isSeeded: false })));
 * assert.match(html, /<title>empty · palimpsest<\/title>/);
 * ```
 */
export function renderSessionHtml(
  session: Session,
  options: ViewOptions = {},
): Result.Result<string, EventsNotHeld> {
  const parts: string[] = [];
  return Result.map(
    writePage(session, options, (chunk) => parts.push(chunk)),
    () => parts.join(""),
  );
}

/**
 * Writes the page of a session in chunks of about 64 KiB, in order, as they
 * are produced: write each to a file and the whole page is never held in
 * memory (a log of a million events makes a page of hundreds of
 * megabytes).
 *
 * @param session The session.
 * @param write Receives each chunk; the page is their concatenation.
 * @param options As for {@link renderSessionHtml}.
 * @returns Nothing once the page is written; `EventsNotHeld`, before any
 * chunk, as for {@link renderSessionHtml}.
 *
 * @example Joining the chunks gives the page
 * ```ts
 * import { Session } from "@palimpsest/session";
 * import { renderSessionHtml, writeSessionHtml } from "@palimpsest/session/view";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const session = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 * const chunks: string[] = [];
 * assert.ok(Result.isSuccess(writeSessionHtml(session, (chunk) => chunks.push(chunk))));
 * assert.deepEqual(Result.succeed(chunks.join("")), renderSessionHtml(session));
 * ```
 */
export function writeSessionHtml(
  session: Session,
  write: (chunk: string) => void,
  options: ViewOptions = {},
): Result.Result<void, EventsNotHeld> {
  return writePage(session, options, write);
}
