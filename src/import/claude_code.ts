/**
 * Claude Code transcripts (`~/.claude/projects/.../SESSION.jsonl`) to v3
 * events.
 *
 * - Claude Code writes an assistant message one content block per line,
 *   every line carrying the same `message.id`: consecutive lines with one
 *   id are joined back into one `assistant/message` (tool results that
 *   arrive between them wait for the message to be complete). `thinking`
 *   becomes `reasoning` (its signature kept in the `stream`), `tool_use` a
 *   `tool-call` with its input as JSON text.
 * - `user` lines: `tool_result` blocks are paired with their call by
 *   `tool_use_id`; other content is a user message that opens a turn.
 *   "[Request interrupted by user…]" ends the turn it interrupts
 *   (`interrupted`; unanswered calls closed by repair, their error results
 *   before the marker, which follows as a user message from the
 *   `claude-code` plugin). `isMeta`
 *   lines are user messages from the `claude-code` plugin.
 * - `system` `compact_boundary` followed by the `isCompactSummary` user
 *   message replaces everything on the surface before it by the summary.
 *   An automatic one (`compactMetadata.trigger: "auto"`) while the model
 *   was still at work (its last message called tools, or the prompt has no
 *   answer yet) is recorded inside that turn, which goes on after it; a
 *   manual `/compact`, or one after the model's answer, ends the turn.
 * - The file is imported in line order. A typed prompt whose `parentUuid`
 *   is not the line before it was written after a rewind or an edit: it
 *   carries a rewind to right after the line it continues from (or the end
 *   of that line's turn), so the lines between stay in the log as a branch
 *   (where no point holds, they stay on the surface and it is reported).
 *   Only typed prompts are followed so: Claude Code's own parent links also
 *   fork for parallel tool results.
 * - `progress`, `file-history-snapshot`, `queue-operation`, titles
 *   (`summary`, `custom-title`, `ai-title`), `permission-mode`,
 *   `attachment` and other `system` lines are skipped and counted by kind;
 *   so are sidechain (subagent) lines, which are not imported, except in a
 *   subagent's own transcript (its first message is sidechain), where they
 *   are the conversation.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import type { ContentBlock, ToolResultContentBlock } from "../core/message.ts";
import {
  argumentsText,
  assistantMessage,
  branchPoint,
  type Builder,
  closeAnsweredTurn,
  closeStep,
  closeTurn,
  compactBefore,
  type Converted,
  done,
  epochOf,
  fileName,
  fromLineOnward,
  importedHeader,
  type Importer,
  isRecord,
  keptOpaque,
  lineImporter,
  notCarried,
  ok,
  own,
  type RecordReadSummary,
  type RecordTable,
  setTime,
  skip,
  type Step,
  str,
  synthesized,
  toolCallBlock,
  toolResult,
  userMessage,
  userTurn,
} from "./kit.ts";
import type { SessionSeq } from "../core/seq.ts";

/** An assistant message being joined from its lines. */
export interface PendingAssistant {
  readonly id: string;
  readonly line: number;
  readonly time: unknown;
  model: string;
  readonly content: ContentBlock[];
  readonly stream: unknown[];
  usage: unknown;
  stop: string | undefined;
}

/** A tool result waiting for the assistant message to be complete. */
export interface PendingResult {
  readonly line: number;
  readonly time: unknown;
  readonly callId: string;
  readonly content: ReadonlyArray<ToolResultContentBlock>;
  readonly isError: boolean;
  readonly meta: unknown;
}

