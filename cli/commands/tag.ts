/**
 * `tag FILE|ADDRESS TAG[,TAG]`: adds tags to a session (or removes them,
 * with `--remove`), as one `session/metadata` event appended by a writer.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { sessionMetadata, tagSession, untagSession } from "@palimpsest/session";
import { redactAddress } from "../../src/store/redact.ts";
import {
  type Command,
  ExitCode,
  failureOutcome,
  okOutcome,
} from "../outcome.ts";
import { onSession } from "../stores.ts";

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
      { name: "FILE", summary: "the session file, or postgres://…?session=ID" },
      { name: "TAGS", summary: "tags, comma-separated" },
    ],
    options: [
      { name: "remove", kind: "boolean", summary: "remove the tags instead" },
    ],
  },
  run: (args) =>
    Effect.gen(function* () {
      const where = args.positionals[0] ?? "";
      const tags = (args.positionals[1] ?? "").split(",").map((t) => t.trim())
        .filter((t) => t.length > 0);
      const change = args.flags.has("remove") ? untagSession : tagSession;
      const done = yield* Effect.result(
        onSession(where, (store, id) =>
          store.withSession(
            id,
            (writer) => store.update(writer, (s) => change(s, tags)),
          )),
      );
      if (done._tag === "Failure") {
        return failureOutcome(ExitCode.usage, where, done.failure);
      }
      const now = sessionMetadata(done.success.session).tags;
      return okOutcome(
        { tags: now },
        `${redactAddress(where)}: ${
          now.length === 0 ? "no tags" : now.join(", ")
        }\n`,
      );
    }),
};
