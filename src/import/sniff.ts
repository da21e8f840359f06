/**
 * Which format a session file is in, from one of its records, its first
 * lines, or the folder it is: what every importer asks when it finds no
 * record of its own format, so that its refusal names the tool the file
 * looks like (and what the command line asks when `--from` is missing).
 *
 * A record is told by the fields each tool always writes:
 *
 * - pi: the header `{type: "session", timestamp, cwd}`, or an entry whose
 *   `type` is one of pi's (`message` with a nested `message.role`,
 *   `compaction`, `branch_summary`, `model_change`, ...);
 * - Claude Code: `user`/`assistant` lines with a nested `message`, and the
 *   line types only Claude Code writes (`file-history-snapshot`,
 *   `queue-operation`, `progress`, titles, ...);
 * - Codex: `{type: session_meta | response_item | event_msg | turn_context
 *   | compacted, payload: {...}}`;
 * - an `opencode export` document: `{info: {...}, messages: [...]}`, or
 *   opencode's database (`opencode.db`: a file that starts with the SQLite
 *   header, the only database an importer reads);
 * - Gemini CLI: the metadata `{sessionId, projectHash, ...}` (the older
 *   whole-JSON file is one with its `messages`), messages `{id, type:
 *   user | gemini | info | error | warning, content}` with no nested
 *   `message`, `{$set: {...}}` and `{$rewindTo: id}`;
 * - opencode's own storage: a folder holding `session/` and `message/` (or
 *   `storage/`, or `opencode.db`), entries named `ses_…`, `msg_…`, `prt_…`,
 *   or one of those JSON files (`{id: "ses_…", ...}`);
 * - a palimpsest log: the header `{type: "session", version, createdAt}` or
 *   an event `{type: "a/b", seq, data}`.
 *
 * A file is sniffed from its first mebibyte: the whole of it when it holds
 * one JSON document, else its first complete lines, else (a pretty-printed
 * document cut short) the start of its first key.
 *
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { isRecord } from "./values.ts";
import { importers, type SourceTool } from "./importer.ts";

/**
 * The session formats a file can be told to be in: an importer's, opencode's
 * own storage (which `opencode export` turns into an importable document), or
 * a palimpsest log (which needs no import).
 */
export type SessionFormat = SourceTool | "opencode-storage" | "palimpsest";

const piEntries: ReadonlySet<string> = new Set([
  "compaction",
  "branch_summary",
  "model_change",
  "thinking_level_change",
  "custom",
  "custom_message",
  "label",
  "session_info",
]);

const claudeOnly: ReadonlySet<string> = new Set([
  "file-history-snapshot",
  "queue-operation",
  "progress",
  "summary",
  "custom-title",
  "ai-title",
  "agent-name",
  "last-prompt",
  "permission-mode",
  "attachment",
  // Bookkeeping lines of Claude Code 2.1 (the importer skips them).
  "mode",
  "api-request",
  "api-request-blob",
  "api-request-shape",
  "api-request-route",
  "tools-used",
  "cost-state",
  "atis-latch",
]);

const codexLines: ReadonlySet<string> = new Set([
  "session_meta",
  "response_item",
  "event_msg",
  "turn_context",
  "compacted",
  "world_state",
  "token_usage_record",
]);

/** Gemini CLI's message types besides `user`. */
const geminiTypes: ReadonlySet<string> = new Set([
  "gemini",
  "info",
  "error",
  "warning",
]);

/** A Gemini CLI message record: an id, a time and its content. */
const geminiMessage = (v: Record<string, unknown>): boolean =>
  typeof v.id === "string" && typeof v.timestamp === "string" &&
  "content" in v;

const opencodeId = /^(?:ses|msg|prt)_[0-9A-Za-z]/;
const eventType = /^[a-z][a-z_-]*\/[a-z][a-z_/-]*$/;