const noise: Readonly<Record<string, string>> = {
  "progress": "hook and tool progress, not sent to the model",
  "file-history-snapshot": "file backup bookkeeping, not sent to the model",
  "queue-operation": "input queue bookkeeping, not sent to the model",
  "summary": "a session title, not a compaction",
  "custom-title": "a session title",
  "agent-name": "a session label",
  "last-prompt": "input history",
  "ai-title": "a session title",
  "permission-mode": "the session's permission mode, not sent to the model",
  "attachment": "an attachment record the UI keeps, not a message",
  "mode": "the prompt box's input mode, not sent to the model",
  "api-request":
    "a record of a model request, whose messages are their own lines",
  "api-request-blob":
    "a copy of a model request's content, whose messages are their own lines",
  "api-request-shape": "a copy of a model request's tools and settings",
  "api-request-route": "which endpoint and credential a request used",
  "tools-used": "the tools a turn used, not sent to the model",
  "cost-state": "cost and usage bookkeeping, not sent to the model",
  "atis-latch": "client bookkeeping, not sent to the model",
};

const INTERRUPTED = "[Request interrupted by user";

const image = (source: unknown): ContentBlock => ({
  type: "image",
  attachment: source ?? null,
});

/** A message's content as a list of blocks (a string is one text block). */
const blocksOf = (u: unknown): ReadonlyArray<unknown> =>
  typeof u === "string"
    ? [{ type: "text", text: u }]
    : Array.isArray(u)
    ? u
    : [];

const textOf = (u: unknown): string => {
  if (typeof u === "string") return u;
  if (Array.isArray(u)) {
    return u.map((b) => isRecord(b) && typeof b.text === "string" ? b.text : "")
      .join("");
  }
  return "";
};

/**
 * What a Claude Code import knows besides the builder: the session's
 * settings as first seen, the message being joined, the results waiting
 * for it, a compact boundary waiting for its summary, and the lines of the
 * uuids seen. The steps below read and change it.
 */
export interface ClaudeState {
  /** The log being built. */
  readonly b: Builder;
  /** The first `sessionId`. */
  sessionId: string | undefined;
  /** The first line's time. */
  createdAt: number | undefined;
  /** The first `cwd`. */
  cwd: unknown;
  /** The first Claude Code `version`. */
  version: string | undefined;
  /** The assistant message being joined from its lines. */
  pending: PendingAssistant | undefined;
  /** Tool results waiting for the pending message to be complete. */
  readonly results: PendingResult[];
  /** A `compact_boundary` waiting for its summary. */
  boundary:
    | {
      line: number;
      id: string;
      auto: boolean;
      /** `compactMetadata.preservedSegment`: the messages kept after the summary. */
      preserved: { head: string; tail: string } | undefined;
    }
    | undefined;
  /** The line of each uuid seen. */
  readonly lineOf: Map<string, number>;
  /** The last uuid seen. */
  lastUuid: string | undefined;
  /**
   * The line a typed prompt continues from when it is not the line before
   * it (a rewind or an edit), until the prompt is imported.
   */
  rewindFrom:
    | { readonly line: number; readonly parentLine: number }
    | undefined;
  /**
   * A subagent's own transcript (\`subagents/agent-*.jsonl\`) is sidechain
   * from its first message on: there the sidechain is the conversation.
   */
  subagentFile: boolean | undefined;
}

/**
 * The state of a Claude Code import that has read nothing yet.
 *
 * @param b The builder.
 * @returns The state.
 */
export const claudeState = (b: Builder): ClaudeState => ({
  b,
  sessionId: undefined,
  createdAt: undefined,
  cwd: undefined,
  version: undefined,
  pending: undefined,
  results: [],
  boundary: undefined,
  lineOf: new Map(),
  lastUuid: undefined,
  rewindFrom: undefined,
  subagentFile: undefined,
});

/**
 * Emits the pending assistant message, then the tool results that waited
 * for it to be complete.
 */
