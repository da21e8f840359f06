/**
 * The OpenAI Chat Completions adapter and its validator.
 *
 * The shapes here are the parts of `ChatCompletionMessageParam` the adapter
 * fills; the tests check them against the official SDK's types.
 *
 * @module
 */
import type { ContentBlock, Message } from "../../core/message.ts";
import {
  type AdapterOptions,
  type AttachmentResolver,
  callLedger,
  checkToolsDefined,
  dataUrl,
  type DefinedTools,
  EMPTY_CONVERSATION_TEXT,
  joinText,
  omittedText,
  type RequestViolation,
  resolverOf,
  textWithPlaceholders,
  violation,
} from "../content.ts";
import { pairToolCalls } from "../pairing.ts";

/** A text part. */
export interface OpenAIChatTextPart {
  /** The kind. */
  type: "text";
  /** The text. */
  text: string;
}

/** An image part: a URL or a `data:` URL. */
export interface OpenAIChatImagePart {
  /** The kind. */
  type: "image_url";
  /** The image. */
  image_url: { url: string };
}

/** A file part: inline bytes as a `data:` URL. */
export interface OpenAIChatFilePart {
  /** The kind. */
  type: "file";
  /** The file. */
  file: { file_data: string; filename?: string };
}

/** A part of a user message. */
export type OpenAIChatUserPart =
  | OpenAIChatTextPart
  | OpenAIChatImagePart
  | OpenAIChatFilePart;

/** A system message. */
export interface OpenAIChatSystemMessage {
  /** The role. */
  role: "system";
  /** The text. */
  content: string;
}

/** A user message. */
export interface OpenAIChatUserMessage {
  /** The role. */
  role: "user";
  /** The parts. */
  content: Array<OpenAIChatUserPart>;
}

/** A function call of an assistant message. */
export interface OpenAIChatToolCall {
  /** The call id. */
  id: string;
  /** The kind. */
  type: "function";
  /** The function and its raw JSON arguments. */
  function: { name: string; arguments: string };
}

/** An assistant message. */
export interface OpenAIChatAssistantMessage {
  /** The role. */
  role: "assistant";
  /** The text, or `null` when the message only calls tools. */
  content: string | null;
  /** The calls, when there are any. */
  tool_calls?: Array<OpenAIChatToolCall>;
}

/** A tool result. */
export interface OpenAIChatToolMessage {
  /** The role. */
  role: "tool";
  /** The id of the call it answers. */
  tool_call_id: string;
  /** The result's text. */
  content: string;
}

/** A Chat Completions message. */
export type OpenAIChatMessage =
  | OpenAIChatSystemMessage
  | OpenAIChatUserMessage
  | OpenAIChatAssistantMessage
  | OpenAIChatToolMessage;

/** The `messages` of a Chat Completions request. */
export interface OpenAIChatRequest {
  /** The messages. */
  messages: Array<OpenAIChatMessage>;
}

const userPart = (
  block: ContentBlock & { type: "image" | "file" },
  resolve: AttachmentResolver,
): OpenAIChatUserPart => {
  const resolved = resolve(block);
  if (resolved !== undefined) {
    if (block.type === "image") {
      return {
        type: "image_url",
        image_url: {
          url: resolved.kind === "url" ? resolved.url : dataUrl(resolved),
        },
      };
    }
    if (resolved.kind === "inline") {
      return {
        type: "file",
        file: {
          file_data: dataUrl(resolved),
          ...(resolved.fileName === undefined
            ? {}
            : { filename: resolved.fileName }),
        },
      };
    }
  }
  return { type: "text", text: omittedText(block, resolved) };
};

/**
 * Builds the `messages` of an OpenAI Chat Completions request from derived
 * messages, after {@link pairToolCalls}.
 *
 * - System messages stay in place as `system` messages (their text).
 * - Each tool result becomes a `tool` message right after the assistant
 *   message that made the call (the text of the result; images and files as
 *   placeholders, since tool messages take text only).
 * - Calls become `tool_calls` with their raw `arguments` as produced (an
 *   empty string is sent as `{}`).
 * - User images become `image_url` parts (URL or `data:` URL), inline files
 *   `file` parts; a file given by URL becomes a placeholder text. Reasoning
 *   is left out (Chat Completions takes none), and so are empty messages.
 * - A conversation with nothing but system messages left (none at all, or
 *   only empty or blank ones) gets one user message of
 *   `EMPTY_CONVERSATION_TEXT`.
 *
 * The result satisfies {@link validateOpenAIChat} for every input.
 *
 * @param messages Derived messages, in order.
 * @param options How attachments are resolved.
 * @returns The request's `messages`.
 *
 * @example A call and its result
 * ```ts
 * import { toOpenAIChat } from "@palimpsest/session/providers";
 * import type { Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const messages: Message[] = [
 *   { id: "u0", role: "user", source: { kind: "user" }, content: [{ type: "text", text: "ls" }] },
 *   { id: "a1", role: "assistant", source: { kind: "model", provider: "p", model: "m" },
 *     content: [{ type: "tool-call", id: "c1", name: "ls", arguments: "{}" }] },
 *   { id: "r2", role: "user", source: { kind: "tool", callId: "c1" },
 *     content: [{ type: "tool-result", toolCallId: "c1", content: [{ type: "text", text: "a.txt" }] }] },
 * ];
 * assert.deepEqual(toOpenAIChat(messages).messages.slice(1), [
 *   { role: "assistant", content: null,
 *     tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: "{}" } }] },
 *   { role: "tool", tool_call_id: "c1", content: "a.txt" },
 * ]);
 * ```
 */
