/**
 * `import --from TOOL FILE --out NEW [--session ID] [--recover]`: writes a v3 log from another agent tool's session file and prints the import
 * report. The work is `@palimpsest/session/import`'s; this command only
 * parses, calls `importFile` and renders.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import {
  formatImportReport,
  importFile,
  isSourceTool,
  sniffSessionFormat,
} from "@palimpsest/session/import";
import {
  type Command,
  okOutcome,
  usageWith,
  writeOutcome,
} from "../outcome.ts";
import {
  flagOption,
  fromList,
  fromNames,
  fromOption,
  fromTools,
  fromValues,
  outOption,
  stringOption,
} from "../args.ts";

const usage = usageWith(
  `import --from ${fromValues} FILE --out NEW [--session ID] [--recover] [--json]`,
);

/** The `import` command. */
export const importCommand: Command = {
  spec: {
    name: "import",
    summary: `write a v3 log from a ${fromTools} session file`,
    description: `Reads FILE, a session file written by ${fromTools}\n` +
      "(--from, listed below), and\n" +
      "writes a v3 log to NEW, never overwriting it (exit 2 if NEW exists). Prints\n" +
      "the import report: source kinds, what was synthesized, skipped, kept opaque or\n" +
      "not carried over, with line numbers. A line that is not JSON is a refusal\n" +
      "naming the line (exit 1); --recover skips and reports it instead. A file\n" +
      "of another tool's format is refused (exit 1), naming the --from that\n" +
      "reads it (for opencode's storage folder: run `opencode export` first).\n" +
      "opencode's database (opencode.db) is read as well as what `opencode export`\n" +
      "prints; --session ID picks one of its sessions when it holds several (needs\n" +
      "Node 22.5 or later, or Deno).\n" +
      `--from TOOL is one of:\n${fromList}`,
    positionals: [{ name: "FILE", summary: "the other tool's session file" }],
    options: [
      fromOption(`the tool that wrote FILE: ${fromNames}`),
      outOption("NEW", "the new v3 file (must not exist)"),
      stringOption(
        "session",
        "ID",
        "the session to read from a file holding several (opencode.db)",
      ),
      flagOption("recover", "skip and report lines that are not JSON"),
    ],
  },
  run: (args) =>
    Effect.gen(function* () {
      const file = args.positionals[0] ?? "";
      const from = args.values.get("from");
      const out = args.values.get("out");
      const session = args.values.get("session");
      if (from === undefined || !isSourceTool(from)) {
        // The file's look names the tool to pass.
        const looksLike = sniffSessionFormat(file);
        const guess = looksLike !== undefined && isSourceTool(looksLike)
          ? ` (FILE looks like a ${looksLike} session: pass --from ${looksLike})`
          : "";
        return usage(
          from === undefined
            ? `missing "--from TOOL"${guess}`
            : `unknown tool ${JSON.stringify(from)}${guess}`,
        );
      }
      if (out === undefined) return usage('missing "--out NEW"');
      const imported = importFile(file, {
        from,
        out,
        recover: args.flags.has("recover"),
        ...(session === undefined ? {} : { session }),
      });
      return yield* writeOutcome(
        file,
        imported,
        ({ report }) =>
          okOutcome({ target: out, report }, formatImportReport(report, out)),
      );
    }),
};
