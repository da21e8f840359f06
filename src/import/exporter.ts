/**
 * The exporter contract and the list of exporters: what `--to` takes, what
 * the tool resumes a file with, and one line about it. Every other list of
 * target tools derives from {@link exporters}: the {@link TargetTool} type,
 * `targetTools`, the command line's `--to` values, usage and help;
 * `exportSession` dispatches through a record keyed by {@link TargetTool},
 * so the compiler asks for the function of a new entry.
 *
 * The list holds data only, as {@link importers} does; the functions are
 * joined to it in `export.ts`.
 *
 * @module
 */
import type { Conversation } from "./export_conversation.ts";
import type { importers } from "./importer.ts";

/**
 * The exporters, in the order help lists them: the name `--to` takes (the
 * name `--from` takes for the same tool), the tool's name in a sentence,
 * where the tool keeps its files, and one line for help.
 *
 * @example The names `--to` takes
 * ```ts
 * import { exporters } from "@palimpsest/session/import";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(exporters.map((e) => e.name), ["pi", "claude-code", "codex"]);
 * ```
 */
export const exporters = [
  {
    name: "pi",
    tool: "pi",
    resume: "pi --session FILE",
    description:
      "a pi session file (format version 3; ~/.pi/agent/sessions/--CWD--/)",
  },
  {
    name: "claude-code",
    tool: "Claude Code",
    resume: "claude --resume ID",
    description: "a Claude Code transcript (~/.claude/projects/-CWD-/ID.jsonl)",
  },
  {
    name: "codex",
    tool: "Codex",
    resume: "codex resume ID",
    description:
      "a Codex rollout (~/.codex/sessions/YYYY/MM/DD/rollout-...-ID.jsonl)",
  },
] as const;

/** What {@link exporters} says of one exporter. */
export interface ExporterInfo {
  /** The name `--to` takes. */
  readonly name: (typeof importers)[number]["name"];
  /** The tool's name in a sentence ("Claude Code"). */
  readonly tool: string;
  /** How the tool resumes an exported file. */
  readonly resume: string;
  /** One line for help. */
  readonly description: string;
}

// Every entry is an `ExporterInfo`, named as the importer of the same tool.
const checked: ReadonlyArray<ExporterInfo> = exporters;
void checked;

/** A tool whose session files the library writes: a name in {@link exporters}. */
export type TargetTool = (typeof exporters)[number]["name"];

/** Something an export could not carry into the tool's file. */
export interface ExportNote {
  /** The id of the message it concerns (`""` for the session). */
  readonly messageId: string;
  /** What was left out or changed, and why. */
  readonly note: string;
}

/** A tool's session file, as records, before it is written. */
export interface ExportedFile {
  /** The session id the tool knows the file by. */
  readonly id: string;
  /** Where the tool keeps the file, relative to its home (`.claude/projects/-w/ID.jsonl`). */
  readonly path: string;
  /** The file's records, one JSON line each. */
  readonly records: ReadonlyArray<unknown>;
  /** What could not be carried over. */
  readonly notCarried: ReadonlyArray<ExportNote>;
}

/** An exporter: a conversation as one tool's session file. */
export type Exporter = (conversation: Conversation) => ExportedFile;