export const flush = (s: ClaudeState): Step => {
  if (s.pending !== undefined) {
    const p = s.pending;
    s.pending = undefined;
    const saved = s.b.time;
    setTime(s.b, p.time);
    const made = assistantMessage(s.b, p.line, p.id, p.content, {
      provider: "anthropic",
      model: p.model,
      ...(p.usage === undefined ? {} : { usage: p.usage }),
      stream: p.stream,
    });
    if (Result.isFailure(made)) return Result.fail(made.failure);
    if (p.stop === "max_tokens") s.b.reason = "max-tokens";
    s.b.time = Math.max(saved, s.b.time);
  }
  for (const r of s.results.splice(0)) {
    setTime(s.b, r.time);
    const paired = toolResult(
      s.b,
      r.line,
      "user/tool_result",
      r.callId,
      r.content,
      r.isError,
      r.meta,
    );
    if (Result.isFailure(paired)) return paired;
  }
  return Result.succeed(undefined);
};

/** A line's `message`, or `undefined` when it has none (noted as not carried). */
const messageOf = (
  s: ClaudeState,
  value: Record<string, unknown>,
  line: number,
  type: "assistant" | "user",
): Record<string, unknown> | undefined => {
  const m = value.message;
  if (isRecord(m)) return m;
  notCarried(s.b, line, type, `${type} line without a message`);
  return undefined;
};

/** A step over one transcript line of a message type. */
export type LineStep = (
  s: ClaudeState,
  value: Record<string, unknown>,
  line: number,
) => Step;

/**
 * An `assistant` line: one content block of a message, joined with the
 * lines before it of the same `message.id` into the pending message.
 */
export const assistantLine: LineStep = (s, value, line) => {
  const m = messageOf(s, value, line, "assistant");
  if (m === undefined) return ok;
  const id = str(m.id) ?? str(value.uuid) ?? `claude-L${line}`;
  if (s.pending === undefined || s.pending.id !== id) {
    const flushed = flush(s);
    if (Result.isFailure(flushed)) return flushed;
    s.pending = {
      id,
      line,
      time: value.timestamp,
      model: str(m.model) ?? "unknown",
      content: [],
      stream: [],
      usage: undefined,
      stop: undefined,
    };
  }
  const p = s.pending;
  if (m.usage !== undefined) p.usage = m.usage;
  if (typeof m.stop_reason === "string") p.stop = m.stop_reason;
  for (const block of blocksOf(m.content)) {
    if (!isRecord(block)) continue;
    switch (block.type) {
      case "text":
        p.content.push({ type: "text", text: str(block.text) ?? "" });
        break;
      case "thinking":
        p.content.push({
          type: "reasoning",
          text: str(block.thinking) ?? "",
        });
        if (block.signature !== undefined) {
          p.stream.push({
            type: "thinking",
            index: p.content.length - 1,
            signature: block.signature,
          });
        }
        break;
      case "redacted_thinking":
        p.stream.push(block);
        keptOpaque(
          s.b,
          "assistant/redacted_thinking",
          line,
          "redacted thinking, in the assistant message's stream",
        );
        break;
      case "tool_use":
        p.content.push(
          toolCallBlock(block.id, block.name, argumentsText(block.input)),
        );
        break;
      default:
        p.stream.push(block);
        keptOpaque(
          s.b,
          `assistant/${String(block.type)}`,
          line,
          "a block with no v3 counterpart, in the assistant message's stream",
        );
    }
  }
  return Result.succeed(undefined);
};

/**
 * A `user` line: tool results wait for the pending message; other content
 * is a user message (a compaction summary, an interruption marker, a typed
 * prompt opening a turn).
 */
