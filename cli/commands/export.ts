/**
 * `export FILE --to TOOL --out OUT`: writes a session as the file another
 * agent tool resumes. The work is `@palimpsest/session/import`'s
 * `exportFile`; this command only parses, loads the log as every reading
 * command does, and renders.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { exportFile, isTargetTool } from "@palimpsest/session/import";
import {
  type Command,
  okOutcome,
  usageWith,
  writeOutcome,
} from "../outcome.ts";
import { outOption, stringOption, toList, toTools, toValues } from "../args.ts";
import { loadOrFail, LOG_POSITIONAL } from "../load.ts";

const usage = usageWith(
  `export FILE --to ${toValues} --out OUT [--cwd DIR] [--json]`,
);

/** The `export` command. */
export const exportCommand: Command = {
  spec: {
    name: "export",
    summary: `write a session as a ${toTools} session file`,
    description:
      "Reads and folds FILE and writes what the model sees as the session file of\n" +
      "the tool named by --to, which that tool resumes: its format, its ids, its own\n" +
      "record of the last compaction. OUT is the new file (exit 2 if it exists), or\n" +
      "an existing folder taken as the tool's home: the file goes where the tool\n" +
      "looks for it (OUT/.claude/projects/...). Prints the file, the id to resume\n" +
      "and what the tool's file could not hold.\n" +
      `--to TOOL is one of:\n${toList}`,
    positionals: [LOG_POSITIONAL],
    options: [
      stringOption(
        "to",
        "TOOL",
        `the tool to resume the session in: ${toValues.replaceAll("|", ", ")}`,
      ),
      outOption("OUT", "the new file, or the tool's home folder"),
      stringOption(
        "cwd",
        "DIR",
        "the working folder to resume in (default: the session's own)",
      ),
    ],
  },
  run: (args, io) =>
    Effect.gen(function* () {
      const file = args.positionals[0] ?? "";
      const to = args.values.get("to");
      const out = args.values.get("out");
      const cwd = args.values.get("cwd");
      if (to === undefined) return usage('missing "--to TOOL"');
      if (!isTargetTool(to)) {
        return usage(`unknown tool ${JSON.stringify(to)}`);
      }
      if (out === undefined) return usage('missing "--out OUT"');
      const loaded = yield* loadOrFail(file, io);
      if (loaded._tag === "Failure") return loaded.failure;
      const exported = exportFile(loaded.success.session, {
        to,
        out,
        ...(cwd === undefined ? {} : { cwd }),
      });
      return yield* writeOutcome(out, exported, (e) => {
        const notes = e.notCarried.map((n) =>
          `  ${n.messageId === "" ? "session" : n.messageId}: ${n.note}\n`
        ).join("");
        return okOutcome(
          {
            to: e.to,
            file: e.file,
            id: e.id,
            messages: e.messages,
            notCarried: e.notCarried,
          },
          `wrote ${e.file}\n${e.messages} messages as ${e.to} session ${e.id}\n` +
            (notes === "" ? "" : `not carried:\n${notes}`),
        );
      });
    }),
};