/** The format of an opencode storage record, if `v` is one. */
const opencodeStored = (v: Record<string, unknown>): boolean => {
  const id = v.id;
  if (typeof id !== "string" || !opencodeId.test(id)) return false;
  if (id.startsWith("ses_")) {
    return "projectID" in v || "directory" in v || "time" in v;
  }
  if (id.startsWith("msg_")) return typeof v.sessionID === "string";
  return typeof v.messageID === "string";
};

/**
 * The format one parsed record (a line of a JSON-lines file, or a whole
 * JSON document) belongs to.
 *
 * @param value The parsed JSON value.
 * @returns The format, or `undefined` when it is none of them.
 *
 * @example Telling a Codex line from a Claude Code line
 * ```ts
 * import { sessionFormatOf } from "@palimpsest/session/import";
 * import assert from "node:assert/strict";
 *
 * assert.equal(sessionFormatOf({ type: "response_item", payload: {} }), "codex");
 * assert.equal(sessionFormatOf({ type: "user", message: { role: "user" } }), "claude-code");
 * assert.equal(sessionFormatOf({ hello: "world" }), undefined);
 * ```
 */
export function sessionFormatOf(value: unknown): SessionFormat | undefined {
  if (!isRecord(value)) return undefined;
  const type = value.type;
  if (type === "session") {
    return typeof value.createdAt === "number" && !("cwd" in value)
      ? "palimpsest"
      : "pi";
  }
  if (typeof type === "string") {
    if (codexLines.has(type) && isRecord(value.payload)) return "codex";
    if (type === "message") {
      return isRecord(value.message) && typeof value.message.role === "string"
        ? "pi"
        : undefined;
    }
    if (piEntries.has(type)) return "pi";
    if (type === "user" || type === "assistant") {
      if (isRecord(value.message)) return "claude-code";
      return type === "user" && geminiMessage(value) ? "gemini-cli" : undefined;
    }
    if (geminiTypes.has(type) && geminiMessage(value)) return "gemini-cli";
    if (type === "system") {
      return typeof value.subtype === "string" ||
          typeof value.uuid === "string"
        ? "claude-code"
        : undefined;
    }
    if (claudeOnly.has(type)) return "claude-code";
    if (
      eventType.test(type) && typeof value.seq === "number" && "data" in value
    ) return "palimpsest";
  }
  if (isRecord(value.info) && Array.isArray(value.messages)) return "opencode";
  if (
    isRecord(value.$set) || typeof value.$rewindTo === "string" ||
    (typeof value.sessionId === "string" &&
      typeof value.projectHash === "string")
  ) return "gemini-cli";
  if (opencodeStored(value)) return "opencode-storage";
  return undefined;
}

/** How many lines of a file's start are looked at. */
const LINES = 64;
/** How much of a file is read to sniff it. */
const WINDOW = 1 << 20;

/**
 * The format of a file's text: its first `LINES` complete lines (the last
 * one only when `complete`), or the whole text when it is one document.
 */
