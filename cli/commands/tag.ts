/**
 * `tag FILE|ADDRESS TAG[,TAG]`: adds tags to a session (or removes them,
 * with `--remove`), as one `session/metadata` event appended by a writer.
 *
 * @module
 */
import { sessionMetadata, tagSession, untagSession } from "@palimpsest/session";
import { redactAddress } from "../../src/store/redact.ts";
import { type Command, okOutcome, storeOutcome } from "../outcome.ts";
import { SESSION_POSITIONAL, updateSession } from "../stores.ts";
import { flagOption } from "../args.ts";

/** The `tag` command. */
export const tagCommand: Command = {
  spec: {
    name: "tag",
    summary: "add tags to a session, or remove them",
    description:
      "Adds the tags (comma-separated) to FILE (a session file of a store folder)\n" +
      "or postgres://…?session=ID; with --remove, takes them off. Prints the tags\n" +
      "the session has after.",
    positionals: [
      SESSION_POSITIONAL,
      { name: "TAGS", summary: "tags, comma-separated" },
    ],
    options: [
      flagOption("remove", "remove the tags instead"),
    ],
  },
  run: (args) => {
    const where = args.positionals[0] ?? "";
    const tags = (args.positionals[1] ?? "").split(",").map((t) => t.trim())
      .filter((t) => t.length > 0);
    const change = args.flags.has("remove") ? untagSession : tagSession;
    return storeOutcome(
      where,
      updateSession(where, (s) => change(s, tags)),
      (session) => {
        const now = sessionMetadata(session).tags;
        return okOutcome(
          { tags: now },
          `${redactAddress(where)}: ${
            now.length === 0 ? "no tags" : now.join(", ")
          }\n`,
        );
      },
    );
  },
};
