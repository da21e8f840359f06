/**
 * opencode sessions, as `opencode export SESSION` prints them (one JSON
 * document `{ info, messages: [{ info, parts }] }`) or as its database holds
 * them (read into that document by `opencode_database.ts`), to v3 events,
 * following what opencode itself sends to the model for them
 * (`MessageV2.toModelMessages` and the AI SDK's `convertToModelMessages`).
 *
 * - The document is one record: it is read whole (bounded by the record
 *   bound, `maxLineBytes`); a message or part is reported by the line on
 *   which its `"id"` is written. Messages and their parts are taken in id
 *   order (opencode's ids ascend in creation order and it orders parts by
 *   id; an export may list them otherwise).
 * - A user message opens a turn. Its text parts (synthetic ones included,
 *   `ignored` ones skipped) and file parts are its content; `text/plain` and
 *   directory file parts are skipped (opencode sends their contents as the
 *   synthetic text beside them); a `subtask` or `compaction` part becomes
 *   the text opencode sends for it.
 * - An assistant message is cut into steps at its `step-start` parts; each
 *   step is one `assistant/message` (its reasoning, text and tool calls in
 *   part order; the step's `step-finish` tokens as its usage; the message's
 *   provider and model), followed by the results of its tool parts in the
 *   same order: `completed` is the output (`[Old tool result content
 *   cleared]` when opencode pruned it, the original kept in the result's
 *   `meta`), `error` an error result with the error text. A `pending` or
 *   `running` call is answered right after its step with opencode's own
 *   `[Tool execution was interrupted]`, except in the file's last step,
 *   where the turn is left open for `repair`.
 * - Reasoning with no readable text (OpenAI's encrypted reasoning) is kept
 *   opaque in the message's `stream`, as is the provider metadata of any
 *   reasoning part. An assistant message that ended in an error other than
 *   an abort with content is not sent by opencode and is not carried over.
 * - `step-start`, `step-finish`, `snapshot`, `patch`, `agent` and `retry`
 *   parts never reach the model: they are skipped and counted by kind.
 * - A compaction (a user message with a `compaction` part) whose summary
 *   completed (the next message, an assistant `summary` that finished
 *   without error) replaces everything before it: opencode then sends only
 *   its question (`What did we do so far?`), the summary and what follows.
 *   The question is the replacing message, citing what it shadows. One
 *   whose summary never completed is an ordinary message (reported).
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import type { ContentBlock, ToolResultContentBlock } from "../core/message.ts";
import {
  argumentsText,
  assistantMessage,
  type Builder,
  closeAnsweredTurn,
  closeOpenCalls,
  closeTurn,
  compactBefore,
  count,
  done,
  fileName,
  importedHeader,
  type Importer,
  ImportNotASession,
  isRecord,
  keptOpaque,
  notCarried,
  notThisFormat,
  ok,
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

type Rec = Record<string, unknown>;
type Part = Rec & { readonly id: string };

/** What opencode sends for a call that never finished. */
const INTERRUPTED = "[Tool execution was interrupted]";
/** What opencode sends for a result it pruned. */
const CLEARED = "[Old tool result content cleared]";

const bookkeeping: Readonly<Record<string, string>> = {
  "step-start":
    "step bookkeeping: where a step begins (a step is one assistant message here)",
  "step-finish":
    "step bookkeeping: finish reason, cost and tokens (the tokens are the step's usage)",
  "snapshot": "a file-tree snapshot for undo, never sent to the model",
  "patch": "the files a step changed, for undo, never sent to the model",
  "agent": "an @agent mention; the model sees the text parts beside it",
  "retry": "a failed request that was retried, never sent to the model",
};

/** Records a part of a type this importer does not know (bookkeeping aside). */
const unknownPart = (
  b: Builder,
  line: number,
  type: unknown,
  message: "a user message" | "an assistant message",
): void => {
  if (bookkeeping[String(type)] === undefined) {
    notCarried(
      b,
      line,
      `part/${String(type)}`,
      `a part of ${message} not known to this importer`,
    );
  }
};

