/**
 * `rewind FILE --to SEQ [--text TEXT] [--drops-turns-from K]`: take the
 * session's surface back to what it was right after event SEQ and go on
 * from a new user message (TEXT; without it, an empty one, which the
 * provider adapters leave out of requests). The events after SEQ stay in
 * the log as a branch
 * (`branches FILE`). Checked before anything is written, like the
 * library's `rewind`: a point inside a turn, a step or a compaction, a
 * restored surface with a call parted from its result, a lost system
 * prompt, or (with `--drops-turns-from`) turns dropped other than those
 * declared, are refused with exit 1 and nothing is written.
 *
 * FILE is a session file named `ID.jsonl` (written through the JSONL store
 * of its folder, under the session's writer lock), or a session in
 * PostgreSQL (`postgres://…?session=ID`).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as nodePath from "node:path";
import * as fs from "node:fs";
import { redactAddress } from "../../src/store/redact.ts";
import { sessionIdOfFileName } from "../../src/jsonl/names.ts";
import {
  Draft,
  makeJsonlStore,
  rewind,
  type RewindOptions,
  Session,
  SessionStore,
} from "@palimpsest/session";
import {
  classifiedFailure,
  type Command,
  naturalOrUsage,
  okOutcome,
  usageOutcome,
} from "../outcome.ts";
import { onPostgres, storageTags } from "../load.ts";
import { count } from "../render.ts";
import { stringOption } from "../args.ts";

const ioTags: ReadonlySet<string> = new Set([
  ...storageTags,
  "SessionLocked",
  "AppendOutcomeUnknown",
  "ReadOnlyHandle",
  "HandleClosed",
  "WriterClaimLost",
]);

/** The `rewind` command. */
export const rewindCommand: Command = {
  spec: {
    name: "rewind",
    summary: "go back to an earlier point, keeping what follows as a branch",
    description:
      "Takes the surface of FILE back to what it was right after event SEQ and\n" +
      "appends a user message (TEXT, or an empty one, which requests leave out)\n" +
      "citing the nodes it takes off. The events after SEQ stay in the log as a\n" +
      'branch ("branches FILE"); back to a branch is a rewind to its tip. Refused\n' +
      "with exit 1, writing nothing, when a turn, a step or a compaction is open\n" +
      "at SEQ, when the restored surface would part a tool call from its result\n" +
      "or lose the system prompt, or when --drops-turns-from K does not hold.\n" +
      "FILE is a session file named ID.jsonl (its folder is the store) or\n" +
      "postgres://…?session=ID.",
    positionals: [{
      name: "FILE",
      summary: "the session (ID.jsonl, or postgres://…?session=ID)",
    }],
    options: [
      stringOption(
        "to",
        "SEQ",
        "the event right after which the surface is taken back",
      ),
      stringOption(
        "text",
        "TEXT",
        "the user message to go on from (default: an empty one)",
      ),
      stringOption(
        "drops-turns-from",
        "K",
        "refuse unless the rewind drops exactly the turns from K on",
      ),
    ],
  },
  run: (args, _io) =>
    Effect.gen(function* () {
      const file = args.positionals[0] ?? "";
      const toText = args.values.get("to");
      if (toText === undefined) {
        return usageOutcome("Expected --to SEQ: the point to go back to");
      }
      const to = naturalOrUsage("--to", toText);
      if (typeof to !== "number") return to;
      const dropsText = args.values.get("drops-turns-from");
      const drops = dropsText === undefined
        ? undefined
        : naturalOrUsage("--drops-turns-from", dropsText);
      if (drops !== undefined && typeof drops !== "number") return drops;
      const text = args.values.get("text");
      const options: RewindOptions = {
        to,
        event: Draft.user(text === undefined ? [] : text),
        ...(drops === undefined ? {} : { expect: { dropsTurnsFrom: drops } }),
      };
      const op = (session: Session) => rewind(session, options);
      const update = (store: SessionStore, id: string) =>
        Effect.scoped(Effect.gen(function* () {
          const handle = yield* store.open(id, { mode: "write" });
          return (yield* store.update(handle, op)).session;
        }));
      const inPostgres = onPostgres(file, (postgres, address) =>
        Effect.flatMap(SessionStore, (store) =>
          update(store, address.session)).pipe(
            Effect.provide(
              postgres.layerPostgresStore({
                url: address.url,
                maxConnections: 1,
              }),
            ),
          ));
      let done: Effect.Effect<Session, { readonly _tag: string }>;
      if (inPostgres !== undefined) {
        done = inPostgres;
      } else {
        const id = sessionIdOfFileName(nodePath.basename(file));
        if (id === undefined) {
          return usageOutcome(
            `Expected FILE to be a session file named ID.jsonl but found "${file}"`,
          );
        }
        // Checked first: making the store would create a missing folder.
        if (!fs.existsSync(file)) {
          return usageOutcome(`Expected "${file}" to exist`);
        }
        done = Effect.flatMap(
          makeJsonlStore({ root: nodePath.dirname(file) }),
          (store) =>
            update(store, id),
        );
      }
      const result = yield* Effect.result(done);
      if (result._tag === "Failure") {
        return classifiedFailure(ioTags, file, result.failure);
      }
      const session = result.success;
      const seq = session.surface.nextSeq - 1;
      // The session was just written: it holds its latest event.
      const carried = Result.getOrUndefined(Session.eventAt(session, seq));
      const takenOff = carried?.type === "user/message"
        ? carried.sourceEventSeqs ?? []
        : [];
      const json = {
        ok: true,
        seq,
        toSeq: to,
        takenOff,
        surface: session.surface.length,
      };
      return okOutcome(json, [
        `${redactAddress(file)}: rewound to ${to} at seq ${seq}, took ${
          count(takenOff.length, "node")
        } off; surface ${count(session.surface.length, "node")}`,
      ]);
    }),
};
