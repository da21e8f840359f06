/**
 * Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.jsonl`,
 * and the older whole-JSON `session-*.json`) to v3 events, following what
 * Gemini CLI itself sends when it resumes one (its
 * `convertSessionToClientHistory`).
 *
 * - The file is first read into the messages Gemini CLI would hold
 *   (`gemini_cli_records.ts`: `$set` patches, `$rewindTo`, a message
 *   written again under its id); the report counts every record by kind,
 *   lists each earlier write merged into a later one (`rewritten`) and each
 *   message no longer held.
 * - A `user` message opens a turn; its text parts are its content. One
 *   Gemini CLI leaves out when it resumes (empty, a `/` or `?` command, its
 *   own `<session_context>` or `<hook_context>`) is skipped. Its
 *   `functionResponse` parts are tool results paired by call id; one whose
 *   call is already answered (0.61 records a result on the call and again
 *   as a message) is skipped.
 * - A `gemini` message is one `assistant/message`: its `thoughts` as
 *   reasoning (`**subject** description`), its text, its tool calls (from
 *   `toolCalls`, or from `functionCall` parts when the content has them, as
 *   in a `$set` of the list); `tokens` is its usage. The results recorded
 *   on its `toolCalls` follow it (an error unless `status` is `success`).
 * - `info`, `error` and `warning` messages are notes shown to the person
 *   and are skipped; a call never answered is closed by the library's
 *   repair.
 *
 * @module
 * @internal
 */
import * as fs from "node:fs";
import * as Result from "effect/Result";
import type { ContentBlock, ToolResultContentBlock } from "../core/message.ts";
import {
  argumentsText,
  assistantMessage,
  type Builder,
  closeAnsweredTurn,
  type Converted,
  count,
  done,
  epochOf,
  fileName,
  importedHeader,
  type Importer,
  type ImportError,
  ImportNotASession,
  isRecord,
  lineImporter,
  notCarried,
  notThisFormat,
  ok,
  type RecordReadOptions,
  type RecordReadSummary,
  sessionFormatOf,
  setTime,
  skip,
  type Step,
  str,
  toolCallBlock,
  toolResult,
  userMessage,
  userTurn,
} from "./kit.ts";
import { idLines, readDocument } from "./opencode_document.ts";
import {
  geminiLines,
  type GeminiMessage,
  type GeminiState,
  geminiState,
  metadata,
  reportWrites,
} from "./gemini_cli_records.ts";

type Rec = Record<string, unknown>;

/** A content value (a string, a part, or a list of them) as parts. */
const partsOf = (u: unknown): Rec[] =>
  typeof u === "string"
    ? [{ text: u }]
    : Array.isArray(u)
    ? u.map((p) => typeof p === "string" ? { text: p } : p).filter(isRecord)
    : isRecord(u)
    ? [u]
    : [];

/** User text Gemini CLI leaves out when it resumes. */
const ignoredUserText = (text: string): boolean => {
  const t = text.trim();
  return t === "" || t.startsWith("/") || t.startsWith("?") ||
    t.startsWith("<session_context>") || t.startsWith("<hook_context>");
};

/** A `functionResponse`'s `response` as result blocks, and whether it failed. */
const responseContent = (
  fr: Rec,
): { content: ToolResultContentBlock[]; failed: boolean } => {
  const r = fr.response;
  if (isRecord(r) && typeof r.output === "string") {
    return { content: [{ type: "text", text: r.output }], failed: false };
  }
  if (isRecord(r) && r.error !== undefined) {
    return {
      content: [{
        type: "text",
        text: str(r.error) ?? JSON.stringify(r.error),
      }],
      failed: true,
    };
  }
  return {
    content: [{ type: "text", text: JSON.stringify(r ?? {}) }],
    failed: false,
  };
};

/** A call's recorded `result` as result blocks, and whether it failed. */
const resultContent = (
  result: unknown,
): { content: ToolResultContentBlock[]; failed: boolean } => {
  const content: ToolResultContentBlock[] = [];
  let failed = false;
  for (const part of partsOf(result)) {
    if (isRecord(part.functionResponse)) {
      const r = responseContent(part.functionResponse);
      content.push(...r.content);
      failed ||= r.failed;
    } else if (typeof part.text === "string") {
      content.push({ type: "text", text: part.text });
    } else {
      content.push({ type: "text", text: JSON.stringify(part) });
    }
  }
  return { content, failed };
};

