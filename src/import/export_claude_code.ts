/**
 * A session as a Claude Code transcript, the file `claude --resume ID`
 * resumes from `~/.claude/projects/<folder>/ID.jsonl`.
 *
 * - Every line carries Claude Code's envelope (`uuid`, the `parentUuid` of
 *   the line before, `sessionId`, `cwd`, `version`, `userType`,
 *   `isSidechain`, `timestamp`); line uuids are made from the session id
 *   and the line, so an export is the same file every time.
 * - User messages are `user` lines (a message a plugin wrote is `isMeta`);
 *   an assistant message is one `assistant` line (`message.id`, model,
 *   `thinking` with its signature, `text`, `tool_use` with its input as an
 *   object, `stop_reason`); each tool result is a `user` line with one
 *   `tool_result` block (`is_error` kept).
 * - The last compaction is Claude Code's own: a `system` `compact_boundary`
 *   line (no parent: Claude Code reads nothing before it) and the summary
 *   as the `isCompactSummary` user message after it; messages the
 *   compaction kept before its summary follow the summary.
 * - Claude Code keeps no system prompt in its transcript: a system message
 *   is not carried, and said so.
 *
 * @module
 * @internal
 */
import type { ContentBlock, ToolResultContentBlock } from "../core/message.ts";
import {
  atLastSummary,
  type Conversation,
  type ExportItem,
} from "./export_conversation.ts";
import type { Exporter, ExportNote } from "./exporter.ts";
import {
  argumentsValue,
  dataContent,
  isoOf,
  isUuid,
  sessionUuid,
  shortIdOf,
  signaturesOf,
  uuidOf,
} from "./export_values.ts";
import { isRecord } from "./values.ts";

/** The Claude Code version whose transcript format this writes. */
export const CLAUDE_CODE_VERSION = "2.1.337";

/** A content as Claude Code's: one text as a string, else blocks. */
const contentOf = (
  content: ReadonlyArray<ContentBlock | ToolResultContentBlock>,
  lost: (note: string) => void,
): unknown => {
  const first = content[0];
  if (content.length === 1 && first?.type === "text") return first.text;
  return dataContent(content, "Claude Code", (image) => ({
    type: "image",
    source: { type: "base64", media_type: image.mimeType, data: image.data },
  }), lost);
};

/** An assistant message's blocks as Claude Code's. */
const assistantBlocks = (
  item: Extract<ExportItem, { kind: "assistant" }>,
  notCarried: ExportNote[],
): unknown[] => {
  const signatures = signaturesOf(item.stream);
  return item.content.flatMap((b, index): unknown[] => {
    switch (b.type) {
      case "reasoning":
        return [{
          type: "thinking",
          thinking: b.text,
          signature: signatures.get(index) ?? "",
        }];
      case "text":
        return [{ type: "text", text: b.text }];
      case "tool-call": {
        const input = argumentsValue(b.arguments);
        if (!isRecord(input)) {
          notCarried.push({
            messageId: item.id,
            note: `the arguments of call ${
              JSON.stringify(b.id)
            } are no JSON object: Claude Code's input is one, so they go under "input"`,
          });
        }
        return [{
          type: "tool_use",
          id: b.id,
          name: b.name,
          input: isRecord(input) ? input : { input },
        }];
      }
      default:
        return [];
    }
  });
};

/** Claude Code's usage, from an answer that recorded it; else zeros. */
const usageOf = (usage: unknown): unknown =>
  isRecord(usage) && typeof usage.input_tokens === "number"
    ? usage
    : { input_tokens: 0, output_tokens: 0 };

/** Where Claude Code keeps the transcripts of a working folder. */
/** A `user` line's record: a prompt or tool results, as Claude Code writes both. */
const userRecord = (content: unknown): Record<string, unknown> => ({
  type: "user",
  message: { role: "user", content },
});

const folderOf = (cwd: string): string => cwd.replace(/[^a-zA-Z0-9]/g, "-");

/** A conversation as a Claude Code transcript. */
export const exportClaudeCode: Exporter = (c: Conversation) => {
  const sessionId = sessionUuid(c.header.id);
  const cwd = c.cwd ?? "/";
  const notCarried: ExportNote[] = [];
  const records: unknown[] = [];
  const lost = (messageId: string) => (note: string): void => {
    notCarried.push({ messageId, note });
  };
  const used = new Set<string>();
  let parentUuid: string | null = null;
  const line = (
    wanted: string,
    time: number,
    body: Readonly<Record<string, unknown>>,
    parent: string | null = parentUuid,
  ): void => {
    const uuid = isUuid(wanted) && !used.has(wanted)
      ? wanted
      : uuidOf(`${sessionId}:${records.length}`);
    used.add(uuid);
    records.push({
      parentUuid: parent,
      isSidechain: false,
      userType: "external",
      cwd,
      sessionId,
      version: CLAUDE_CODE_VERSION,
      gitBranch: "",
      ...body,
      uuid,
      timestamp: isoOf(time),
    });
    parentUuid = uuid;
  };
  const write = (item: ExportItem): void => {
    switch (item.kind) {
      case "system":
        notCarried.push({
          messageId: item.id,
          note:
            "Claude Code keeps no system prompt in its transcript: it sends its own",
        });
        return;
      case "summary":
        return;
      case "user":
        line(item.id, item.time, {
          ...userRecord(contentOf(item.content, lost(item.id))),
          ...(item.plugin === undefined ? {} : { isMeta: true }),
        });
        return;
      case "assistant": {
        const calls = item.content.some((b) => b.type === "tool-call");
        line("", item.time, {
          type: "assistant",
          message: {
            id: item.id.startsWith("msg_")
              ? item.id
              : `msg_${shortIdOf(item.id)}${shortIdOf(`${item.id}:2`)}`,
            type: "message",
            role: "assistant",
            model: item.model,
            content: assistantBlocks(item, notCarried),
            stop_reason: calls ? "tool_use" : "end_turn",
            stop_sequence: null,
            usage: usageOf(item.usage),
          },
        });
        return;
      }
      case "result":
        line(
          item.id,
          item.time,
          userRecord([{
            type: "tool_result",
            tool_use_id: item.callId,
            content: contentOf(item.content, lost(item.id)),
            is_error: item.isError,
          }]),
        );
        return;
    }
  };
  const cut = atLastSummary(c.items);
  if (cut.summary !== undefined) {
    const summary = cut.summary;
    line("", summary.time, {
      type: "system",
      subtype: "compact_boundary",
      content: "Conversation compacted",
      isMeta: false,
      level: "info",
      logicalParentUuid: null,
      compactMetadata: { trigger: "manual", preTokens: 0 },
    }, null);
    line(summary.id, summary.time, {
      ...userRecord(summary.text),
      isCompactSummary: true,
      isVisibleInTranscriptOnly: true,
    });
    if (cut.before.some((i) => i.kind !== "system")) {
      notCarried.push({
        messageId: summary.id,
        note:
          "Claude Code sends a compaction's summary first: the messages it kept before the summary follow it",
      });
    }
  }
  cut.before.forEach(write);
  cut.after.forEach(write);
  return {
    id: sessionId,
    path: `.claude/projects/${folderOf(cwd)}/${sessionId}.jsonl`,
    records,
    notCarried,
  };
};
