/**
 * `rm FILE|ADDRESS`: removes a session from its store, with its checkpoint
 * and catalogue entry, as `store.remove` does: refused while a writer holds
 * it.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { redactAddress } from "../../src/store/redact.ts";
import {
  type Command,
  ExitCode,
  failureOutcome,
  okOutcome,
} from "../outcome.ts";
import { onSession } from "../stores.ts";

/** The `rm` command. */
export const rmCommand: Command = {
  spec: {
    name: "rm",
    summary: "remove a session from its store",
    description:
      "Removes the session FILE (a session file of a store folder, ID.jsonl) or\n" +
      "postgres://user@host:port/db?session=ID, with its checkpoint and catalogue\n" +
      "entry, all together. A session open for writing is not removed (exit 2).",
    positionals: [
      { name: "FILE", summary: "the session file, or postgres://…?session=ID" },
    ],
    options: [],
  },
  run: (args) =>
    Effect.gen(function* () {
      const where = args.positionals[0] ?? "";
      const removed = yield* Effect.result(
        onSession(where, (store, id) => Effect.as(store.remove(id), id)),
      );
      if (removed._tag === "Failure") {
        return failureOutcome(ExitCode.usage, where, removed.failure);
      }
      return okOutcome(
        { removed: removed.success },
        `removed ${redactAddress(where)}\n`,
      );
    }),
};
