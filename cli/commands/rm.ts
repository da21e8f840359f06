/**
 * `rm FILE|ADDRESS`: removes a session from its store, with its checkpoint
 * and catalogue entry, as `store.remove` does: refused while a writer holds
 * it.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { redactAddress } from "../../src/store/redact.ts";
import { type Command, okOutcome, storeOutcome } from "../outcome.ts";
import { onSession, SESSION_POSITIONAL } from "../stores.ts";

/** The `rm` command. */
export const rmCommand: Command = {
  spec: {
    name: "rm",
    summary: "remove a session from its store",
    description:
      "Removes the session FILE (a session file of a store folder, ID.jsonl) or\n" +
      "postgres://user@host:port/db?session=ID, with its checkpoint and catalogue\n" +
      "entry, all together. A session open for writing is not removed (exit 2).",
    positionals: [SESSION_POSITIONAL],
    options: [],
  },
  run: (args) => {
    const where = args.positionals[0] ?? "";
    return storeOutcome(
      where,
      onSession(where, (store, id) => Effect.as(store.remove(id), id)),
      (removed) => okOutcome({ removed }, `removed ${redactAddress(where)}\n`),
    );
  },
};
