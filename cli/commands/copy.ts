/**
 * `copy SRC DST`: moves a session between stores. SRC and DST are each a
 * JSONL file or a PostgreSQL address `postgres://…?session=ID`. The source
 * is read as every reading command reads it (an older file is migrated in
 * memory); the destination is created whole, never replacing a session.
 *
 * A JSONL destination is a folder (the file is named after the session id)
 * or a file whose name is a session file name (`ID.jsonl`, the id encoded
 * as the store encodes it); the session takes the destination's id. The
 * events keep their bytes: each is written as its canonical line, which is
 * the line a store wrote it as. No checkpoint is copied: the destination
 * store's writer writes the copy's own as it closes, under the store's
 * checkpoint policy (a log longer than `holdLogUpTo` gets one).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { redactAddress } from "../../src/store/redact.ts";
import * as Result from "effect/Result";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  type CreateError,
  layerJsonlStore,
  type Session,
  SessionStore,
} from "@palimpsest/session";
import { decodeSessionId } from "@palimpsest/session/jsonl";
import type { InvalidAddress } from "@palimpsest/session/postgres";
import { type Command, okOutcome, storeOutcome } from "../outcome.ts";
import { loadOrFail, onPostgres } from "../load.ts";

/** A JSONL destination that is neither a folder nor a session file name. */
interface CopyTargetName {
  readonly _tag: "CopyTargetName";
  readonly message: string;
}

/** Why the destination refused the session: all about where, exit 2. */
type StoreError = CreateError | InvalidAddress | CopyTargetName;

/** The session under another id (its header names it). */
const renamed = (session: Session, id: string): Session =>
  session.header.id === id
    ? session
    : { ...session, header: { ...session.header, id } };

/** Where a JSONL destination puts the session: the folder and the id. */
const jsonlTarget = (
  target: string,
  id: string,
): Result.Result<{ root: string; id: string }, string> => {
  if (fs.existsSync(target) && fs.statSync(target).isDirectory()) {
    return Result.succeed({ root: target, id });
  }
  const base = path.basename(target);
  const named = base.endsWith(".jsonl")
    ? decodeSessionId(base.slice(0, -".jsonl".length))
    : undefined;
  return named === undefined
    ? Result.fail(
      `Expected ${
        JSON.stringify(target)
      } to be a folder or a session file name (ID.jsonl, the id encoded as the store names files)`,
    )
    : Result.succeed({ root: path.dirname(target), id: named });
};

/**
 * Creates `session` at `target` (a JSONL folder or session file name, or a
 * PostgreSQL address), never replacing one; gives the id it took there.
 */
export const storeSession = (
  target: string,
  session: Session,
): Effect.Effect<string, StoreError> => {
  const stored = onPostgres(
    target,
    (postgres, address) =>
      Effect.as(
        postgres.savePostgresSession(
          address.url,
          renamed(session, address.session),
        ),
        address.session,
      ),
  );
  if (stored !== undefined) return stored;
  const located = jsonlTarget(target, session.header.id);
  if (Result.isFailure(located)) {
    return Effect.fail({ _tag: "CopyTargetName", message: located.failure });
  }
  const { root, id } = located.success;
  const copy = renamed(session, id);
  return Effect.as(
    // `create` from a whole session publishes its header and events at
    // once; the handle is released with the scope.
    Effect.scoped(Effect.gen(function* () {
      const s = yield* SessionStore;
      yield* s.create(copy);
    })).pipe(Effect.provide(layerJsonlStore({ root }))),
    id,
  );
};

/** The `copy` command. */
export const copyCommand: Command = {
  spec: {
    name: "copy",
    summary: "copy a session between a JSONL file and PostgreSQL",
    description:
      "Reads SRC and creates the same session at DST; each of them is a JSONL file\n" +
      "or postgres://user@host:port/db?session=ID. The events keep their bytes.\n" +
      "DST is never replaced: an existing session there exits 2. A JSONL DST is a\n" +
      "folder or a session file name (ID.jsonl).",
    positionals: [
      { name: "SRC", summary: "the session to read (file or postgres://)" },
      {
        name: "DST",
        summary: "where to create it (file, folder or postgres://)",
      },
    ],
    options: [],
  },
  run: (args, io) =>
    Effect.gen(function* () {
      const source = args.positionals[0] ?? "";
      const target = args.positionals[1] ?? "";
      const loaded = yield* loadOrFail(source, io);
      if (loaded._tag === "Failure") return loaded.failure;
      const log = loaded.success;
      const events = log.events.length;
      return yield* storeOutcome(
        target,
        storeSession(target, log.session),
        (id) =>
          okOutcome(
            {
              source: redactAddress(source),
              target: redactAddress(target),
              id,
              version: log.version,
              events,
            },
            `copied ${redactAddress(source)} to ${
              redactAddress(target)
            }: ${events} events\n`,
          ),
      );
    }),
};
