/**
 * `title FILE|ADDRESS TITLE`: sets a session's title (an empty one clears
 * it), as one `session/metadata` event appended by a writer.
 *
 * @module
 */
import { sessionMetadata, setTitle } from "@palimpsest/session";
import { redactAddress } from "../../src/store/redact.ts";
import { type Command, okOutcome, storeOutcome } from "../outcome.ts";
import { SESSION_POSITIONAL, updateSession } from "../stores.ts";

/** The `title` command. */
export const titleCommand: Command = {
  spec: {
    name: "title",
    summary: "set the title of a session",
    description:
      "Appends a session/metadata event that sets the title of FILE (a session\n" +
      'file of a store folder) or postgres://…?session=ID; "" clears it.',
    positionals: [
      SESSION_POSITIONAL,
      { name: "TITLE", summary: 'the title; "" clears it' },
    ],
    options: [],
  },
  run: (args) => {
    const where = args.positionals[0] ?? "";
    const title = args.positionals[1] ?? "";
    return storeOutcome(
      where,
      updateSession(where, (s) => setTitle(s, title === "" ? null : title)),
      (session) => {
        const now = sessionMetadata(session).title;
        return okOutcome(
          { title: now ?? null },
          now === undefined
            ? `cleared the title of ${redactAddress(where)}\n`
            : `titled ${redactAddress(where)}: ${now}\n`,
        );
      },
    );
  },
};
