/**
 * `@palimpsest/session/import`: reading the session files other agent tools
 * wrote (pi, Claude Code, Codex, opencode, Gemini CLI) as v3 logs, so that `verify`,
 * `derive`, `stats` and `explain` work on them.
 *
 * An import streams the source by lines (a line is never longer than
 * `maxLineBytes`, and the file is never one string; an `opencode export`
 * document is one JSON record, read whole within that bound) and builds every event
 * through the library's decoder and fold, so the result passes every v3
 * rule by construction or the import is refused with the source line.
 * Messages, tool calls and results are paired by the source's ids; the
 * source's compactions become replacements that cite every node they
 * shadow; turns that the source left with unanswered calls are closed by
 * the library's repair (`interruptedTurnClosers`). What could not be carried
 * over is listed in the {@link ImportReport}, never dropped silently.
 *
 * Where the source's identity goes:
 *
 * - the header's `meta.importedFrom` names the tool, its format version,
 *   the file name, the source session id and working folder;
 * - message ids are the source's ids where it has them (pi entry ids,
 *   Claude Code `message.id` and `uuid`), else `<tool>-L<line>`; tool
 *   results are `result-<callId>`;
 * - the last event is an ignorable `import/lines` event whose
 *   `data.lines[seq]` is the source line of event `seq` (0 for an event the
 *   importer made up). Readers that do not know it keep it opaque.
 *
 * A source line that is not JSON (pi has written lines where two records
 * were glued together) is a refusal naming the line ({@link ImportLineNotJson}),
 * or with `recover` skipped and reported; a line that parses but is no
 * record gets the same label. Under `recover`, a file in which no line is a
 * record of the session is refused ({@link ImportNoSession}), never an
 * empty success.
 *
 * A file with no record of the format it is read as (a Codex rollout read
 * as Claude Code, a pi session as opencode, opencode's own storage folder,
 * a palimpsest log) is refused with {@link ImportNotThisFormat}, whose
 * message names the format the file looks like and what to do ("use --from
 * codex"; for opencode's storage, run `opencode export` and import its
 * output). {@link sniffSessionFormat} tells the formats apart; a damaged
 * file of the right format imports as before.
 *
 * @example Importing a pi session
 * ```ts
 * import { importSession } from "@palimpsest/session/import";
 * import { deriveMessages } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * const file = `${dir}/pi.jsonl`;
 * Deno.writeTextFileSync(file, [
 *   '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}',
 *   '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}',
 *   '{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"provider":"anthropic","model":"m","stopReason":"stop"}}',
 *   "",
 * ].join("\n"));
 * const imported = Effect.runSync(importSession(file, { from: "pi" }));
 * assert.deepEqual(deriveMessages(imported.session.surface).map((m) => m.id), ["a1", "a2"]);
 * assert.equal(imported.report.openTurn, false);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as fs from "node:fs";
import type { Session } from "../session/session.ts";
import type { SessionEvent } from "../core/event.ts";
import { finish, makeBuilder } from "./builder.ts";
import {
  type ImportError,
  ImportNoSession,
  ImportNotThisFormat,
} from "./errors.ts";
import { isSqliteFile, sniffSessionFormat } from "./sniff.ts";
import { importPi } from "./pi.ts";
import { importClaudeCode } from "./claude_code.ts";
import { importCodex } from "./codex.ts";
import { importOpencode, importOpencodeDocument } from "./opencode.ts";
import { readOpencodeDatabase } from "./opencode_database.ts";
import { importGeminiCli } from "./gemini_cli.ts";
import type { ImportReport } from "./report.ts";
import { type Importer, importers, type SourceTool } from "./importer.ts";
import { publishLog } from "./write.ts";

export * from "./errors.ts";
export { FileIoError, TargetExists } from "../fs/errors.ts";
export {
  type SessionFormat,
  sessionFormatOf,
  sniffSessionFormat,
} from "./sniff.ts";
export {
  type BranchReport,
  formatImportReport,
  type ImportReport,
  lineRanges,
  type ReportEntry,
  type SkippedKind,
} from "./report.ts";
export { type ImporterInfo, importers, type SourceTool } from "./importer.ts";
export {
  type ExporterInfo,
  exporters,
  type ExportNote,
  type TargetTool,
} from "./exporter.ts";
export {
  type ExportedSession,
  exportFile,
  type ExportFileOptions,
  type ExportOptions,
  exportSession,
  isTargetTool,
  targetTools,
} from "./export.ts";

/** The tools whose session files can be imported: the names in {@link importers}. */
export const sourceTools: ReadonlyArray<SourceTool> = importers.map((i) =>
  i.name
);