const byId = (a: { id: string }, b: { id: string }): number =>
  a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

interface Message {
  readonly id: string;
  readonly info: Rec;
  readonly parts: ReadonlyArray<Part>;
}

/**
 * Imports an `opencode export` document into the builder.
 *
 * @param file The path.
 * @param options Recover or refuse; the record bound.
 * @param b The builder.
 * @returns The header and what the reader saw.
 */
export const importOpencode: Importer = (file, options, b) => {
  const read = readDocument(file, options);
  if (Result.isFailure(read)) {
    // No JSON document, or too long: JSON lines of another tool, maybe.
    const failure = read.failure;
    return Result.fail(
      failure._tag === "FileIoError"
        ? failure
        : notThisFormat(file, "opencode", undefined, failure),
    );
  }
  return importDocument(file, read.success, b);
};

/**
 * An importer of a document already read (from opencode's database: see
 * `opencode_database.ts`), whatever file it is given.
 *
 * @param document The document and its text.
 * @returns The importer.
 */
export const importOpencodeDocument = (
  document: { readonly text: string; readonly value: unknown },
): Importer =>
(file, _options, b) => importDocument(file, document, b);

const importDocument = (
  file: string,
  { text, value }: { readonly text: string; readonly value: unknown },
  b: Builder,
): ReturnType<Importer> => {
  if (
    !isRecord(value) || !isRecord(value.info) ||
    !Array.isArray(value.messages)
  ) {
    const format = sessionFormatOf(value);
    return Result.fail(
      notThisFormat(
        file,
        "opencode",
        format === "opencode" ? undefined : format,
        new ImportNotASession({
          from: "opencode",
          line: 1,
          expected: "an `opencode export` document: { info, messages }",
        }),
      ),
    );
  }
  const info = value.info;
  const lines = idLines(text);
  // A part's line is the first line of its id at or after its message's
  // (part ids are unique in opencode; a copied export may repeat them).
  const lineOf = (id: string, after: number): number => {
    const all = lines.get(id) ?? [];
    return all.find((l) => l >= after) ?? all[0] ?? after;
  };
  b.closerText = INTERRUPTED;
  const messages: Message[] = value.messages.flatMap((m): Message[] => {
    if (!isRecord(m) || !isRecord(m.info)) return [];
    const parts = Array.isArray(m.parts)
      ? m.parts.filter(isRecord).map((p) => ({ ...p, id: str(p.id) ?? "" }))
      : [];
    return [{
      id: str(m.info.id) ?? "",
      info: m.info,
      parts: parts.sort(byId),
    }];
  }).sort(byId);
  if (messages.length < value.messages.length) {
    notCarried(b, 1, "message", "a message without its info, left out");
  }
  // The file's last step, where a call that never finished stays open.
  const final = messages[messages.length - 1];
  const last = final?.info.role === "assistant"
    ? { message: messages.length - 1, step: steps(final.parts).length - 1 }
    : undefined;

  let compaction: Pending | undefined;
  for (const [index, m] of messages.entries()) {
    const line = lineOf(m.id, 1);
    const role = str(m.info.role) ?? "unknown";
    count(b, `message/${role}`);
    const time = isRecord(m.info.time) ? m.info.time.created : undefined;
    const before = b.time;
    setTime(b, time);
    b.time = Math.max(before, b.time);
    for (const p of m.parts) {
      const type = str(p.type) ?? "unknown";
      const state = isRecord(p.state) ? str(p.state.status) : undefined;
      count(b, state === undefined ? `part/${type}` : `part/${type}/${state}`);
      const reason = bookkeeping[type];
      if (reason !== undefined) {
        skip(b, `part/${type}`, lineOf(p.id, line), reason);
      }
    }
    if (compaction !== undefined) {
      const c = compaction;
      compaction = undefined;
      const summarized = role === "assistant" && m.info.summary === true &&
        m.info.finish !== undefined && m.info.error === undefined &&
        m.info.parentID === c.m.id;
      const replaced = summarized ? compact(b, c, m) : unfinished(b, c);
      if (Result.isFailure(replaced)) return Result.fail(replaced.failure);
    }
    if (role === "user" && m.parts.some((p) => p.type === "compaction")) {
      // Whether it replaces the history depends on its summary, next.
      compaction = { m, line, content: userContent(b, m, line, lineOf) };
      continue;
    }
    const made = role === "user"
      ? userLine(b, m, line, userContent(b, m, line, lineOf))
      : role === "assistant"
      ? assistantLine(b, m, line, lineOf, {
        lastStep: last?.message === index ? last.step : -1,
      })
      : (notCarried(
        b,
        line,
        `message/${role}`,
        `a message of role ${JSON.stringify(role)}, not known to this importer`,
      ),
        ok);
    if (Result.isFailure(made)) return Result.fail(made.failure);
  }
  if (compaction !== undefined) {
    const left = unfinished(b, compaction);
    if (Result.isFailure(left)) return Result.fail(left.failure);
  }
  // An aborted last answer ends its turn (nothing is left to answer).
  const end = messages[messages.length - 1];
  const abortedEnd = end !== undefined && isRecord(end.info.error) &&
    end.info.error.name === "MessageAbortedError" && b.openCalls.size === 0;
  const closed = abortedEnd
    ? closeTurn(b, 0, "interrupted")
    : closeAnsweredTurn(b);
  if (Result.isFailure(closed)) return Result.fail(closed.failure);
  const created = isRecord(info.time) && typeof info.time.created === "number"
    ? info.time.created
    : undefined;
  const version = str(info.version);
  return Result.succeed({
    header: importedHeader(file, str(info.id), created, {
      tool: "opencode",
      file: fileName(file),
      ...(version === undefined ? {} : { version }),
      ...(info.directory === undefined ? {} : { cwd: info.directory }),
      ...(info.title === undefined ? {} : { title: info.title }),
    }),
    ...(version === undefined ? {} : { formatVersion: version }),
    read: {
      lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
      skipped: [],
    },
  });
};

