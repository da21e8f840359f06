/**
 * A session as a Codex rollout, the file `codex resume ID` (and
 * `codex exec resume ID`) resumes from
 * `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-ID.jsonl`.
 *
 * - `session_meta` first: the id, the start, the working folder, the
 *   model provider (a session Codex wrote keeps its own; any other names
 *   Codex's default, `openai`, since Codex resumes a thread only with a
 *   provider of its configuration), and the system message as
 *   `base_instructions`.
 * - Each message is a `response_item`: user and developer messages
 *   (`input_text`, `input_image`), an assistant message as its items in
 *   order (`reasoning`, with the encrypted original when the session kept
 *   it; `message` with `output_text`; `function_call`, or `custom_tool_call`
 *   for a call whose arguments are one JSON string, or `local_shell_call`),
 *   and each result as the output item of its call. Hosted tool items the
 *   session kept in a message's stream go back where they were recorded.
 * - The last compaction is Codex's own `compacted` line: its
 *   `replacement_history` is every message up to and including the summary,
 *   which Codex takes as the whole history before what follows.
 * - Codex has no error flag on a tool's output: a failed result keeps its
 *   text, and the flag is reported as not carried.
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
import { imageUrl, isoOf, sessionUuid, textOf } from "./export_values.ts";
import { isRecord, str } from "./values.ts";

/** The Codex version whose rollout format this writes. */
export const CODEX_VERSION = "0.171.0";

/** A kept Codex item of an opaque block (the encrypted compaction). */
const opaqueItem = (block: ContentBlock): unknown =>
  isRecord(block) && isRecord(block.opaque) &&
    block.opaque.api === "openai-responses"
    ? block.opaque.item
    : undefined;

/** User-side content as Codex's input parts. */
const inputParts = (content: ReadonlyArray<ContentBlock>): unknown[] =>
  content.flatMap((b): unknown[] => {
    if (opaqueItem(b) !== undefined) return [];
    if (b.type === "text") return [{ type: "input_text", text: b.text }];
    if (b.type === "image") {
      const url = imageUrl(b.attachment);
      return url === undefined ? [] : [{ type: "input_image", image_url: url }];
    }
    return [];
  });

/** How a call goes to Codex, by its arguments: which output item answers it. */
type CallKind = "function" | "custom" | "local_shell";

const customInput = (args: string): string | undefined => {
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === "string" ? parsed : undefined;
  } catch {
    return undefined;
  }
};

/** The reasoning text of a Codex reasoning item, as the importer reads it. */
const reasoningText = (item: Record<string, unknown>): string => {
  const texts = (u: unknown): string =>
    Array.isArray(u)
      ? u.map((p) => isRecord(p) ? str(p.text) ?? "" : "").join("\n\n")
      : "";
  const raw = texts(item.content);
  return raw !== "" ? raw : texts(item.summary);
};