export const userLine: LineStep = (s, value, line) => {
  const m = messageOf(s, value, line, "user");
  if (m === undefined) return ok;
  const id = str(value.uuid) ?? `claude-L${line}`;
  const content: ContentBlock[] = [];
  let hadResults = false;
  for (const block of blocksOf(m.content)) {
    if (!isRecord(block)) continue;
    if (block.type === "tool_result") {
      hadResults = true;
      const inner: ToolResultContentBlock[] = typeof block.content === "string"
        ? [{ type: "text", text: block.content }]
        : Array.isArray(block.content)
        ? block.content.flatMap((c): ToolResultContentBlock[] =>
          !isRecord(c)
            ? []
            : c.type === "text"
            ? [{ type: "text", text: str(c.text) ?? "" }]
            : c.type === "image"
            ? [{ type: "image", attachment: c.source ?? null }]
            : [{ type: "text", text: JSON.stringify(c) }]
        )
        : [];
      s.results.push({
        line,
        time: value.timestamp,
        callId: str(block.tool_use_id) ?? "",
        content: inner,
        isError: block.is_error === true,
        meta: value.toolUseResult === undefined
          ? undefined
          : { toolUseResult: value.toolUseResult },
      });
    } else if (block.type === "text") {
      content.push({ type: "text", text: str(block.text) ?? "" });
    } else if (block.type === "image") {
      content.push(image(block.source));
    } else {
      content.push({ type: "text", text: JSON.stringify(block) });
      notCarried(
        s.b,
        line,
        "user",
        `content block of type ${
          JSON.stringify(block.type)
        } kept as its JSON text`,
      );
    }
  }
  if (content.length === 0) {
    // Only tool results: they wait for the assistant message to be complete.
    return hadResults && s.pending === undefined
      ? flush(s)
      : Result.succeed(undefined);
  }
  const flushed = flush(s);
  if (Result.isFailure(flushed)) return flushed;
  setTime(s.b, value.timestamp);
  const text = textOf(m.content);
  if (value.isCompactSummary === true) {
    const compactionId = s.boundary?.id ?? id;
    if (s.boundary === undefined) {
      notCarried(
        s.b,
        line,
        "user/compact-summary",
        "compaction summary without its compact_boundary line; everything before it is replaced",
      );
    }
    // An automatic compaction while the model was still at work (its last
    // message called tools, or the prompt has no answer yet) happens
    // inside the turn, which goes on after it; any other ends the turn.
    const midTurn = s.boundary?.auto === true && s.b.turn !== undefined &&
      (!s.b.answered || s.b.reason === "interrupted");
    const keepFrom = preservedTail(s, line);
    s.boundary = undefined;
    const closed = midTurn ? closeStep(s.b, line) : closeTurn(s.b, line);
    if (Result.isFailure(closed)) return closed;
    return done(compactBefore(s.b, line, {
      compactionId,
      summary: text,
      content,
      kind: "user/compact-summary",
      ...(keepFrom === undefined ? {} : { keepFrom }),
    }));
  }
  if (text.startsWith(INTERRUPTED) && s.b.turn !== undefined) {
    // The turn ends first, so that error results for the calls the
    // interruption cut off come right after the call, before the marker.
    const closed = closeTurn(s.b, line, "interrupted");
    if (Result.isFailure(closed)) return closed;
    const made = userMessage(s.b, line, id, content, {
      kind: "plugin",
      plugin: "claude-code",
    });
    return done(made);
  }
  const source = value.isMeta === true
    ? { kind: "plugin", plugin: "claude-code" }
    : { kind: "user" };
  const rewound = rewindBefore(s, line, "user");
  if (Result.isFailure(rewound)) return Result.fail(rewound.failure);
  if (rewound.success) {
    // The prompt carries the rewind, then its turn opens (as a turn after
    // the library's rewind does).
    const made = userMessage(s.b, line, id, content, source);
    if (Result.isFailure(made)) return Result.fail(made.failure);
    return userTurn(s.b, line);
  }
  const opened = userTurn(s.b, line);
  if (Result.isFailure(opened)) return opened;
  const made = userMessage(s.b, line, id, content, source);
  return done(made);
};

/**
 * The kept tail of a compaction whose boundary names a `preservedSegment`:
 * Claude Code sends the segment's messages (written before the boundary)
 * right after the summary, and the lines after the summary continue from
 * its tail. The surface from the segment's head line on is kept, and it is
 * reported; a head not in the file is reported and nothing is kept.
 */