/** A `user` message: its call results, then its text as a user message. */
const userRecord = (s: GeminiState, m: GeminiMessage): Step => {
  const { b } = s;
  const kind = "message/user";
  const blocks: ContentBlock[] = [];
  let responses = 0;
  let carried = 0;
  for (const part of partsOf(m.value.content)) {
    const fr = part.functionResponse;
    if (isRecord(fr)) {
      responses += 1;
      const callId = str(fr.id) ?? "";
      if (b.calls.get(callId)?.answered === true) {
        carried += 1;
        continue;
      }
      const r = responseContent(fr);
      const answered = toolResult(
        b,
        m.line,
        `${kind}/functionResponse`,
        callId,
        r.content,
        r.failed,
      );
      if (Result.isFailure(answered)) return answered;
    } else if (typeof part.text === "string") {
      blocks.push({ type: "text", text: part.text });
    } else {
      notCarried(
        b,
        m.line,
        kind,
        `a part with keys ${
          JSON.stringify(Object.keys(part))
        } has no v3 counterpart`,
      );
    }
  }
  if (carried > 0) {
    skip(
      b,
      `${kind}/functionResponse`,
      m.line,
      "results of calls already carried (Gemini CLI records a result on its call and again as a message)",
    );
  }
  const text = blocks.map((x) => x.type === "text" ? x.text : "").join("");
  if (ignoredUserText(text)) {
    if (responses === 0) {
      skip(
        b,
        kind,
        m.line,
        "a command, or context Gemini CLI writes afresh each run: it leaves them out when it resumes",
      );
    }
    return ok;
  }
  const turned = userTurn(b, m.line);
  if (Result.isFailure(turned)) return turned;
  return done(userMessage(b, m.line, m.id, blocks, { kind: "user" }));
};

/** A `gemini` message: one assistant message, then its calls' results. */
const geminiRecord = (s: GeminiState, m: GeminiMessage): Step => {
  const { b } = s;
  const v = m.value;
  const parts = partsOf(v.content);
  const inContent = parts.some((p) =>
    isRecord(p.functionCall) || p.thought === true
  );
  const calls = Array.isArray(v.toolCalls) ? v.toolCalls.filter(isRecord) : [];
  const blocks: ContentBlock[] = [];
  if (!inContent && Array.isArray(v.thoughts)) {
    for (const t of v.thoughts.filter(isRecord)) {
      const subject = str(t.subject) ?? "";
      const description = str(t.description) ?? "";
      blocks.push({
        type: "reasoning",
        text: subject === "" ? description : `**${subject}** ${description}`,
      });
    }
  }
  for (const p of parts) {
    if (isRecord(p.functionCall)) {
      const fc = p.functionCall;
      blocks.push(toolCallBlock(fc.id, fc.name, argumentsText(fc.args)));
    } else if (typeof p.text === "string") {
      if (p.text === "") continue;
      blocks.push(
        p.thought === true
          ? { type: "reasoning", text: p.text }
          : { type: "text", text: p.text },
      );
    }
  }
  if (!inContent) {
    for (const c of calls) {
      blocks.push(toolCallBlock(c.id, c.name, argumentsText(c.args)));
    }
  }
  if (blocks.length === 0) {
    skip(
      b,
      "message/gemini",
      m.line,
      "an empty model message, which Gemini CLI does not send",
    );
    return ok;
  }
  const made = assistantMessage(b, m.line, m.id, blocks, {
    provider: "google",
    model: str(v.model) ?? "unknown",
    ...(isRecord(v.tokens) ? { usage: v.tokens } : {}),
  });
  if (Result.isFailure(made)) return Result.fail(made.failure);
  for (const c of calls) {
    if (c.result === undefined || c.result === null) continue;
    const r = resultContent(c.result);
    const answered = toolResult(
      b,
      m.line,
      "message/gemini/toolCall",
      str(c.id) ?? "",
      r.content,
      r.failed || (c.status !== undefined && c.status !== "success"),
    );
    if (Result.isFailure(answered)) return answered;
  }
  return ok;
};

