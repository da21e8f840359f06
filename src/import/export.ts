/**
 * Writing a session as another tool's session file, the file that tool
 * resumes: {@link exportSession} in memory, {@link exportFile} on disk.
 * What the tool is sent when it resumes is what the library derives (user
 * and assistant texts, reasoning, tool calls and results, in order), each
 * in the tool's own shape: its current format version, its ids, its own
 * record of the last compaction with the summary where the tool puts it.
 * What a tool's file cannot hold is listed in `notCarried`, never dropped
 * silently. `docs/moving-sessions.md` has what each tool keeps and loses.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Session } from "../session/session.ts";
import type { FileIoError, TargetExists } from "../fs/errors.ts";
import { ioError } from "../fs/io.ts";
import { conversationOf } from "./export_conversation.ts";
import {
  type Exporter,
  exporters,
  type ExportNote,
  type TargetTool,
} from "./exporter.ts";
import { exportPi } from "./export_pi.ts";
import { exportClaudeCode } from "./export_claude_code.ts";
import { exportCodex } from "./export_codex.ts";
import { publishLines } from "./write.ts";

/** The tools whose session files can be written: the names in {@link exporters}. */
export const targetTools: ReadonlyArray<TargetTool> = exporters.map((e) =>
  e.name
);

/**
 * Whether a name is one of the {@link targetTools}: how a command line
 * checks the `--to` it was given.
 *
 * @param name A tool's name, as typed.
 * @returns Whether sessions can be exported to that tool.
 *
 * @example Checking a `--to` value
 * ```ts
 * import { isTargetTool } from "@palimpsest/session/import";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isTargetTool("claude-code"), true);
 * assert.equal(isTargetTool("opencode"), false);
 * ```
 */
export function isTargetTool(name: string): name is TargetTool {
  return targetTools.some((tool) => tool === name);
}

/** The function of each of the {@link exporters}. */
const writers: Readonly<Record<TargetTool, Exporter>> = {
  "pi": exportPi,
  "claude-code": exportClaudeCode,
  "codex": exportCodex,
};

/** Options of {@link exportSession}. */
export interface ExportOptions {
  /** The tool whose file to write. */
  readonly to: TargetTool;
  /**
   * The working folder the tool resumes the session in (default: the one
   * the session's header names, else `/`): the tools file sessions by it.
   */
  readonly cwd?: string;
}

/** A session as another tool's session file. */
export interface ExportedSession {
  /** The tool. */
  readonly to: TargetTool;
  /** The session id the tool knows it by (`--resume ID`). */
  readonly id: string;
  /** Where the tool keeps the file, relative to its home folder. */
  readonly path: string;
  /** The file's lines, each ending in a newline. */
  readonly lines: ReadonlyArray<string>;
  /** The messages written. */
  readonly messages: number;
  /** What the tool's file could not hold. */
  readonly notCarried: ReadonlyArray<ExportNote>;
}

const run = (session: Session, options: ExportOptions): ExportedSession => {
  const read = conversationOf(session);
  const conversation = options.cwd === undefined
    ? read
    : { ...read, cwd: options.cwd };
  const file = writers[options.to](conversation);
  return {
    to: options.to,
    id: file.id,
    path: file.path,
    lines: file.records.map((r) => `${JSON.stringify(r)}\n`),
    messages: conversation.items.length,
    notCarried: file.notCarried,
  };
};

/**
 * Writes a session as another tool's session file, in memory: the lines of
 * the file, the id the tool resumes it by and where the tool keeps it.
 *
 * @param session The session (from a store, or an import).
 * @param options The tool.
 * @returns The file's lines, its id and path, and what was not carried.
 *
 * @example A session as a Claude Code transcript
 * ```ts
 * import { exportSession } from "@palimpsest/session/import";
 * import { Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const session = Effect.runSync(Session.appendAll(
 *   Session.make({ id: "s1", createdAt: 0, isSeeded: false }),
 *   [{ type: "user/message", surfaceOp: "append",
 *      data: { id: "u1", role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user" } } }],
 * ));
 * const exported = Effect.runSync(exportSession(session, { to: "claude-code" }));
 * const [line] = exported.lines.map((l) => JSON.parse(l));
 * assert.equal(line.type, "user");
 * assert.equal(line.message.content, "hi");
 * assert.equal(line.sessionId, exported.id);
 * ```
 */
export function exportSession(
  session: Session,
  options: ExportOptions,
): Effect.Effect<ExportedSession> {
  return Effect.sync(() => run(session, options));
}

/** Options of {@link exportFile}. */
export interface ExportFileOptions extends ExportOptions {
  /**
   * The file to write, which must not exist; or an existing folder taken as
   * the tool's home: the file goes where the tool looks for it
   * (`OUT/.claude/projects/-w/ID.jsonl`).
   */
  readonly out: string;
}

/**
 * Writes a session as another tool's session file on disk, never
 * overwriting: an existing file is refused with {@link TargetExists} and
 * left untouched; on any refusal nothing is written.
 *
 * @param session The session.
 * @param options The tool and where to write.
 * @returns The export, and the file written.
 *
 * @example Writing a pi session into a home folder
 * ```ts
 * import { exportFile } from "@palimpsest/session/import";
 * import { Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const home = Deno.makeTempDirSync();
 * const session = Session.make({ id: "s1", createdAt: 0, isSeeded: false });
 * const written = Effect.runSync(exportFile(session, { to: "pi", out: home }));
 * assert.ok(written.file.startsWith(`${home}/.pi/agent/sessions/`));
 * assert.match(Deno.readTextFileSync(written.file), /"version":3/);
 * Deno.removeSync(home, { recursive: true });
 * ```
 */
export function exportFile(
  session: Session,
  options: ExportFileOptions,
): Effect.Effect<
  ExportedSession & { readonly file: string },
  FileIoError | TargetExists
> {
  return Effect.suspend(() => {
    const exported = run(session, options);
    const home = fs.existsSync(options.out) &&
      fs.statSync(options.out).isDirectory();
    const file = home ? path.join(options.out, exported.path) : options.out;
    const folder = Effect.try({
      try: () => fs.mkdirSync(path.dirname(file), { recursive: true }),
      catch: (cause) => ioError("mkdir", path.dirname(file), cause),
    });
    return folder.pipe(
      Effect.andThen(publishLines(file, () => exported.lines)),
      Effect.as({ ...exported, file }),
    );
  });
}