const preservedTail = (
  s: ClaudeState,
  line: number,
): ((seq: SessionSeq) => boolean) | undefined => {
  const segment = s.boundary?.preserved;
  if (s.boundary === undefined || segment === undefined) return undefined;
  const from = s.lineOf.get(segment.head);
  const to = s.lineOf.get(segment.tail);
  if (from === undefined || to === undefined) {
    notCarried(
      s.b,
      s.boundary.line,
      "system/compact_boundary",
      `the preserved segment (${JSON.stringify(segment.head)} to ${
        JSON.stringify(segment.tail)
      }) is not in the file; nothing is kept after the summary`,
    );
    return undefined;
  }
  // The next lines continue from the segment's tail, not from a rewind.
  s.lastUuid = segment.tail;
  synthesized(
    s.b,
    line,
    "user/compact-summary",
    `the compaction keeps its preserved segment (lines ${from}-${to}) after the summary, as Claude Code sends it`,
  );
  return fromLineOnward(s.b, from);
};

/**
 * For a typed prompt that continues from an earlier line than the one
 * before it (a rewind or an edit in Claude Code): ends the turn of the
 * path left and sets the rewind its message carries, to right after the
 * earlier line's events (or the end of their turn). True when set; where
 * no point holds, the lines between stay on the surface and it is
 * reported.
 */
const rewindBefore = (
  s: ClaudeState,
  line: number,
  kind: string,
): Step<boolean> => {
  const from = s.rewindFrom;
  if (from === undefined || from.line !== line) return Result.succeed(false);
  s.rewindFrom = undefined;
  const b = s.b;
  // The last event of the earlier line: origins are lines, in order.
  let end = -1;
  for (let seq = b.origin.length - 1; seq >= 0; seq--) {
    const origin = b.origin[seq] ?? 0;
    if (origin > 0 && origin <= from.parentLine) {
      end = seq;
      break;
    }
  }
  const closed = closeTurn(b, line);
  if (Result.isFailure(closed)) return Result.fail(closed.failure);
  const found = branchPoint(b, end);
  if (found === undefined) {
    notCarried(
      b,
      line,
      kind,
      `continues from line ${from.parentLine} (a rewind or an edit); no point to rewind to, so the lines between stay on the surface in file order`,
    );
    return Result.succeed(false);
  }
  b.rewindTo = found.point;
  synthesized(
    b,
    line,
    kind,
    `continues from line ${from.parentLine} (a rewind or an edit): a rewind to seq ${found.point}; the lines between stay in the log as a branch`,
  );
  return Result.succeed(true);
};

/** The rules every line follows before its type's handler. */
export const lineRules = (
  s: ClaudeState,
  value: Record<string, unknown>,
  line: number,
  kind: string,
  type: string,
): Step | undefined => {
  if (
    s.sessionId === undefined && typeof value.sessionId === "string"
  ) s.sessionId = value.sessionId;
  if (s.cwd === undefined && value.cwd !== undefined) s.cwd = value.cwd;
  if (s.version === undefined && typeof value.version === "string") {
    s.version = value.version;
  }
  if (s.createdAt === undefined) s.createdAt = epochOf(value.timestamp);
  const reason = own(noise, type);
  if (reason !== undefined) {
    skip(s.b, kind, line, reason);
    return ok;
  }
  if (
    s.subagentFile === undefined && (type === "user" || type === "assistant")
  ) {
    s.subagentFile = value.isSidechain === true;
  }
  if (value.isSidechain === true && s.subagentFile !== true) {
    skip(
      s.b,
      `${kind} (sidechain)`,
      line,
      "a subagent's line, not part of this conversation",
    );
    return ok;
  }
  // A prompt that does not continue from the line before it was typed
  // after a rewind or an edit: the file keeps both paths in line order.
  const parent = str(value.parentUuid);
  const uuid = str(value.uuid);
  const parentLine = parent === undefined ? undefined : s.lineOf.get(parent);
  if (
    type === "user" && parentLine !== undefined && parent !== s.lastUuid &&
    isRecord(value.message) && typeof value.message.content === "string"
  ) {
    s.rewindFrom = { line, parentLine };
  }
  if (uuid !== undefined) {
    s.lineOf.set(uuid, line);
    s.lastUuid = uuid;
  }
  return undefined;
};