/** A compaction's user message, waiting for its summary. */
interface Pending {
  readonly m: Message;
  readonly line: number;
  readonly content: ReadonlyArray<ContentBlock>;
}

/**
 * A compaction whose summary completed: opencode sends its question, the
 * summary and what follows, nothing before. The question replaces the whole
 * surface, citing it; the summary follows as the answer.
 */
const compact = (b: Builder, c: Pending, summary: Message): Step => {
  const opened = userTurn(b, c.line);
  if (Result.isFailure(opened)) return opened;
  return done(compactBefore(b, c.line, {
    compactionId: c.m.id,
    summary: summary.parts.flatMap((p) =>
      p.type === "text" ? [str(p.text) ?? ""] : []
    ).join("\n"),
    content: c.content,
    kind: "part/compaction",
    messageId: c.m.id,
    source: { kind: "user" },
  }));
};

/** A compaction whose summary never completed: opencode keeps the history. */
const unfinished = (b: Builder, c: Pending): Step => {
  notCarried(
    b,
    c.line,
    "part/compaction",
    "a compaction whose summary never completed: opencode keeps the history before it, and so does the import",
  );
  return userLine(b, c.m, c.line, c.content);
};

/** What opencode sends for a user message's parts. */
const userContent = (
  b: Builder,
  m: Message,
  line: number,
  lineOf: (id: string, fallback: number) => number,
): ContentBlock[] => {
  const content: ContentBlock[] = [];
  for (const p of m.parts) {
    const at = lineOf(p.id, line);
    switch (p.type) {
      case "text":
        if (p.ignored === true) {
          skip(b, "part/text (ignored)", at, "text opencode does not send");
        } else content.push({ type: "text", text: str(p.text) ?? "" });
        break;
      case "file": {
        const mime = str(p.mime) ?? "";
        if (mime === "text/plain" || mime === "application/x-directory") {
          skip(
            b,
            `part/file (${mime})`,
            at,
            "a file whose contents opencode sends as the synthetic text beside it",
          );
          break;
        }
        const attachment = {
          url: p.url ?? null,
          mime,
          ...(p.filename === undefined ? {} : { filename: p.filename }),
        };
        content.push(
          mime.startsWith("image/")
            ? { type: "image", attachment }
            : { type: "file", attachment },
        );
        break;
      }
      case "compaction":
        content.push({ type: "text", text: "What did we do so far?" });
        if (p.tail_start_id !== undefined) {
          notCarried(
            b,
            at,
            "part/compaction",
            "a compaction that keeps a tail of earlier messages (tail_start_id): not modelled, everything before it is replaced",
          );
        }
        break;
      case "subtask":
        content.push({
          type: "text",
          text: "The following tool was executed by the user",
        });
        break;
      default:
        unknownPart(b, at, p.type, "a user message");
    }
  }
  return content;
};

