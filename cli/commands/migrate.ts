/**
 * `migrate FILE --out NEW`: writes the current-version copy of a log. The
 * source is only read; the target is created without replacing anything
 * (an existing `NEW` is refused with exit code 2 and left untouched).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { migrateFile } from "@palimpsest/session/migrations";
import { FORMAT_VERSION } from "@palimpsest/session/jsonl";
import {
  type Command,
  fileToNewCommand,
  okOutcome,
  usageOutcome,
} from "../outcome.ts";
import { showProgress } from "../load.ts";
import { outOption } from "../args.ts";

/** The `migrate` command. */
export const migrateCommand: Command = fileToNewCommand(
  {
    name: "migrate",
    summary: "write the current-version copy of a log to NEW",
    description:
      "Reads FILE (any released format version), migrates it event by event and\n" +
      "writes a v3 log to NEW. FILE is never modified and NEW is never overwritten:\n" +
      "if NEW exists the command refuses (exit 2). A refusal of the log itself\n" +
      "(an event the migration cannot prove) exits 1 and names the line; NEW is\n" +
      "then not created.",
    positionals: [{ name: "FILE", summary: "the session log to migrate" }],
    options: [outOption("NEW", "the new file (must not exist)")],
  },
  usageOutcome(
    'Missing "--out NEW"; name the file to write',
    "migrate FILE --out NEW [--json]",
    'missing "--out NEW"',
  ),
  (file, out, io) => {
    const progress = showProgress(io, file);
    return migrateFile(file, {
      target: out,
      ...(progress === undefined ? {} : {
        progress: (lines: number) =>
          io.stderr(`\rmigrating ${file}: ${lines} lines`),
      }),
    }).pipe(
      Effect.ensuring(Effect.sync(() => {
        if (progress !== undefined) io.stderr("\r\x1b[K");
      })),
    );
  },
  (summary) => {
    const torn = summary.tornTail === undefined
      ? ""
      : `\nwarning: the torn final line ${summary.tornTail.line} (${summary.tornTail.bytes} bytes) was not migrated`;
    return okOutcome(
      {
        source: summary.source,
        target: summary.target,
        fromVersion: summary.fromVersion,
        toVersion: FORMAT_VERSION,
        eventsRead: summary.eventsRead,
        eventsWritten: summary.eventsWritten,
        ...(summary.tornTail === undefined
          ? {}
          : { tornTail: summary.tornTail }),
      },
      `migrated ${summary.source} (v${summary.fromVersion}) to ${summary.target} (v${FORMAT_VERSION}): ` +
        `${summary.eventsRead} events read, ${summary.eventsWritten} written${torn}\n`,
    );
  },
);