/**
 * Whether a name is one of the {@link sourceTools}: how a command line or a
 * form checks the `--from` it was given.
 *
 * @param name A tool's name, as typed.
 * @returns Whether files of that tool can be imported.
 *
 * @example Checking a `--from` value
 * ```ts
 * import { isSourceTool } from "@palimpsest/session/import";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isSourceTool("codex"), true);
 * assert.equal(isSourceTool("vim"), false);
 * ```
 */
export function isSourceTool(name: string): name is SourceTool {
  return sourceTools.some((tool) => tool === name);
}

/** The default bound on a source line: 64 MiB. */
export const DEFAULT_IMPORT_MAX_LINE_BYTES: number = 64 * 1024 * 1024;

/** Options of {@link importSession}. */
export interface ImportOptions {
  /** The tool that wrote the file. */
  readonly from: SourceTool;
  /** Skip (and report) lines that are not JSON or too long, instead of refusing. */
  readonly recover?: boolean;
  /** The longest source line accepted, in bytes (default {@link DEFAULT_IMPORT_MAX_LINE_BYTES}). */
  readonly maxLineBytes?: number;
  /**
   * The session to read from a file holding several (opencode's database,
   * `opencode.db`); may be left out when it holds one.
   */
  readonly session?: string;
}

/** An imported session. */
export interface ImportedSession {
  /** The session: header, log and surface. */
  readonly session: Session;
  /** Its events, in seq order. */
  readonly events: ReadonlyArray<SessionEvent>;
  /** What the import did. */
  readonly report: ImportReport;
}

/** The function of each of the {@link importers}. */
const converters: Readonly<Record<SourceTool, Importer>> = {
  "pi": importPi,
  "claude-code": importClaudeCode,
  "codex": importCodex,
  "opencode": importOpencode,
  "gemini-cli": importGeminiCli,
};

/** Whether `file` is a folder (a path that cannot be read is not). */
const isFolder = (file: string): boolean => {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
};

/**
 * The function that reads `file`: the tool's, or, for opencode's SQLite
 * database, one over the session read from it (read here, as the database
 * driver loads asynchronously).
 */
const converterOf = (
  file: string,
  options: ImportOptions,
): Effect.Effect<Importer, ImportError> =>
  options.from === "opencode" && isSqliteFile(file)
    ? Effect.map(
      readOpencodeDatabase(file, options.session),
      importOpencodeDocument,
    )
    : Effect.succeed(converters[options.from]);