/** A conversation as a Codex rollout. */
export const exportCodex: Exporter = (c: Conversation) => {
  const id = sessionUuid(c.header.id);
  const cwd = c.cwd ?? "/";
  const started = isoOf(c.header.createdAt);
  const notCarried: ExportNote[] = [];
  const kinds = new Map<string, CallKind>();
  let instructions: string | undefined;
  const assistantItems = (
    item: Extract<ExportItem, { kind: "assistant" }>,
  ): unknown[] => {
    const out: unknown[] = [];
    // The original reasoning items, encrypted content included, stand in
    // for the reasoning blocks they became; one with no readable text
    // became no block and goes first, where Codex records reasoning.
    const originals = item.stream.filter((chunk) =>
      isRecord(chunk) && chunk.type === "reasoning"
    ).filter(isRecord);
    const unread = originals.filter((o) => reasoningText(o) === "");
    out.push(...unread);
    const readable = originals.filter((o) => reasoningText(o) !== "");
    for (const b of item.content) {
      switch (b.type) {
        case "reasoning": {
          const original = readable[0];
          if (original !== undefined && reasoningText(original) === b.text) {
            out.push(readable.shift());
          } else {
            out.push({
              type: "reasoning",
              summary: [{ type: "summary_text", text: b.text }],
              content: null,
              encrypted_content: null,
            });
          }
          break;
        }
        case "text":
          out.push({
            type: "message",
            role: "assistant",
            content: [{ type: "output_text", text: b.text }],
          });
          break;
        case "tool-call": {
          const input = customInput(b.arguments);
          if (b.name === "local_shell") {
            kinds.set(b.id, "local_shell");
            let action: unknown = {};
            try {
              action = JSON.parse(b.arguments);
            } catch {
              action = { command: [b.arguments] };
            }
            out.push({
              type: "local_shell_call",
              call_id: b.id,
              status: "completed",
              action,
            });
          } else if (input !== undefined) {
            kinds.set(b.id, "custom");
            out.push({
              type: "custom_tool_call",
              status: "completed",
              call_id: b.id,
              name: b.name,
              input,
            });
          } else {
            kinds.set(b.id, "function");
            out.push({
              type: "function_call",
              name: b.name,
              arguments: b.arguments,
              call_id: b.id,
            });
          }
          break;
        }
        default:
          break;
      }
    }
    // Hosted tool items (web search) the session kept as they came.
    for (const chunk of item.stream) {
      if (
        isRecord(chunk) && typeof chunk.type === "string" &&
        ["web_search_call", "tool_search_call", "tool_search_output"].includes(
          chunk.type,
        )
      ) {
        out.push(chunk);
      }
    }
    return out;
  };
  const itemsOf = (item: ExportItem): unknown[] => {
    switch (item.kind) {
      case "system":
        if (instructions === undefined) instructions = item.text;
        else {
          notCarried.push({
            messageId: item.id,
            note:
              "a second system message: Codex has one set of base instructions",
          });
        }
        return [];
      case "summary":
        return [{
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: item.text }],
        }];
      case "user": {
        const opaque = item.content.map(opaqueItem).filter((o) =>
          o !== undefined
        );
        const parts = inputParts(item.content);
        const role = item.plugin === "codex/developer" ? "developer" : "user";
        return [
          ...(parts.length === 0 ? [] : [{
            type: "message",
            role,
            content: parts,
          }]),
          ...opaque,
        ];
      }
      case "assistant":
        return assistantItems(item);
      case "result": {
        const kind = kinds.get(item.callId) ?? "function";
        if (item.isError) {
          notCarried.push({
            messageId: item.id,
            note:
              "Codex records no error flag on a tool's output: the result's text is kept",
          });
        }
        const images = item.content.some((b) => b.type === "image");
        const output = images ? inputParts(item.content) : textOf(item.content);
        return [{
          // Codex answers a local shell call with a function call output.
          type: kind === "custom"
            ? "custom_tool_call_output"
            : "function_call_output",
          call_id: item.callId,
          output,
        }];
      }
    }
  };
  const cut = atLastSummary(c.items);
  const lines: Array<{ time: number; type: string; payload: unknown }> = [];
  if (cut.summary !== undefined) {
    const history = [...cut.before, cut.summary].flatMap(itemsOf);
    lines.push({
      time: cut.summary.time,
      type: "compacted",
      payload: { message: cut.summary.text, replacement_history: history },
    });
  } else {
    cut.before.forEach(itemsOf);
  }
  for (const item of cut.after) {
    for (const payload of itemsOf(item)) {
      lines.push({ time: item.time, type: "response_item", payload });
    }
  }
  // Codex resumes a thread only with the provider it names, as a provider
  // id of its own configuration: a session Codex wrote keeps its own; any
  // other names Codex's default.
  const from = isRecord(c.header.meta) ? c.header.meta.importedFrom : undefined;
  const fromCodex = isRecord(from) && from.tool === "codex";
  const provider = fromCodex ? c.model?.provider ?? "openai" : "openai";
  if (!fromCodex && c.model !== undefined && c.model.provider !== "openai") {
    notCarried.push({
      messageId: "",
      note: `the provider ${
        JSON.stringify(c.model.provider)
      } is no Codex provider: the rollout names Codex's default, "openai"`,
    });
  }
  const meta = {
    id,
    timestamp: started,
    cwd,
    originator: "codex_cli_rs",
    cli_version: CODEX_VERSION,
    source: "exec",
    model_provider: provider,
    ...(instructions === undefined
      ? {}
      : { base_instructions: { text: instructions } }),
  };
  const records = [
    { timestamp: started, type: "session_meta", payload: meta },
    ...lines.map((l) => ({
      timestamp: isoOf(l.time),
      type: l.type,
      payload: l.payload,
    })),
  ];
  const day = started.slice(0, 10).replaceAll("-", "/");
  const stamp = started.slice(0, 19).replaceAll(":", "-");
  return {
    id,
    path: `.codex/sessions/${day}/rollout-${stamp}-${id}.jsonl`,
    records,
    notCarried,
  };
};
