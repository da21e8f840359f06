/**
 * A session as a pi session file (format version 3), the file
 * `pi --session FILE` resumes.
 *
 * - The header `{type: "session", version: 3, id, timestamp, cwd}`; every
 *   entry has an `id` and the `parentId` of the entry before it (one
 *   branch: the surface is one path). Entry ids are the message ids.
 * - A `model_change` entry first names the model of the last answer.
 * - User messages are `message` entries (role `user`); a message a plugin
 *   wrote is a `custom_message` of that plugin, which pi sends as a user
 *   message. Assistant messages keep their reasoning (with its signature),
 *   text and `toolCall`s (arguments as objects), their model, usage and
 *   stop reason; tool results are `toolResult` messages with the tool's name.
 * - The last compaction is a `compaction` entry whose `summary` pi wraps
 *   when it sends it (a summary pi already wrapped is unwrapped first);
 *   pi sends the summary first, then the entries from `firstKeptEntryId`,
 *   so messages the compaction kept before its summary follow it.
 * - pi keeps no system prompt in its file (it builds its own): a system
 *   message is not carried, and said so.
 *
 * @module
 * @internal
 */
import type { ContentBlock } from "../core/message.ts";
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
  sessionUuid,
  shortIdOf,
  signaturesOf,
} from "./export_values.ts";
import { isRecord, str } from "./values.ts";
import { compactionText } from "./pi_content.ts";

/** pi's compaction text around a summary, taken off again. */
const unwrapSummary = (text: string): string => {
  const wrapped = compactionText("\u0000");
  const [head = "", tail = ""] = wrapped.split("\u0000");
  return text.startsWith(head) && text.endsWith(tail) &&
      text.length >= head.length + tail.length
    ? text.slice(head.length, text.length - tail.length)
    : text;
};

/** The API pi names beside a provider's answers. */
const apiOf = (provider: string): string =>
  provider === "anthropic"
    ? "anthropic-messages"
    : provider === "openai"
    ? "openai-responses"
    : provider === "google"
    ? "google-generative-ai"
    : "openai-completions";

const zeroUsage = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** Usage as pi records it: pi's own, else zeros (pi sums it for its footer). */
const usageOf = (usage: unknown): unknown =>
  isRecord(usage) && typeof usage.input === "number" &&
    typeof usage.output === "number" && isRecord(usage.cost)
    ? usage
    : zeroUsage;

/** User content as pi's blocks; an image pi cannot hold (a link) is noted. */
const userBlocks = (
  content: ReadonlyArray<ContentBlock>,
  lost: (note: string) => void,
): unknown[] =>
  dataContent(content, "pi", (image) => ({ type: "image", ...image }), lost);

/** An assistant message's blocks as pi's: its thinking keeps its signature. */
const assistantBlocks = (
  item: Extract<ExportItem, { kind: "assistant" }>,
): unknown[] => {
  const signatures = signaturesOf(item.stream);
  return item.content.flatMap((b, index): unknown[] => {
    switch (b.type) {
      case "reasoning": {
        const signature = signatures.get(index);
        return [{
          type: "thinking",
          thinking: b.text,
          ...(signature === undefined ? {} : { thinkingSignature: signature }),
        }];
      }
      case "text":
        return [{ type: "text", text: b.text }];
      case "tool-call":
        return [{
          type: "toolCall",
          id: b.id,
          name: b.name,
          arguments: argumentsValue(b.arguments),
        }];
      default:
        return [];
    }
  });
};

/** Where pi keeps the sessions of a working folder, as pi names it. */
const folderOf = (cwd: string): string =>
  `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;

/** A conversation as a pi session file. */
export const exportPi: Exporter = (c: Conversation) => {
  const id = sessionUuid(c.header.id);
  const cwd = c.cwd ?? "/";
  const started = isoOf(c.header.createdAt);
  const notCarried: ExportNote[] = [];
  const records: unknown[] = [{
    type: "session",
    version: 3,
    id,
    timestamp: started,
    cwd,
  }];
  const lost = (messageId: string) => (note: string): void => {
    notCarried.push({ messageId, note });
  };
  const used = new Set<string>();
  let parentId: string | null = null;
  /** Appends an entry under the one before it; gives its id. */
  const entry = (
    wanted: string,
    time: number,
    body: Readonly<Record<string, unknown>>,
  ): string => {
    let entryId = wanted === "" || used.has(wanted)
      ? shortIdOf(`${id}:${used.size}`)
      : wanted;
    while (used.has(entryId)) entryId = shortIdOf(`${entryId}:again`);
    used.add(entryId);
    records.push({
      ...body,
      id: entryId,
      parentId,
      timestamp: isoOf(time),
    });
    parentId = entryId;
    return entryId;
  };
  if (c.model !== undefined) {
    entry("", c.header.createdAt, {
      type: "model_change",
      provider: c.model.provider,
      modelId: c.model.model,
    });
  }
  const write = (item: ExportItem): string | undefined => {
    switch (item.kind) {
      case "system":
        notCarried.push({
          messageId: item.id,
          note:
            "pi keeps no system prompt in its session file: it sends its own",
        });
        return undefined;
      case "summary":
        return undefined;
      case "user":
        if (item.plugin === undefined) {
          return entry(item.id, item.time, {
            type: "message",
            message: {
              role: "user",
              content: userBlocks(item.content, lost(item.id)),
              timestamp: item.time,
            },
          });
        }
        return entry(item.id, item.time, {
          type: "custom_message",
          customType: item.plugin.replace(/^pi\//, ""),
          content: userBlocks(item.content, lost(item.id)),
          display: true,
        });
      case "assistant":
        return entry(item.id, item.time, {
          type: "message",
          message: {
            role: "assistant",
            content: assistantBlocks(item),
            api: apiOf(item.provider),
            provider: item.provider,
            model: item.model,
            usage: usageOf(item.usage),
            stopReason: item.stop,
            ...(item.errorMessage === undefined
              ? {}
              : { errorMessage: item.errorMessage }),
            timestamp: item.time,
          },
        });
      case "result":
        return entry(item.id, item.time, {
          type: "message",
          message: {
            role: "toolResult",
            toolCallId: item.callId,
            toolName: item.name,
            content: userBlocks(item.content, lost(item.id)),
            isError: item.isError,
            timestamp: item.time,
          },
        });
    }
  };
  const cut = atLastSummary(c.items);
  const kept = cut.before.map(write).find((e) => e !== undefined);
  if (cut.summary !== undefined) {
    const summary = cut.summary;
    // pi sends the summary, then the entries from the first kept one up to
    // the compaction, then those after it: with nothing kept before it, the
    // first kept entry is the one that follows.
    const compactionIndex = records.length;
    entry("", summary.time, {
      type: "compaction",
      summary: unwrapSummary(summary.text),
      firstKeptEntryId: kept ?? "",
      tokensBefore: 0,
    });
    const firstAfter = cut.after.map(write).find((e) => e !== undefined);
    const compaction = records[compactionIndex];
    if (kept === undefined && isRecord(compaction)) {
      records[compactionIndex] = {
        ...compaction,
        firstKeptEntryId: firstAfter ?? str(compaction.id) ?? "",
      };
    }
    if (kept !== undefined) {
      notCarried.push({
        messageId: summary.id,
        note:
          "pi sends a compaction's summary first: the messages it kept before the summary follow it",
      });
    }
  } else {
    cut.after.forEach(write);
  }
  const stamp = started.replace(/[:.]/g, "-");
  return {
    id,
    path: `.pi/agent/sessions/${folderOf(cwd)}/${stamp}_${id}.jsonl`,
    records,
    notCarried,
  };
};