const formatOfText = (
  text: string,
  complete: boolean,
): SessionFormat | undefined => {
  if (complete) {
    try {
      const whole = sessionFormatOf(JSON.parse(text));
      if (whole !== undefined) return whole;
    } catch {
      // Not one document: JSON lines, or neither.
    }
  }
  const lines = text.split("\n");
  if (!complete) lines.pop();
  for (const line of lines.slice(0, LINES)) {
    if (line.trim() === "") continue;
    try {
      const found = sessionFormatOf(JSON.parse(line));
      if (found !== undefined) return found;
    } catch {
      // A line that is not JSON says nothing.
    }
  }
  // A pretty-printed document too long to read whole: its first key.
  if (/^\s*\{\s*"info"\s*:\s*\{/.test(text)) return "opencode";
  if (/^\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"/.test(text)) {
    return "gemini-cli";
  }
  if (/^\s*\{\s*"id"\s*:\s*"(?:ses|msg|prt)_/.test(text)) {
    return "opencode-storage";
  }
  return undefined;
};

/** Whether a folder is opencode's storage, its data folder or a part of it. */
const opencodeFolder = (dir: string): boolean => {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return false;
  }
  const has = (name: string): boolean => names.includes(name);
  return opencodeId.test(path.basename(dir)) ||
    (has("session") && has("message")) ||
    (has("storage") && fs.existsSync(path.join(dir, "storage", "session"))) ||
    has("opencode.db") ||
    (names.length > 0 && names.some((n) => opencodeId.test(n)) &&
      names.every((n) => opencodeId.test(n) || n.startsWith(".")));
};

/** The 16 bytes every SQLite 3 database starts with. */
const HEADER = "SQLite format 3\0";

/**
 * Whether a file starts with the SQLite 3 header (a path that cannot be read
 * does not).
 *
 * @param file The path.
 * @returns Whether it is a SQLite database.
 */
export const isSqliteFile = (file: string): boolean => {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, "r");
    const start = new Uint8Array(HEADER.length);
    const n = fs.readSync(fd, start, 0, start.length, 0);
    return n === HEADER.length &&
      new TextDecoder().decode(start) === HEADER;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
};

/**
 * Which format a file (or folder) looks like, from its first mebibyte (see
 * the module doc). Never fails: a path that cannot be read looks like
 * nothing.
 *
 * @param file The path.
 * @returns The format, or `undefined`.
 *
 * @example A Codex rollout
 * ```ts
 * import { sniffSessionFormat } from "@palimpsest/session/import";
 * import assert from "node:assert/strict";
 *
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/r.jsonl`, '{"type":"session_meta","payload":{"id":"x"}}\n');
 * assert.equal(sniffSessionFormat(`${dir}/r.jsonl`), "codex");
 * assert.equal(sniffSessionFormat(`${dir}/missing.jsonl`), undefined);
 * Deno.removeSync(dir, { recursive: true });
 * ```
 */
export function sniffSessionFormat(file: string): SessionFormat | undefined {
  let fd: number | undefined;
  try {
    if (fs.statSync(file).isDirectory()) {
      return opencodeFolder(file) ? "opencode-storage" : undefined;
    }
    if (isSqliteFile(file)) return "opencode";
    fd = fs.openSync(file, "r");
    const buffer = new Uint8Array(WINDOW);
    let read = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, read, WINDOW - read, null);
      if (n === 0) break;
      read += n;
      if (read === WINDOW) break;
    }
    const complete = read < WINDOW ||
      fs.readSync(fd, new Uint8Array(1), 0, 1, null) === 0;
    const text = new TextDecoder().decode(buffer.subarray(0, read));
    return formatOfText(text, complete);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * What a file of `format` is called in a sentence: the importer's label, or
 * what the two formats no importer reads are.
 *
 * @param format The format.
 * @returns A noun phrase ("a Codex rollout").
 */
export const formatLabel = (format: SessionFormat): string => {
  switch (format) {
    case "opencode-storage":
      return "opencode's own storage";
    case "palimpsest":
      return "a palimpsest log";
    default:
      return importers.find((i) => i.name === format)?.label ?? format;
  }
};

/**
 * What to do with a file of `format`: the `--from` that reads it, or how to
 * make it importable.
 *
 * @param format The format the file looks like.
 * @param file The path (an opencode session id in it is named).
 * @returns A clause for people.
 */
export const formatHint = (format: SessionFormat, file: string): string => {
  switch (format) {
    case "opencode-storage": {
      // opencode's data folder today holds its database, which imports.
      const db = path.join(file, "opencode.db");
      if (isSqliteFile(db)) return `import ${db} with --from opencode`;
      const id = /ses_[0-9A-Za-z]+/.exec(file)?.[0] ?? "<id>";
      return `run \`opencode export ${id}\` and import its output`;
    }
    case "palimpsest":
      return "it needs no import: verify, derive and stats read it (migrate upgrades an older version)";
    default:
      return `use --from ${format}`;
  }
};
