/**
 * `title FILE|ADDRESS TITLE`: sets a session's title (an empty one clears
 * it), as one `session/metadata` event appended by a writer.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { sessionMetadata, setTitle } from "@palimpsest/session";
import { redactAddress } from "../../src/store/redact.ts";
import {
  type Command,
  ExitCode,
  failureOutcome,
  okOutcome,
} from "../outcome.ts";
import { onSession } from "../stores.ts";

/** The `title` command. */
export const titleCommand: Command = {
  spec: {
    name: "title",
    summary: "set the title of a session",
    description:
      "Appends a session/metadata event that sets the title of FILE (a session\n" +
      'file of a store folder) or postgres://…?session=ID; "" clears it.',
    positionals: [
      { name: "FILE", summary: "the session file, or postgres://…?session=ID" },
      { name: "TITLE", summary: 'the title; "" clears it' },
    ],
    options: [],
  },
  run: (args) =>
    Effect.gen(function* () {
      const where = args.positionals[0] ?? "";
      const title = args.positionals[1] ?? "";
      const done = yield* Effect.result(
        onSession(where, (store, id) =>
          store.withSession(id, (writer) =>
            store.update(
              writer,
              (s) =>
                setTitle(s, title === "" ? null : title),
            ))),
      );
      if (done._tag === "Failure") {
        return failureOutcome(ExitCode.usage, where, done.failure);
      }
      const now = sessionMetadata(done.success.session).title;
      return okOutcome(
        { title: now ?? null },
        now === undefined
          ? `cleared the title of ${redactAddress(where)}\n`
          : `titled ${redactAddress(where)}: ${now}\n`,
      );
    }),
};