export function toOpenAIChat(
  messages: ReadonlyArray<Message>,
  options?: AdapterOptions,
): OpenAIChatRequest {
  const resolve = resolverOf(options);
  const out: OpenAIChatMessage[] = [];
  for (const message of pairToolCalls(messages).messages) {
    if (message.role === "system") {
      const text = joinText(message.content);
      if (text !== "") out.push({ role: "system", content: text });
      continue;
    }
    if (message.role === "assistant") {
      const text = textWithPlaceholders(message.content, resolve);
      const calls: OpenAIChatToolCall[] = [];
      for (const b of message.content) {
        if (b.type !== "tool-call") continue;
        calls.push({
          id: b.id,
          type: "function",
          function: {
            name: b.name,
            arguments: b.arguments === "" ? "{}" : b.arguments,
          },
        });
      }
      if (text === "" && calls.length === 0) continue;
      out.push({
        role: "assistant",
        content: text === "" ? null : text,
        ...(calls.length === 0 ? {} : { tool_calls: calls }),
      });
      continue;
    }
    const parts: OpenAIChatUserPart[] = [];
    for (const b of message.content) {
      if (b.type === "tool-result") {
        out.push({
          role: "tool",
          tool_call_id: b.toolCallId,
          content: textWithPlaceholders(b.content, resolve),
        });
      } else if (b.type === "text") {
        if (b.text !== "") parts.push({ type: "text", text: b.text });
      } else if (b.type === "image" || b.type === "file") {
        parts.push(userPart(b, resolve));
      }
    }
    if (parts.length > 0) out.push({ role: "user", content: parts });
  }
  if (!out.some((m) => m.role !== "system")) {
    out.push({
      role: "user",
      content: [{ type: "text", text: EMPTY_CONVERSATION_TEXT }],
    });
  }
  return { messages: out };
}

/**
 * Checks a Chat Completions request against OpenAI's documented rules: an
 * assistant message with `tool_calls` must be followed by `tool` messages
 * answering each call id before any other message; a `tool` message must
 * answer a call of the assistant message it follows ("messages with role
 * 'tool' must be a response to a preceding message with 'tool_calls'"),
 * once; call ids are unique; an assistant message has text or calls; there
 * is a message besides the system messages; a request with calls or tool
 * messages defines tools (a non-empty `tools`).
 *
 * @param request The request's `messages` (and `tools`).
 * @returns The broken rules, in order; empty when the request is valid.
 *
 * @example A tool message without its call
 * ```ts
 * import { validateOpenAIChat } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * const violations = validateOpenAIChat({
 *   messages: [
 *     { role: "user", content: [{ type: "text", text: "ls" }] },
 *     { role: "tool", tool_call_id: "c1", content: "a.txt" },
 *   ],
 *   tools: [{ type: "function", function: { name: "ls", parameters: {} } }],
 * });
 * assert.deepEqual(violations.map((v) => v._tag), ["ToolResultWithoutCall"]);
 * ```
 */
export function validateOpenAIChat(
  request: OpenAIChatRequest & DefinedTools,
): ReadonlyArray<RequestViolation> {
  const found: RequestViolation[] = [];
  const calls = callLedger(found);
  let firstTool = -1;
  request.messages.forEach((message, i) => {
    if (message.role === "tool") {
      if (firstTool < 0) firstTool = i;
      calls.answer(message.tool_call_id, i);
      return;
    }
    calls.close();
    if (message.role === "assistant") {
      const made = message.tool_calls ?? [];
      if (message.content === null && made.length === 0) {
        found.push(violation("AssistantWithoutContent", i));
      }
      if (made.length > 0 && firstTool < 0) firstTool = i;
      for (const call of made) calls.call(call.id, i);
    } else if (message.content.length === 0) {
      found.push(violation("EmptyContent", i));
    }
  });
  calls.close();
  if (request.messages.every((m) => m.role === "system")) {
    found.push(violation("EmptyConversation", request.messages.length));
  }
  checkToolsDefined(found, firstTool, request.tools);
  return found;
}
