/**
 * What the exporters write, read off a session once: the messages the
 * model sees (the surface, in order), each with what a tool's file records
 * beside it (its time, the model that wrote an answer, how the answer
 * stopped, a reasoning signature), the compaction summaries told apart from
 * other messages, and the calls by id. Every exporter reads this and nothing
 * else, so that what a tool gets is what the library derives.
 *
 * @module
 * @internal
 */
import type {
  ContentBlock,
  Message,
  ToolResultContentBlock,
} from "../core/message.ts";
import type { SessionHeader } from "../session/session.ts";
import type { Session } from "../session/session.ts";
import { deriveMessagesWithSources } from "../session/derive.ts";
import { surfaceEvent } from "../surface/mod.ts";
import { isSummary } from "../history/surface_nodes.ts";
import { isRecord, str } from "./values.ts";

/** How an answer ended, in pi's words (the other tools say less). */
export type StopReason = "stop" | "toolUse" | "aborted" | "error";

/** One message as the exporters see it. */
export type ExportItem =
  | {
    readonly kind: "system";
    readonly id: string;
    readonly time: number;
    readonly text: string;
  }
  | {
    /** A compaction's summary: `text` as the model is sent it. */
    readonly kind: "summary";
    readonly id: string;
    readonly time: number;
    readonly text: string;
  }
  | {
    readonly kind: "user";
    readonly id: string;
    readonly time: number;
    readonly content: ReadonlyArray<ContentBlock>;
    /** The source's plugin (`codex/developer`), when a plugin wrote it. */
    readonly plugin: string | undefined;
  }
  | {
    readonly kind: "assistant";
    readonly id: string;
    readonly time: number;
    readonly content: ReadonlyArray<ContentBlock>;
    readonly provider: string;
    readonly model: string;
    readonly usage: unknown;
    readonly stop: StopReason;
    readonly errorMessage: string | undefined;
    /** The stream's chunks (signatures, encrypted reasoning, hosted tool items). */
    readonly stream: ReadonlyArray<unknown>;
  }
  | {
    readonly kind: "result";
    readonly id: string;
    readonly time: number;
    readonly callId: string;
    /** The called tool's name ("" when its call is not on the surface). */
    readonly name: string;
    readonly content: ReadonlyArray<ToolResultContentBlock>;
    readonly isError: boolean;
  };

/** A session as the exporters read it. */
export interface Conversation {
  /** The session's header. */
  readonly header: SessionHeader;
  /** The messages, in the order the model is sent them. */
  readonly items: ReadonlyArray<ExportItem>;
  /** The working folder the session ran in, when its header says. */
  readonly cwd: string | undefined;
  /** The model of the last answer (or `undefined` before any). */
  readonly model:
    | { readonly provider: string; readonly model: string }
    | undefined;
}

const textOf = (content: ReadonlyArray<ContentBlock>): string =>
  content.flatMap((b) => b.type === "text" ? [b.text] : []).join("\n");

/** How an assistant message stopped, from what its event records. */
const stopOf = (
  message: Message,
  interrupted: boolean,
  stream: ReadonlyArray<unknown>,
): { stop: StopReason; errorMessage: string | undefined } => {
  const error = stream.find((c) => isRecord(c) && c.type === "error");
  if (isRecord(error)) {
    return {
      stop: error.stopReason === "aborted" ? "aborted" : "error",
      errorMessage: str(error.errorMessage),
    };
  }
  if (interrupted) return { stop: "aborted", errorMessage: undefined };
  const calls = message.content.some((b) => b.type === "tool-call");
  return { stop: calls ? "toolUse" : "stop", errorMessage: undefined };
};

/** The working folder an imported or harness header names. */
const cwdOf = (header: SessionHeader): string | undefined => {
  const meta = header.meta ?? {};
  const from = meta.importedFrom;
  return str(meta.cwd) ?? (isRecord(from) ? str(from.cwd) : undefined);
};

/**
 * Reads a session for the exporters: its derived messages with what their
 * events record.
 *
 * @param session The session.
 * @returns The conversation.
 */
export const conversationOf = (session: Session): Conversation => {
  const items: ExportItem[] = [];
  const names = new Map<string, string>();
  let model: Conversation["model"] = undefined;
  for (const { seq, message } of deriveMessagesWithSources(session.surface)) {
    const event = surfaceEvent(session.surface, seq);
    if (event === undefined) continue;
    const time = event.time;
    const id = message.id;
    switch (event.type) {
      case "system/message":
        items.push({ kind: "system", id, time, text: textOf(message.content) });
        break;
      case "user/message": {
        if (isSummary(event)) {
          items.push({
            kind: "summary",
            id,
            time,
            text: textOf(message.content),
          });
          break;
        }
        const source = message.source;
        items.push({
          kind: "user",
          id,
          time,
          content: message.content,
          plugin: source.kind === "plugin" ? str(source.plugin) : undefined,
        });
        break;
      }
      case "assistant/message": {
        const stream = event.data.stream.map((c) => c.chunk);
        const source = event.data.message.source;
        for (const b of message.content) {
          if (b.type === "tool-call") names.set(b.id, b.name);
        }
        model = { provider: source.provider, model: source.model };
        items.push({
          kind: "assistant",
          id,
          time,
          content: message.content,
          provider: source.provider,
          model: source.model,
          usage: event.data.usage,
          ...stopOf(message, event.data.interrupted === true, stream),
          stream,
        });
        break;
      }
      case "tool/result": {
        for (const b of message.content) {
          if (b.type !== "tool-result") continue;
          items.push({
            kind: "result",
            id,
            time,
            callId: b.toolCallId,
            name: names.get(b.toolCallId) ?? "",
            content: b.content,
            isError: b.isError === true,
          });
        }
        break;
      }
    }
  }
  return { header: session.header, items, cwd: cwdOf(session.header), model };
};

/** A conversation cut at its last compaction summary. */
export interface AtSummary {
  /** The messages before the summary (kept by the compaction, or the system head). */
  readonly before: ReadonlyArray<ExportItem>;
  /** The last summary, if the surface has one. */
  readonly summary: Extract<ExportItem, { kind: "summary" }> | undefined;
  /** The messages after it (or every message, without a summary). */
  readonly after: ReadonlyArray<ExportItem>;
}

/**
 * Cuts the messages at the last summary: a tool records one compaction in
 * effect, so an earlier summary still on the surface is written as the user
 * message the model is sent.
 *
 * @param items The messages.
 * @returns The messages before the last summary, the summary and after it.
 */
export const atLastSummary = (items: ReadonlyArray<ExportItem>): AtSummary => {
  // A loop, not `findLastIndex`: the Node build targets ES2022.
  let last = -1;
  items.forEach((i, at) => {
    if (i.kind === "summary") last = at;
  });
  const plain = (i: ExportItem): ExportItem =>
    i.kind === "summary"
      ? {
        kind: "user",
        id: i.id,
        time: i.time,
        content: [{ type: "text", text: i.text }],
        plugin: "compaction",
      }
      : i;
  const summary = items[last];
  if (last < 0 || summary === undefined || summary.kind !== "summary") {
    return { before: [], summary: undefined, after: items.map(plain) };
  }
  return {
    before: items.slice(0, last).map(plain),
    summary,
    after: items.slice(last + 1),
  };
};
