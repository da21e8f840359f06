/**
 * The importer contract and the list of importers: what `--from` takes,
 * what a file of each tool is called, and one line about it. Every other
 * list of tools derives from {@link importers}: the {@link SourceTool} type,
 * `sourceTools`, the command line's `--from` values, usage and help, the
 * sniffer's labels; `importSession` dispatches through a record keyed by
 * {@link SourceTool}, so the compiler asks for the function of a new entry.
 *
 * The list holds data only, so that the modules below the importers (the
 * sniffer, the errors) can read it without importing the importers; the
 * functions are joined to it in `mod.ts`. `docs/architecture.md` ("Adding
 * an importer") has the recipe.
 *
 * @module
 */
import type * as Result from "effect/Result";
import type { SessionHeader } from "../session/session.ts";
import type { Builder } from "./builder.ts";
import type { ImportError } from "./errors.ts";
import type { RecordReadOptions, RecordReadSummary } from "./lines.ts";

/**
 * The importers, in the order help lists them: the name `--from` takes, the
 * tool's name in a sentence, what one of its files is called, and one line
 * for help.
 *
 * @example The names `--from` takes
 * ```ts
 * import { importers } from "@palimpsest/session/import";
 * import assert from "node:assert/strict";
 *
 * assert.ok(importers.some((i) => i.name === "codex"));
 * ```
 */
export const importers = [
  {
    name: "pi",
    tool: "pi",
    label: "a pi session",
    description: "a pi session file (format versions 1 to 3)",
  },
  {
    name: "claude-code",
    tool: "Claude Code",
    label: "a Claude Code transcript",
    description: "a Claude Code transcript (~/.claude/projects/.../*.jsonl)",
  },
  {
    name: "codex",
    tool: "Codex",
    label: "a Codex rollout",
    description: "a Codex rollout (~/.codex/sessions/.../rollout-*.jsonl)",
  },
  {
    name: "opencode",
    tool: "opencode",
    label: "an opencode session (`opencode export` output or `opencode.db`)",
    description: "what `opencode export` prints, or opencode's database",
  },
  {
    name: "gemini-cli",
    tool: "Gemini CLI",
    label: "a Gemini CLI session",
    description:
      "a Gemini CLI session (~/.gemini/tmp/.../chats/session-*.jsonl or .json)",
  },
] as const;

/** What {@link importers} says of one importer. */
export interface ImporterInfo {
  /** The name `--from` takes. */
  readonly name: string;
  /** The tool's name in a sentence ("Claude Code"). */
  readonly tool: string;
  /** What a file of the tool is called ("a Codex rollout"). */
  readonly label: string;
  /** One line for help. */
  readonly description: string;
}

// Every entry is an `ImporterInfo` (`satisfies` on the list itself would
// hide its literal type from the declaration emitter).
const checked: ReadonlyArray<ImporterInfo> = importers;
void checked;

/** A source tool the importer reads: a name in {@link importers}. */
export type SourceTool = (typeof importers)[number]["name"];

/** What an importer hands back besides the events it built. */
export interface Converted {
  /** The imported session's header. */
  readonly header: SessionHeader;
  /** The source's format version, when it declares one. */
  readonly formatVersion?: number | string;
  /** What the line reader saw (lines read, lines skipped). */
  readonly read: RecordReadSummary;
}

/**
 * An importer: reads `file` into the builder `b`, one event at a time
 * through the library's decoder and fold (see `builder.ts`), noting in `b`
 * what the report says; hands back the header and what the reader saw, or
 * the refusal that names the source line. A file with no record of its
 * format is refused with `notThisFormat` (`records.ts`), never imported as
 * an empty session.
 */
export type Importer = (
  file: string,
  options: RecordReadOptions,
  b: Builder,
) => Result.Result<Converted, ImportError>;
