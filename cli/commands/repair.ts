/**
 * `repair FILE [--dry-run]`: close what a crash left open. Appends, in one
 * durable batch, `compaction/end { error: Abandoned }` for an open
 * compaction, an error `tool/result` per unanswered tool call, `step/end`
 * if a step is open and `turn/end { reason: interrupted }` for each open
 * turn, after cutting a torn final line. `--dry-run` prints what is open and
 * the closers, and writes nothing.
 *
 * FILE may also be a session in PostgreSQL (`postgres://…?session=ID`): the
 * store's own `repair` appends the closers under the session's writer
 * claim (the rows hold no torn line to cut).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { redactAddress } from "../../src/store/redact.ts";
import type { SessionEvent } from "@palimpsest/session";
import { encodeEvent } from "@palimpsest/session/schema";
import { deriveMessages, Session } from "@palimpsest/session";
import { interruptedTurnClosers } from "../../src/session/repair.ts";
import { replayResult } from "@palimpsest/session";
import { checkTranscript } from "@palimpsest/session";
import type { Surface } from "@palimpsest/session";
import { type RepairOptions, SessionStore } from "@palimpsest/session";
import {
  type Command,
  ExitCode,
  failureOutcome,
  okOutcome,
} from "../outcome.ts";
import { loadOrFail, onPostgres } from "../load.ts";
import { flagOption } from "../args.ts";
import { repairFile } from "@palimpsest/session/jsonl";
import { count, eventLine, openJson, openPhrases } from "../render.ts";
import { type OpenWork, openWork } from "@palimpsest/session";

const ioTags: ReadonlySet<string> = new Set([
  "InvalidAddress",
  "FileIoError",
  "StorageError",
  "AppendOutcomeUnknown",
  "SessionNotFound",
  "SessionLocked",
  "InvalidSessionId",
  "ReadOnlyHandle",
  "HandleClosed",
]);

const report = (
  file: string,
  dryRun: boolean,
  closers: ReadonlyArray<SessionEvent>,
  surface: Surface,
  torn: { readonly offset: number; readonly bytes: number } | undefined,
  open: OpenWork,
) => {
  const opened = openPhrases(open);
  const violations = checkTranscript(deriveMessages(surface));
  const json = {
    dryRun,
    closers: closers.map((e) => encodeEvent(e)),
    events: surface.nextSeq - surface.baseSeq,
    surface: surface.length,
    transcriptViolations: violations.map((v) => v._tag),
    open: openJson(open),
    ...(torn === undefined ? {} : { tornTail: torn }),
  };
  const verb = dryRun ? "would append" : "appended";
  const shown = redactAddress(file);
  const lines: string[] = [];
  if (torn !== undefined) {
    lines.push(
      `${
        dryRun ? "would cut" : "cut"
      } the torn final line (${torn.bytes} bytes at byte ${torn.offset})`,
    );
  }
  if (closers.length === 0) {
    lines.push(
      `${shown}: nothing to close, every turn and compaction has its end`,
    );
  } else {
    lines.push(`${shown}: ${opened.join("; ")}`);
    lines.push(`${shown}: ${verb} ${count(closers.length, "closer")}:`);
    for (const e of closers) lines.push(`  ${eventLine(e, 120)}`);
  }
  lines.push(
    violations.length === 0
      ? "transcript: clean"
      : `transcript: ${violations.length} violations (${
        violations.map((v) => v._tag).join(", ")
      })`,
  );
  return okOutcome(json, lines);
};

/**
 * The report of a repair that was written: the work left open is that of
 * the log before the closers. The session was opened with its whole log,
 * so every event is held.
 */
const repairedReport = (
  file: string,
  closers: ReadonlyArray<SessionEvent>,
  session: Session,
  torn: { readonly offset: number; readonly bytes: number } | undefined,
) => {
  const all = Result.getOrThrow(Session.events(session));
  return report(
    file,
    false,
    closers,
    session.surface,
    torn,
    openWork(all.slice(0, all.length - closers.length)),
  );
};

/** The `repair` command. */
export const repairCommand: Command = {
  spec: {
    name: "repair",
    summary: "close the turns and compactions a crash left open",
    description:
      "Appends the closers of what a crash left open to FILE as one durable\n" +
      "batch: compaction/end (error Abandoned) for an open compaction, an error\n" +
      "tool/result for each tool call without a result, then step/end if a step\n" +
      "is open and turn/end (reason interrupted) for each open turn. A torn final\n" +
      "line is cut first. Takes the session's writer lock. Repairing a closed log\n" +
      "appends nothing. Older logs are refused: migrate them first. An answer cut\n" +
      "while it streamed (its assistant/partial events) stays in the log for people\n" +
      "and out of the model's requests; --append-partial also appends its text as\n" +
      "an interrupted assistant/message.",
    positionals: [{
      name: "FILE",
      summary: "the session log (JSONL, or postgres://…?session=ID)",
    }],
    options: [
      flagOption("dry-run", "print the closers, write nothing"),
      flagOption(
        "append-partial",
        "append a cut answer's streamed text as an interrupted message",
      ),
    ],
  },
  run: (args, io) =>
    Effect.gen(function* () {
      const file = args.positionals[0] ?? "";
      const options: RepairOptions = args.flags.has("append-partial")
        ? { partialAnswer: "append" }
        : {};
      const codeOf = (tag: string) =>
        ioTags.has(tag) ? ExitCode.usage : ExitCode.invalid;
      if (args.flags.has("dry-run")) {
        const loaded = yield* loadOrFail(file, io);
        if (loaded._tag === "Failure") return loaded.failure;
        const log = loaded.success;
        const closers = interruptedTurnClosers(log.events, options);
        const folded = replayResult(closers, log.session.surface);
        if (folded._tag === "Failure") {
          return failureOutcome(ExitCode.invalid, file, folded.failure.error);
        }
        return report(
          file,
          true,
          closers,
          folded.success,
          log.report.tornTail,
          openWork(log.events),
        );
      }
      const inPostgres = onPostgres(file, (postgres, address) =>
        Effect.scoped(Effect.gen(function* () {
          const store = yield* SessionStore;
          const handle = yield* store.open(address.session, {
            mode: "write",
            wholeLog: true,
          });
          return yield* store.repair(handle, options);
        })).pipe(
          Effect.provide(
            postgres.layerPostgresStore({
              url: address.url,
              maxConnections: 1,
            }),
          ),
        ));
      if (inPostgres !== undefined) {
        const repaired = yield* Effect.result(inPostgres);
        if (repaired._tag === "Failure") {
          const error = repaired.failure;
          return failureOutcome(codeOf(error._tag), file, error);
        }
        const { closers, session } = repaired.success;
        return repairedReport(file, closers, session, undefined);
      }
      const done = yield* Effect.result(repairFile(file, options));
      if (done._tag === "Failure") {
        return failureOutcome(codeOf(done.failure._tag), file, done.failure);
      }
      const { closers, session, cutTornTail } = done.success;
      return repairedReport(file, closers, session, cutTornTail);
    }),
};
