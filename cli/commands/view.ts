/**
 * `view FILE --out PAGE.html [--from TOOL] [--force]`: writes the session
 * as one self-contained HTML page. The log is read as every command reads
 * it (an older format is migrated in memory); with `--from` FILE is another
 * tool's session file, imported in memory. The page is
 * `@palimpsest/session/view`'s; this command only loads, calls
 * `writeSessionHtmlFile` and reports. An existing PAGE is refused (exit 2)
 * unless `--force` replaces it.
 *
 * The page module (which brings the model-integration estimate) is loaded
 * when the command runs, so the other commands do not pay for it.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import type { Session } from "@palimpsest/session";
import { importSession, isSourceTool } from "@palimpsest/session/import";
import {
  type Command,
  ExitCode,
  failureOutcome,
  okOutcome,
  usageWith,
} from "../outcome.ts";
import { loadOrFail } from "../load.ts";
import {
  flagOption,
  fromNames,
  fromOption,
  fromTools,
  outOption,
} from "../args.ts";

const usage = usageWith(
  "view FILE --out PAGE.html [--from TOOL] [--force] [--json]",
);

interface Loaded {
  readonly session: Session;
  readonly version: number | undefined;
  readonly tornTail:
    | { readonly offset: number; readonly bytes: number }
    | undefined;
}

/** The `view` command. */
export const viewCommand: Command = {
  spec: {
    name: "view",
    summary: "write the session as one self-contained HTML page",
    description:
      "Reads FILE (a log of any format version, migrated in memory, or a session at\n" +
      `postgres://...?session=ID; with --from, a ${fromTools}\n` +
      "session file imported in memory) and writes PAGE.html: the\n" +
      "surface as the model sees it, each replacement with what it shadowed one\n" +
      "click away, lineage, the surface's size over the log, crash repairs and\n" +
      "interrupted turns, the header and the stats. The page loads nothing.\n" +
      "An existing PAGE.html is refused (exit 2) unless --force replaces it.",
    positionals: [{
      name: "FILE",
      summary: "the session log (JSONL, or a postgres:// address)",
    }],
    options: [
      outOption("PAGE", "the page to write (must not exist unless --force)"),
      fromOption(`FILE is a ${fromNames} session file`),
      flagOption("force", "replace PAGE if it exists"),
    ],
  },
  run: (args, io) =>
    Effect.gen(function* () {
      const file = args.positionals[0] ?? "";
      const out = args.values.get("out");
      const from = args.values.get("from");
      if (out === undefined) return usage('missing "--out PAGE"');
      if (from !== undefined && !isSourceTool(from)) {
        return usage(`unknown tool ${JSON.stringify(from)}`);
      }
      let loaded: Loaded;
      if (from === undefined) {
        const result = yield* loadOrFail(file, io);
        if (Result.isFailure(result)) return result.failure;
        const log = result.success;
        loaded = {
          session: log.session,
          version: log.version,
          tornTail: log.report.tornTail,
        };
      } else {
        const result = yield* Effect.result(importSession(file, { from }));
        if (Result.isFailure(result)) {
          const error = result.failure;
          return failureOutcome(
            error._tag === "FileIoError" ? ExitCode.usage : ExitCode.invalid,
            file,
            error,
          );
        }
        loaded = {
          session: result.success.session,
          version: undefined,
          tornTail: undefined,
        };
      }
      const { writeSessionHtmlFile } = yield* Effect.promise(() =>
        import("@palimpsest/session/view")
      );
      const written = yield* Effect.result(
        writeSessionHtmlFile(loaded.session, out, {
          force: args.flags.has("force"),
          ...(loaded.version === undefined ? {} : { version: loaded.version }),
          ...(loaded.tornTail === undefined
            ? {}
            : { tornTail: loaded.tornTail }),
        }),
      );
      if (Result.isFailure(written)) {
        const error = written.failure;
        return failureOutcome(
          ExitCode.usage,
          out,
          error,
          {},
          error._tag === "TargetExists"
            ? "the page already exists; choose another --out, or pass --force to replace it"
            : undefined,
        );
      }
      const surface = loaded.session.surface;
      return okOutcome(
        {
          target: written.success.path,
          bytes: written.success.bytes,
          events: surface.nextSeq - surface.baseSeq,
          surface: surface.length,
          replacements: surface.replacements,
        },
        `wrote ${written.success.path} (${written.success.bytes} bytes): ${
          surface.nextSeq - surface.baseSeq
        } events, surface ${surface.length} nodes, ${surface.replacements} replacements\n`,
      );
    }),
};
