/**
 * `verify FILE`: read (migrating in memory if older), decode, fold, and say
 * whether the log is valid. A torn final line (a write cut by a crash) is
 * reported but does not make the log invalid: the committed lines before it
 * are the log, and opening it for write cuts the tail. A turn or a
 * compaction the log leaves open (a crash, or a writer still running) is
 * reported the same way: valid, with a warning and `open` in the JSON.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { redactAddress } from "../../src/store/redact.ts";
import { type Command, ExitCode, type Outcome } from "../outcome.ts";
import { describeFailure, failureText } from "../failure.ts";
import {
  type LoadError,
  loadLog,
  LOG_POSITIONAL,
  storageTags,
} from "../load.ts";
import { count, openJson, openPhrases } from "../render.ts";
import { openWork } from "@palimpsest/session";
import { rewindTarget } from "../../src/surface/rewind.ts";

/** The `verify --json` document. */
export interface VerifyReport {
  /** True when every complete line decodes and folds. */
  readonly ok: boolean;
  /** The file's format version (before migration), or null when unknown. */
  readonly version: number | null;
  /** Events read and folded (before the first bad line, if any). */
  readonly events: number;
  /** Surface length after those events. */
  readonly surface: number;
  /** Replacements folded. */
  readonly replacements: number;
  /** Rewinds folded (each leaves a branch; see `branches`). */
  readonly rewinds: number;
  /** The torn final line, not served. */
  readonly tornTail?: { readonly offset: number; readonly bytes: number };
  /**
   * The turns and compactions a valid log leaves open (a crash, or a writer
   * still running); absent when nothing is open or the log is invalid.
   */
  readonly open?: ReturnType<typeof openJson>;
  /** The first failure. */
  readonly error?: {
    readonly tag: string;
    readonly line?: number;
    readonly seq?: number;
    readonly message: string;
  };
}

const versionOf = (error: LoadError): number | null =>
  "version" in error && typeof error.version === "number"
    ? error.version
    : null;

const failed = (
  file: string,
  error: LoadError,
  version: number | undefined,
): Outcome => {
  const report = describeFailure(error);
  const io = storageTags.has(error._tag);
  const json: VerifyReport = {
    ok: false,
    version: version ?? versionOf(error),
    events: 0,
    surface: 0,
    replacements: 0,
    rewinds: 0,
    error: report,
  };
  return {
    code: io ? ExitCode.usage : ExitCode.invalid,
    json,
    text: io ? "" : `${redactAddress(file)}: invalid\n`,
    errText: failureText(file, error),
  };
};

/** The `verify` command. */
export const verifyCommand: Command = {
  spec: {
    name: "verify",
    summary: "check that a log decodes and folds",
    description:
      "Reads FILE (migrating it in memory if it has an older format version),\n" +
      "decodes every event and folds the surface. Reports the first broken rule\n" +
      "with its line, seq and tag. A torn final line is reported, not served,\n" +
      "and leaves the log valid (exit 0).",
    positionals: [LOG_POSITIONAL],
    options: [],
  },
  run: (args, io) =>
    Effect.gen(function* () {
      const file = args.positionals[0] ?? "";
      let older: number | undefined;
      const result = yield* Effect.result(
        loadLog(file, io, {
          recover: true,
          onOlderVersion: (version) => {
            older = version;
          },
        }),
      );
      if (result._tag === "Failure") {
        return failed(file, result.failure, older);
      }
      const log = result.success;
      const surface = log.session.surface;
      const torn = log.report.tornTail;
      const stopped = log.report.stoppedAt;
      const error = stopped === undefined
        ? undefined
        : describeFailure(stopped);
      // What an invalid log leaves open says nothing: the rest is unread.
      const open = openWork(error === undefined ? log.events : []);
      const opened = openPhrases(open);
      const shown = redactAddress(file);
      const rewinds = log.events.filter((e) =>
        rewindTarget(e) !== undefined
      ).length;
      const json: VerifyReport = {
        ok: error === undefined,
        version: log.version,
        events: log.events.length,
        surface: surface.length,
        replacements: surface.replacements,
        rewinds,
        ...(torn === undefined
          ? {}
          : { tornTail: { offset: torn.offset, bytes: torn.bytes } }),
        ...(opened.length === 0 ? {} : { open: openJson(open) }),
        ...(error === undefined ? {} : { error }),
      };
      const migrated = log.version === 3
        ? ""
        : ` (format v${log.version}, migrated in memory)`;
      const summary = `${count(log.events.length, "event")}, surface ${
        count(surface.length, "node")
      }, ${count(surface.replacements, "replacement")}${
        rewinds === 0 ? "" : `, ${count(rewinds, "rewind")}`
      }`;
      const tornText = (torn === undefined
        ? ""
        : `warning: torn final line at byte ${torn.offset} (${torn.bytes} bytes), not served; ` +
          `"repair FILE" cuts it and closes the interrupted turn\n`) +
        (opened.length === 0 ? "" : `warning: ${opened.join("; ")}; ` +
          `"repair FILE" closes ${
            opened.length === 1 ? "it" : "them"
          } (a crash left ${
            opened.length === 1 ? "it" : "them"
          } open, unless a writer is still running)\n`);
      if (error === undefined) {
        return {
          code: ExitCode.ok,
          json,
          text: `${shown}: valid${migrated}: ${summary}\n`,
          errText: tornText,
        };
      }
      return {
        code: ExitCode.invalid,
        json,
        text: `${shown}: invalid${migrated}: ${summary} before the error\n`,
        errText: failureText(file, stopped) + tornText,
      };
    }),
};