/** A user message, opening a turn; one with nothing opencode sends is left out. */
const userLine = (
  b: Builder,
  m: Message,
  line: number,
  content: ReadonlyArray<ContentBlock>,
): Step => {
  if (content.length === 0) {
    notCarried(
      b,
      line,
      "message/user",
      "a user message with nothing opencode sends, left out",
    );
    return ok;
  }
  const opened = userTurn(b, line);
  if (Result.isFailure(opened)) return opened;
  const made = userMessage(b, line, m.id, content, { kind: "user" });
  return Result.isFailure(made) ? Result.fail(made.failure) : ok;
};

/** The parts of an assistant message cut at its `step-start` parts. */
const steps = (parts: ReadonlyArray<Part>): Part[][] => {
  const out: Part[][] = [];
  let current: Part[] = [];
  for (const p of parts) {
    if (p.type === "step-start" && current.length > 0) {
      out.push(current);
      current = [];
    }
    current.push(p);
  }
  if (current.length > 0) out.push(current);
  return out;
};

const resultContent = (
  state: Rec,
): ReadonlyArray<ToolResultContentBlock> => {
  const time = isRecord(state.time) ? state.time : {};
  const compacted = time.compacted !== undefined;
  const out: ToolResultContentBlock[] = [{
    type: "text",
    text: compacted ? CLEARED : str(state.output) ?? "",
  }];
  if (!compacted && Array.isArray(state.attachments)) {
    for (const a of state.attachments) {
      if (!isRecord(a)) continue;
      const attachment = { url: a.url ?? null, mime: a.mime ?? null };
      out.push(
        str(a.mime)?.startsWith("image/") === true
          ? { type: "image", attachment }
          : { type: "file", attachment },
      );
    }
  }
  return out;
};

