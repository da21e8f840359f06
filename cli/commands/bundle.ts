/**
 * `bundle FILE --out BUNDLE`: one file that moves a session between
 * machines and stores (the log byte for byte, its checkpoint and its
 * metadata). The work is `@palimpsest/session/jsonl`'s `bundleFile` and
 * `writeBundle`; `unbundle` reads it back.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { bundleFile, writeBundle } from "@palimpsest/session/jsonl";
import {
  type Command,
  fileToNewCommand,
  okOutcome,
  usageOutcome,
} from "../outcome.ts";
import { outOption } from "../args.ts";
import { LOG_POSITIONAL } from "../load.ts";

/** The `bundle` command. */
export const bundleCommand: Command = fileToNewCommand(
  {
    name: "bundle",
    summary: "pack a session file, its checkpoint and metadata into one file",
    description:
      "Reads FILE (a JSONL session in the current format, checked by the reader)\n" +
      "and writes BUNDLE: a manifest line (header, metadata, the log's length and\n" +
      "SHA-256, the checkpoint beside FILE if any) then the log, byte for byte.\n" +
      "BUNDLE is never overwritten (exit 2). `unbundle` puts it in a store.",
    positionals: [LOG_POSITIONAL],
    options: [outOption("BUNDLE", "the new bundle file (must not exist)")],
  },
  usageOutcome('missing "--out BUNDLE"', "bundle FILE --out BUNDLE [--json]"),
  (file, out) =>
    Effect.andThen(
      bundleFile(file),
      (bundle) => Effect.as(writeBundle(bundle, out), bundle),
    ),
  ({ manifest: m }, out) =>
    okOutcome(
      {
        bundle: out,
        id: m.header.id,
        events: m.metadata.events,
        bytes: m.bytes,
        sha256: m.sha256,
        checkpoint: m.checkpoint !== null,
      },
      `bundled ${m.header.id}: ${m.metadata.events} events, ${m.bytes} bytes${
        m.checkpoint === null ? "" : ", with its checkpoint"
      } in ${out}\n`,
    ),
);
