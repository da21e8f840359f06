/**
 * The adapter to effect's own prompt: derived messages as an `effect/ai`
 * `Prompt.Prompt`, for any `LanguageModel` a harness provides.
 *
 * @module
 */
import * as Prompt from "effect/ai/Prompt";
import type {
  FileBlock,
  ImageBlock,
  Message,
  ToolResultBlock,
} from "../core/message.ts";
import {
  type AdapterOptions,
  type AttachmentResolver,
  EMPTY_CONVERSATION_TEXT,
  joinText,
  omittedText,
  parseToolArguments,
  resolverOf,
} from "../providers/content.ts";
import { pairToolCalls } from "../providers/pairing.ts";

const filePart = (
  block: ImageBlock | FileBlock,
  resolve: AttachmentResolver,
): Prompt.FilePart | Prompt.TextPart => {
  const resolved = resolve(block);
  if (resolved === undefined) {
    return Prompt.makePart("text", { text: omittedText(block, resolved) });
  }
  const fallback = block.type === "image"
    ? "image/*"
    : "application/octet-stream";
  return Prompt.makePart("file", {
    mediaType: resolved.mediaType ?? fallback,
    data: resolved.kind === "inline" ? resolved.data : new URL(resolved.url),
    ...(resolved.fileName === undefined ? {} : { fileName: resolved.fileName }),
  });
};

const toolResultPart = (
  block: ToolResultBlock,
  name: string,
  resolve: AttachmentResolver,
): Prompt.ToolResultPart => {
  const media = block.content.some((b) => b.type !== "text");
  return Prompt.makePart("tool-result", {
    id: block.toolCallId,
    name,
    isFailure: block.isError === true,
    result: block.content.filter((b) => b.type === "text").map((b) => b.text)
      .join("\n"),
    providerExecuted: false,
    ...(media
      ? {
        modelOutput: block.content.map((b) =>
          b.type === "text"
            ? Prompt.makePart("text", { text: b.text })
            : filePart(b, resolve)
        ),
      }
      : {}),
  });
};

/**
 * Builds an `effect/ai` prompt from derived messages, after
 * {@link pairToolCalls}. System messages become system messages (their
 * text joined; empty ones left out); tool results become `tool` messages
 * (consecutive results share one) whose parts carry the tool name looked
 * up through the call id, `isFailure` from `isError`, the text as `result`
 * and, when the result holds images or files, every block as
 * `modelOutput`. Tool arguments are parsed with {@link parseToolArguments}.
 * Images and files become file parts through the attachment resolver, or a
 * placeholder text when it cannot resolve them; reasoning is kept in
 * assistant messages and left out elsewhere; messages left empty are
 * dropped. A prompt with nothing but system messages left gets one user
 * message of `EMPTY_CONVERSATION_TEXT`, since no provider takes a request
 * without a turn.
 *
 * @param messages Derived messages, in order.
 * @param options How attachments are resolved.
 * @returns The prompt.
 *
 * @example A question, a call and its result
 * ```ts
 * import { toPrompt } from "@palimpsest/session/ai";
 * import type { Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const messages: Message[] = [
 *   { id: "u0", role: "user", source: { kind: "user" },
 *     content: [{ type: "text", text: "list the files" }] },
 *   { id: "a1", role: "assistant", source: { kind: "model", provider: "p", model: "m" },
 *     content: [{ type: "tool-call", id: "c1", name: "ls", arguments: '{"dir":"."}' }] },
 *   { id: "r2", role: "user", source: { kind: "tool", callId: "c1" },
 *     content: [{ type: "tool-result", toolCallId: "c1", content: [{ type: "text", text: "a.txt" }] }] },
 * ];
 * const prompt = toPrompt(messages);
 * assert.deepEqual(prompt.content.map((m) => m.role), ["user", "assistant", "tool"]);
 * ```
 */
export function toPrompt(
  messages: ReadonlyArray<Message>,
  options?: AdapterOptions,
): Prompt.Prompt {
  const resolve = resolverOf(options);
  const names = new Map<string, string>();
  const out: Prompt.Message[] = [];
  let results: Prompt.ToolResultPart[] | undefined;
  const endResults = (): void => {
    if (results === undefined) return;
    out.push(Prompt.makeMessage("tool", { content: results }));
    results = undefined;
  };
  for (const message of pairToolCalls(messages).messages) {
    if (message.role === "system") {
      endResults();
      const text = joinText(message.content);
      if (text !== "") {
        out.push(Prompt.makeMessage("system", { content: text }));
      }
      continue;
    }
    if (message.role === "assistant") {
      endResults();
      const parts: Prompt.AssistantMessagePart[] = [];
      for (const block of message.content) {
        switch (block.type) {
          case "text":
            if (block.text !== "") {
              parts.push(Prompt.makePart("text", { text: block.text }));
            }
            break;
          case "reasoning":
            if (block.text !== "") {
              parts.push(Prompt.makePart("reasoning", { text: block.text }));
            }
            break;
          case "image":
          case "file":
            parts.push(filePart(block, resolve));
            break;
          case "tool-call":
            names.set(block.id, block.name);
            parts.push(Prompt.makePart("tool-call", {
              id: block.id,
              name: block.name,
              params: parseToolArguments(block.arguments),
              providerExecuted: false,
            }));
            break;
          case "tool-result":
            break;
        }
      }
      if (parts.length > 0) {
        out.push(Prompt.makeMessage("assistant", { content: parts }));
      }
      continue;
    }
    const first = message.content[0];
    if (message.content.length === 1 && first?.type === "tool-result") {
      results ??= [];
      results.push(
        toolResultPart(first, names.get(first.toolCallId) ?? "", resolve),
      );
      continue;
    }
    endResults();
    const parts: Prompt.UserMessagePart[] = [];
    for (const block of message.content) {
      if (block.type === "text") {
        if (block.text !== "") {
          parts.push(Prompt.makePart("text", { text: block.text }));
        }
      } else if (block.type === "image" || block.type === "file") {
        parts.push(filePart(block, resolve));
      }
    }
    if (parts.length > 0) {
      out.push(Prompt.makeMessage("user", { content: parts }));
    }
  }
  endResults();
  if (!out.some((m) => m.role !== "system")) {
    out.push(Prompt.makeMessage("user", {
      content: [Prompt.makePart("text", { text: EMPTY_CONVERSATION_TEXT })],
    }));
  }
  return Prompt.fromMessages(out);
}