const assistantLine = (
  b: Builder,
  m: Message,
  line: number,
  lineOf: (id: string, fallback: number) => number,
  at: { readonly lastStep: number },
): Step => {
  const error = isRecord(m.info.error) ? m.info.error : undefined;
  const aborted = str(error?.name) === "MessageAbortedError";
  if (
    error !== undefined &&
    !(aborted &&
      m.parts.some((p) => p.type !== "step-start" && p.type !== "reasoning"))
  ) {
    notCarried(
      b,
      line,
      "message/assistant",
      `an assistant message that ended in ${
        JSON.stringify(str(error.name) ?? "an error")
      }; opencode does not send it, so it is left out`,
    );
    return ok;
  }
  const provider = str(m.info.providerID) ?? "unknown";
  const model = str(m.info.modelID) ?? "unknown";
  const all = steps(m.parts);
  for (const [index, step] of all.entries()) {
    const first = step.find((p) => bookkeeping[String(p.type)] === undefined);
    const stepLine = first === undefined ? line : lineOf(first.id, line);
    const content: ContentBlock[] = [];
    const stream: unknown[] = [];
    const tools: Part[] = [];
    let usage: unknown;
    for (const p of step) {
      const partLine = lineOf(p.id, line);
      switch (p.type) {
        case "text": {
          const t = str(p.text) ?? "";
          if (t !== "") content.push({ type: "text", text: t });
          break;
        }
        case "reasoning": {
          const t = str(p.text) ?? "";
          if (t !== "") content.push({ type: "reasoning", text: t });
          if (p.metadata !== undefined) {
            stream.push({
              type: "reasoning",
              part: p.id,
              metadata: p.metadata,
            });
            keptOpaque(
              b,
              "part/reasoning",
              partLine,
              t === ""
                ? "encrypted reasoning, in the assistant message's stream"
                : "the reasoning's provider metadata, in the assistant message's stream",
            );
          }
          break;
        }
        case "tool": {
          const state = isRecord(p.state) ? p.state : {};
          content.push(
            toolCallBlock(p.callID, p.tool, argumentsText(state.input)),
          );
          tools.push(p);
          break;
        }
        case "step-finish":
          if (p.tokens !== undefined) usage = p.tokens;
          break;
        default:
          unknownPart(b, partLine, p.type, "an assistant message");
      }
    }
    if (content.length === 0) {
      if (stream.length > 0) {
        notCarried(
          b,
          stepLine,
          "part/reasoning",
          "a step with only encrypted reasoning: no message to keep it in, left out",
        );
      }
      continue;
    }
    const made = assistantMessage(b, stepLine, m.id, content, {
      provider,
      model,
      ...(usage === undefined ? {} : { usage }),
      ...(aborted && index === all.length - 1 ? { interrupted: true } : {}),
      stream,
    });
    if (Result.isFailure(made)) return Result.fail(made.failure);
    for (const p of tools) {
      const state = isRecord(p.state) ? p.state : {};
      const callId = str(p.callID) ?? "";
      const partLine = lineOf(p.id, line);
      const kind = `part/tool/${String(state.status)}`;
      const meta = {
        tool: p.tool,
        ...(state.title === undefined ? {} : { title: state.title }),
        ...(state.metadata === undefined ? {} : { metadata: state.metadata }),
        ...(state.time === undefined ? {} : { time: state.time }),
        ...(isRecord(state.time) && state.time.compacted !== undefined
          ? { output: state.output }
          : {}),
      };
      if (isRecord(state.time)) {
        const before = b.time;
        setTime(b, state.time.end ?? state.time.start);
        b.time = Math.max(before, b.time);
      }
      let paired: Step = ok;
      if (state.status === "completed") {
        paired = toolResult(
          b,
          partLine,
          kind,
          callId,
          resultContent(state),
          false,
          meta,
        );
      } else if (state.status === "error") {
        const md = isRecord(state.metadata) ? state.metadata : {};
        const output = md.interrupted === true ? str(md.output) : undefined;
        paired = toolResult(
          b,
          partLine,
          kind,
          callId,
          [{ type: "text", text: output ?? str(state.error) ?? "" }],
          output === undefined,
          meta,
        );
      }
      if (Result.isFailure(paired)) return paired;
    }
    // A call that never finished: opencode answers it right after its step;
    // in the file's last step the turn stays open for repair.
    if (b.openCalls.size > 0 && index !== at.lastStep) {
      const closed = closeOpenCalls(b, stepLine);
      if (Result.isFailure(closed)) return closed;
    }
    if (aborted && index === all.length - 1) b.reason = "interrupted";
    else if (m.info.finish === "length") b.reason = "max-tokens";
  }
  return ok;
};