/** A `system` line: a compact boundary is kept for the summary that follows; others are skipped. */
export const systemLine = (
  s: ClaudeState,
  value: Record<string, unknown>,
  line: number,
  kind: string,
): Step => {
  if (str(value.subtype) === "compact_boundary") {
    const flushed = flush(s);
    if (Result.isFailure(flushed)) return flushed;
    const compact = isRecord(value.compactMetadata)
      ? value.compactMetadata
      : {};
    const segment = isRecord(compact.preservedSegment)
      ? compact.preservedSegment
      : {};
    const head = str(segment.headUuid);
    const tail = str(segment.tailUuid);
    s.boundary = {
      line,
      id: str(value.uuid) ?? `claude-L${line}`,
      auto: compact.trigger === "auto",
      preserved: head === undefined || tail === undefined
        ? undefined
        : { head, tail },
    };
    return ok;
  }
  skip(s.b, kind, line, "a notice shown to the user, not sent to the model");
  return ok;
};

/**
 * How a transcript's lines are told apart and handled: by `type` (and a
 * system line's `subtype`, for the report), after {@link lineRules}.
 *
 * @param s The import's state.
 * @returns The table.
 */
export const claudeLines = (s: ClaudeState): RecordTable => ({
  what: "line type",
  kindOf: (value) => {
    const type = str(value.type) ?? "unknown";
    const subtype = type === "system" ? str(value.subtype) : undefined;
    return {
      type,
      kind: subtype === undefined ? type : `${type}/${subtype}`,
    };
  },
  before: (value, line, kind, type) => lineRules(s, value, line, kind, type),
  handlers: {
    assistant: (value, line) => assistantLine(s, value, line),
    user: (value, line) => userLine(s, value, line),
    system: (value, line, kind) => systemLine(s, value, line, kind),
  },
});

/**
 * Ends the import once every line is read: emits what is pending, reports
 * a boundary whose summary never came, and closes a turn its answer
 * completed.
 *
 * @param s The import's state.
 * @returns Nothing, or the refusal.
 */
export const endClaude = (s: ClaudeState): Step => {
  const flushed = flush(s);
  if (Result.isFailure(flushed)) return flushed;
  if (s.boundary !== undefined) {
    notCarried(
      s.b,
      s.boundary.line,
      "system/compact_boundary",
      "compact boundary without the summary that should follow it",
    );
  }
  return closeAnsweredTurn(s.b);
};

/**
 * The header handed back, from the session's settings as first seen.
 *
 * @param s The import's state.
 * @param file The path.
 * @param read What the line reader saw.
 * @returns What the importer hands back.
 */
export const claudeConverted = (
  s: ClaudeState,
  file: string,
  read: RecordReadSummary,
): Converted => ({
  header: importedHeader(file, s.sessionId, s.createdAt, {
    tool: "claude-code",
    file: fileName(file),
    ...(s.version === undefined ? {} : { version: s.version }),
    ...(s.cwd === undefined ? {} : { cwd: s.cwd }),
  }),
  ...(s.version === undefined ? {} : { formatVersion: s.version }),
  read,
});

/**
 * Imports a Claude Code transcript into the builder.
 *
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param b The builder.
 * @returns The header and what the reader saw.
 */
export const importClaudeCode: Importer = lineImporter({
  from: "claude-code",
  state: claudeState,
  lines: claudeLines,
  end: endClaude,
  converted: claudeConverted,
});
