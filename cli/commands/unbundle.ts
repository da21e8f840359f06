/**
 * `unbundle BUNDLE DST`: puts a bundle's session in a store. A JSONL
 * folder gets the log byte for byte and the checkpoint it carried; a
 * PostgreSQL address (`postgres://…?session=ID`) gets the session as `copy`
 * creates it. Never replaces a session.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as fs from "node:fs";
import { readBundle, unbundleToFolder } from "@palimpsest/session/jsonl";
import { redactAddress } from "../../src/store/redact.ts";
import {
  classifiedFailure,
  type Command,
  fileWriteTags,
  okOutcome,
  storeOutcome,
  writeOutcome,
} from "../outcome.ts";
import { storeSession } from "./copy.ts";

/** The `unbundle` command. */
export const unbundleCommand: Command = {
  spec: {
    name: "unbundle",
    summary: "put a bundle's session in a JSONL folder or PostgreSQL",
    description:
      "Reads BUNDLE (written by `bundle`; its log must match the length and SHA-256\n" +
      "its manifest names, and is checked by the reader) and creates its session at\n" +
      "DST: a JSONL store's folder, which gets the log byte for byte and the carried\n" +
      "checkpoint, or postgres://user@host:port/db?session=ID. An existing session\n" +
      "at DST is never replaced (exit 2).",
    positionals: [
      { name: "BUNDLE", summary: "the bundle file" },
      { name: "DST", summary: "a JSONL folder or a postgres:// address" },
    ],
    options: [],
  },
  run: (args) =>
    Effect.gen(function* () {
      const bundle = args.positionals[0] ?? "";
      const target = args.positionals[1] ?? "";
      const folder = fs.existsSync(target) &&
        fs.statSync(target).isDirectory();
      if (folder) {
        return yield* writeOutcome(
          bundle,
          unbundleToFolder(bundle, target),
          (u) =>
            okOutcome(
              {
                file: u.file,
                id: u.session.header.id,
                events: u.events.length,
              },
              `unbundled ${u.session.header.id} to ${u.file}: ${u.events.length} events\n`,
            ),
        );
      }
      const read = yield* Effect.result(readBundle(bundle));
      if (read._tag === "Failure") {
        return classifiedFailure(fileWriteTags, bundle, read.failure);
      }
      const events = read.success.events.length;
      return yield* storeOutcome(
        target,
        storeSession(target, read.success.session),
        (id) =>
          okOutcome(
            { target: redactAddress(target), id, events },
            `unbundled ${id} to ${redactAddress(target)}: ${events} events\n`,
          ),
      );
    }),
};