const run = (
  file: string,
  options: ImportOptions,
  convert: Importer,
): Result.Result<ImportedSession, ImportError> => {
  if (isFolder(file)) {
    // No importer reads a folder: opencode's storage is exported first.
    const looksLike = sniffSessionFormat(file);
    if (looksLike !== undefined) {
      return Result.fail(
        new ImportNotThisFormat({ file, from: options.from, looksLike }),
      );
    }
  }
  const b = makeBuilder();
  const converted = convert(file, {
    recover: options.recover === true,
    maxLineBytes: options.maxLineBytes ?? DEFAULT_IMPORT_MAX_LINE_BYTES,
  }, b);
  const recover = options.recover === true;
  if (Result.isFailure(converted)) {
    return Result.fail(
      recover && converted.failure._tag === "ImportNotASession"
        ? new ImportNoSession({ file, from: options.from })
        : converted.failure,
    );
  }
  const c = converted.success;
  if (recover && b.events.length === 0) {
    return Result.fail(new ImportNoSession({ file, from: options.from }));
  }
  for (const s of c.read.skipped) {
    b.notCarried.push({
      line: s.line,
      kind: s.reason,
      note: s.reason === "torn"
        ? `a torn final line, left out: ${JSON.stringify(s.excerpt)}`
        : s.reason === "too-long"
        ? "a line longer than the bound, skipped under --recover"
        : `a line that is not JSON, skipped under --recover: ${
          JSON.stringify(s.excerpt)
        }`,
    });
  }
  b.notCarried.sort((x, y) => x.line - y.line);
  const report = finish(b, {
    from: options.from,
    file,
    ...(c.formatVersion === undefined
      ? {}
      : { formatVersion: c.formatVersion }),
    lines: c.read.lines,
  });
  if (Result.isFailure(report)) return Result.fail(report.failure);
  return Result.succeed({
    session: { header: c.header, surface: b.surface, vocabulary: undefined },
    events: b.events,
    report: report.success,
  });
};

/**
 * Reads another tool's session file as a v3 session, in memory.
 *
 * @param file The source file.
 * @param options The tool that wrote it; `recover` and the line bound.
 * @returns The session, its events and the report; or the refusal, naming
 * the source line.
 *
 * @example A line that is not JSON
 * ```ts
 * import { importSession } from "@palimpsest/session/import";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * const file = `${dir}/c.jsonl`;
 * Deno.writeTextFileSync(file, '{"type":"user","message":{"role":"user","content":"hi"}}\n{"type":"user"}{"type":"user"}\n');
 * const refused = Effect.runSync(Effect.flip(importSession(file, { from: "claude-code" })));
 * assert.equal(refused._tag, "ImportLineNotJson");
 * const recovered = Effect.runSync(importSession(file, { from: "claude-code", recover: true }));
 * assert.equal(recovered.report.notCarried[0]?.line, 2);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function importSession(
  file: string,
  options: ImportOptions,
): Effect.Effect<ImportedSession, ImportError> {
  return Effect.flatMap(
    Effect.suspend(() => converterOf(file, options)),
    (convert) => Effect.fromResult(run(file, options, convert)),
  );
}

/** Options of {@link importFile}. */
export interface ImportFileOptions extends ImportOptions {
  /** The v3 file to write; it must not exist. */
  readonly out: string;
}

/**
 * Imports another tool's session file and publishes it as a new v3 log,
 * never overwriting: an existing `out` is refused with
 * {@link TargetExists} and left untouched; on any refusal nothing is
 * written.
 *
 * @param file The source file (only read).
 * @param options The tool, the new file and the reading options.
 * @returns The imported session and its report.
 *
 * @example Writing the v3 log
 * ```ts
 * import { importFile } from "@palimpsest/session/import";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/c.jsonl`, '{"type":"user","sessionId":"c1","message":{"role":"user","content":"hi"}}\n');
 * const imported = Effect.runSync(importFile(`${dir}/c.jsonl`, { from: "claude-code", out: `${dir}/c.v3.jsonl` }));
 * assert.equal(imported.session.header.id, "c1");
 * assert.match(Deno.readTextFileSync(`${dir}/c.v3.jsonl`), /"version":3/);
 * const again = Effect.runSync(Effect.flip(importFile(`${dir}/c.jsonl`, { from: "claude-code", out: `${dir}/c.v3.jsonl` })));
 * assert.equal(again._tag, "TargetExists");
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function importFile(
  file: string,
  options: ImportFileOptions,
): Effect.Effect<ImportedSession, ImportError> {
  return Effect.flatMap(
    Effect.suspend(() => converterOf(file, options)),
    (convert) => {
      const imported = run(file, options, convert);
      if (Result.isFailure(imported)) return Effect.fail(imported.failure);
      return Effect.as(
        publishLog(
          options.out,
          imported.success.session.header,
          imported.success.events,
        ),
        imported.success,
      );
    },
  );
}
