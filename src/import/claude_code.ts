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
 *   is not the line before it was written after a rewind or an edit; it is
 *   reported (the abandoned lines stay on the surface), since Claude Code's
 *   own parent links also fork for parallel tool results and cannot be
 *   followed blindly.
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
import type { ContentBlock, ToolResultContentBlock } from "../message.ts";
import { done, importedHeader, ok, setTime, type Step } from "./builder.ts";
import { keptOpaque, notCarried, skip } from "./notes.ts";
import { closeAnsweredTurn, closeStep, closeTurn, userTurn } from "./turns.ts";
import {
  argumentsText,
  epochOf,
  fileName,
  isRecord,
  str,
  toolCallBlock,
} from "./values.ts";
import { forEachLine, own } from "./records.ts";
import { compactBefore } from "./compaction.ts";
import { assistantMessage, toolResult, userMessage } from "./messages.ts";
import type { Importer } from "./importer.ts";

interface PendingAssistant {
  readonly id: string;
  readonly line: number;
  readonly time: unknown;
  model: string;
  readonly content: ContentBlock[];
  readonly stream: unknown[];
  usage: unknown;
  stop: string | undefined;
}

interface PendingResult {
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
 * Imports a Claude Code transcript into the builder.
 *
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param b The builder.
 * @returns The header and what the reader saw.
 */
export const importClaudeCode: Importer = (file, options, b) => {
  let sessionId: string | undefined;
  let createdAt: number | undefined;
  let cwd: unknown;
  let version: string | undefined;
  let pending: PendingAssistant | undefined;
  const results: PendingResult[] = [];
  let boundary: { line: number; id: string; auto: boolean } | undefined;
  const lineOf = new Map<string, number>();
  let lastUuid: string | undefined;
  /**
   * A subagent's own transcript (\`subagents/agent-*.jsonl\`) is sidechain
   * from its first message on: there the sidechain is the conversation.
   */
  let subagentFile: boolean | undefined;

  const flush = (): Step => {
    if (pending !== undefined) {
      const p = pending;
      pending = undefined;
      const saved = b.time;
      setTime(b, p.time);
      const made = assistantMessage(b, p.line, p.id, p.content, {
        provider: "anthropic",
        model: p.model,
        ...(p.usage === undefined ? {} : { usage: p.usage }),
        stream: p.stream,
      });
      if (Result.isFailure(made)) return Result.fail(made.failure);
      if (p.stop === "max_tokens") b.reason = "max-tokens";
      b.time = Math.max(saved, b.time);
    }
    for (const r of results.splice(0)) {
      setTime(b, r.time);
      const paired = toolResult(
        b,
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

  const assistantLine = (
    value: Record<string, unknown>,
    line: number,
  ): Step => {
    const m = value.message;
    if (!isRecord(m)) {
      notCarried(b, line, "assistant", "assistant line without a message");
      return Result.succeed(undefined);
    }
    const id = str(m.id) ?? str(value.uuid) ?? `claude-L${line}`;
    if (pending === undefined || pending.id !== id) {
      const flushed = flush();
      if (Result.isFailure(flushed)) return flushed;
      pending = {
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
    const p = pending;
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
            b,
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
            b,
            `assistant/${String(block.type)}`,
            line,
            "a block with no v3 counterpart, in the assistant message's stream",
          );
      }
    }
    return Result.succeed(undefined);
  };

  const userLine = (value: Record<string, unknown>, line: number): Step => {
    const m = value.message;
    if (!isRecord(m)) {
      notCarried(b, line, "user", "user line without a message");
      return Result.succeed(undefined);
    }
    const id = str(value.uuid) ?? `claude-L${line}`;
    const content: ContentBlock[] = [];
    let hadResults = false;
    for (const block of blocksOf(m.content)) {
      if (!isRecord(block)) continue;
      if (block.type === "tool_result") {
        hadResults = true;
        const inner: ToolResultContentBlock[] =
          typeof block.content === "string"
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
        results.push({
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
          b,
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
      return hadResults && pending === undefined
        ? flush()
        : Result.succeed(undefined);
    }
    const flushed = flush();
    if (Result.isFailure(flushed)) return flushed;
    setTime(b, value.timestamp);
    const text = textOf(m.content);
    if (value.isCompactSummary === true) {
      const compactionId = boundary?.id ?? id;
      if (boundary === undefined) {
        notCarried(
          b,
          line,
          "user/compact-summary",
          "compaction summary without its compact_boundary line; everything before it is replaced",
        );
      }
      // An automatic compaction while the model was still at work (its last
      // message called tools, or the prompt has no answer yet) happens
      // inside the turn, which goes on after it; any other ends the turn.
      const midTurn = boundary?.auto === true && b.turn !== undefined &&
        (!b.answered || b.reason === "interrupted");
      boundary = undefined;
      const closed = midTurn ? closeStep(b, line) : closeTurn(b, line);
      if (Result.isFailure(closed)) return closed;
      return done(compactBefore(b, line, {
        compactionId,
        summary: text,
        content,
        kind: "user/compact-summary",
      }));
    }
    if (text.startsWith(INTERRUPTED) && b.turn !== undefined) {
      // The turn ends first, so that error results for the calls the
      // interruption cut off come right after the call, before the marker.
      const closed = closeTurn(b, line, "interrupted");
      if (Result.isFailure(closed)) return closed;
      const made = userMessage(b, line, id, content, {
        kind: "plugin",
        plugin: "claude-code",
      });
      return done(made);
    }
    const opened = userTurn(b, line);
    if (Result.isFailure(opened)) return opened;
    const source = value.isMeta === true
      ? { kind: "plugin", plugin: "claude-code" }
      : { kind: "user" };
    const made = userMessage(b, line, id, content, source);
    return done(made);
  };

  /** The rules every line follows before its type's handler. */
  const before = (
    value: Record<string, unknown>,
    line: number,
    kind: string,
    type: string,
  ): Step | undefined => {
    if (
      sessionId === undefined && typeof value.sessionId === "string"
    ) sessionId = value.sessionId;
    if (cwd === undefined && value.cwd !== undefined) cwd = value.cwd;
    if (version === undefined && typeof value.version === "string") {
      version = value.version;
    }
    if (createdAt === undefined) createdAt = epochOf(value.timestamp);
    const reason = own(noise, type);
    if (reason !== undefined) {
      skip(b, kind, line, reason);
      return ok;
    }
    if (
      subagentFile === undefined && (type === "user" || type === "assistant")
    ) {
      subagentFile = value.isSidechain === true;
    }
    if (value.isSidechain === true && subagentFile !== true) {
      skip(
        b,
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
    const parentLine = parent === undefined ? undefined : lineOf.get(parent);
    if (
      type === "user" && parentLine !== undefined && parent !== lastUuid &&
      isRecord(value.message) && typeof value.message.content === "string"
    ) {
      notCarried(
        b,
        line,
        kind,
        `continues from line ${parentLine} (a rewind or an edit); the lines between stay on the surface in file order`,
      );
    }
    if (uuid !== undefined) {
      lineOf.set(uuid, line);
      lastUuid = uuid;
    }
    return undefined;
  };

  const systemLine = (
    value: Record<string, unknown>,
    line: number,
    kind: string,
  ): Step => {
    if (str(value.subtype) === "compact_boundary") {
      const flushed = flush();
      if (Result.isFailure(flushed)) return flushed;
      const compact = isRecord(value.compactMetadata)
        ? value.compactMetadata
        : {};
      boundary = {
        line,
        id: str(value.uuid) ?? `claude-L${line}`,
        auto: compact.trigger === "auto",
      };
      return ok;
    }
    skip(b, kind, line, "a notice shown to the user, not sent to the model");
    return ok;
  };

  const read = forEachLine(b, "claude-code", file, options, {
    what: "line type",
    kindOf: (value) => {
      const type = str(value.type) ?? "unknown";
      const subtype = type === "system" ? str(value.subtype) : undefined;
      return {
        type,
        kind: subtype === undefined ? type : `${type}/${subtype}`,
      };
    },
    before,
    handlers: {
      assistant: assistantLine,
      user: userLine,
      system: systemLine,
    },
  });
  if (Result.isFailure(read)) return Result.fail(read.failure);
  const flushed = flush();
  if (Result.isFailure(flushed)) return Result.fail(flushed.failure);
  if (boundary !== undefined) {
    notCarried(
      b,
      boundary.line,
      "system/compact_boundary",
      "compact boundary without the summary that should follow it",
    );
  }
  const closed = closeAnsweredTurn(b);
  if (Result.isFailure(closed)) return Result.fail(closed.failure);
  return Result.succeed({
    header: importedHeader(file, sessionId, createdAt, {
      tool: "claude-code",
      file: fileName(file),
      ...(version === undefined ? {} : { version }),
      ...(cwd === undefined ? {} : { cwd }),
    }),
    ...(version === undefined ? {} : { formatVersion: version }),
    read: read.success,
  });
};