/** One message Gemini CLI holds, by its type. */
const emit = (s: GeminiState, m: GeminiMessage): Step => {
  setTime(s.b, m.value.timestamp);
  const type = str(m.value.type) ?? "unknown";
  switch (type) {
    case "user":
      return userRecord(s, m);
    case "gemini":
      return geminiRecord(s, m);
    case "info":
    case "error":
    case "warning":
      skip(
        s.b,
        `message/${type}`,
        m.line,
        "a note shown to the person, which Gemini CLI does not send to the model",
      );
      return ok;
    default:
      notCarried(
        s.b,
        m.line,
        `message/${type}`,
        `message type ${JSON.stringify(type)} has no v3 counterpart`,
      );
      return ok;
  }
};

/**
 * Ends the import once every record is read: reports the merged and
 * dropped writes, imports the messages Gemini CLI holds in order, and
 * closes a turn its answer completed.
 *
 * @param s The import's state.
 * @returns Nothing, or the refusal.
 */
export const endGemini = (s: GeminiState): Step => {
  const reported = reportWrites(s);
  if (Result.isFailure(reported)) return reported;
  for (const m of s.messages.values()) {
    const made = emit(s, m);
    if (Result.isFailure(made)) return made;
  }
  return closeAnsweredTurn(s.b);
};

/** The header and report of a Gemini CLI import. */
const geminiConverted = (form: "json" | "jsonl") =>
(
  s: GeminiState,
  file: string,
  read: RecordReadSummary,
): Converted => {
  const m = s.meta;
  const id = str(m.sessionId);
  return {
    header: importedHeader(file, id, epochOf(m.startTime), {
      tool: "gemini-cli",
      file: fileName(file),
      form,
      ...(id === undefined ? {} : { id }),
      ...(typeof m.projectHash === "string"
        ? { projectHash: m.projectHash }
        : {}),
      ...(Array.isArray(m.directories) ? { directories: m.directories } : {}),
    }),
    read,
  };
};

/** Whether the file starts as a pretty-printed JSON document (`{` alone). */
const prettyDocument = (file: string): boolean => {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, "r");
    const head = new Uint8Array(256);
    const n = fs.readSync(fd, head, 0, head.length, null);
    return /^\s*\{\s*\n/.test(new TextDecoder().decode(head.subarray(0, n)));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
};

/** The older whole-JSON session file: one document holding every message. */
const importDocument = (
  file: string,
  options: RecordReadOptions,
  b: Builder,
): Result.Result<Converted, ImportError> => {
  const expected = "a Gemini CLI session document: { sessionId, messages }";
  const read = readDocument(file, options);
  if (Result.isFailure(read)) {
    const failure = read.failure;
    if (failure._tag === "FileIoError") return Result.fail(failure);
    return Result.fail(notThisFormat(
      file,
      "gemini-cli",
      undefined,
      failure._tag === "ImportNotASession"
        ? new ImportNotASession({ from: "gemini-cli", line: 1, expected })
        : failure,
    ));
  }
  const { text, value } = read.success;
  if (
    !isRecord(value) || typeof value.sessionId !== "string" ||
    !Array.isArray(value.messages)
  ) {
    const format = sessionFormatOf(value);
    return Result.fail(notThisFormat(
      file,
      "gemini-cli",
      format === "gemini-cli" ? undefined : format,
      new ImportNotASession({ from: "gemini-cli", line: 1, expected }),
    ));
  }
  const s = geminiState(b);
  const lines = idLines(text);
  s.lineOf = (id, fallback) => lines.get(id)?.[0] ?? fallback;
  count(b, "session");
  for (const m of value.messages) {
    count(b, `message/${isRecord(m) ? str(m.type) ?? "unknown" : "unknown"}`);
  }
  const held = metadata(s)(value, 1, "session");
  if (Result.isFailure(held)) return Result.fail(held.failure);
  const ended = endGemini(s);
  if (Result.isFailure(ended)) return Result.fail(ended.failure);
  const newlines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  return Result.succeed(
    geminiConverted("json")(s, file, { lines: newlines, skipped: [] }),
  );
};

const importLines: Importer = lineImporter({
  from: "gemini-cli",
  state: geminiState,
  lines: geminiLines,
  end: endGemini,
  converted: geminiConverted("jsonl"),
});

/**
 * Imports a Gemini CLI session into the builder: its JSON-lines file, or
 * the older pretty-printed whole-JSON one.
 *
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param b The builder.
 * @returns The header and what the reader saw.
 */
export const importGeminiCli: Importer = (file, options, b) =>
  prettyDocument(file)
    ? importDocument(file, options, b)
    : importLines(file, options, b);
