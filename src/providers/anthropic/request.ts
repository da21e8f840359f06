/**
 * The Anthropic Messages adapter and its validator.
 *
 * The request shapes here are the parts of Anthropic's `MessageCreateParams`
 * the adapter fills (`system`, `messages`); the tests check them against the
 * official SDK's types.
 *
 * @module
 */
import type {
  ContentBlock,
  Message,
  ToolResultBlock,
} from "../../core/message.ts";
import {
  adapterInput,
  type AdapterOptions,
  type AttachmentResolver,
  checkToolsDefined,
  CONTINUATION_TEXT,
  type DefinedTools,
  EMPTY_CONVERSATION_TEXT,
  forEachTurn,
  type JsonObject,
  omittedText,
  parseToolArguments,
  type RequestViolation,
  sentToolName,
  unansweredCalls,
  violation,
} from "../content.ts";
import { fnv1a } from "../../core/hash.ts";

/** A text block. */
export interface AnthropicTextBlock {
  /** The kind. */
  type: "text";
  /** The text, never blank. */
  text: string;
}

/** The image types Anthropic accepts inline. */
export type AnthropicImageMediaType =
  | "image/jpeg"
  | "image/png"
  | "image/gif"
  | "image/webp";

/** An image block. */
export interface AnthropicImageBlock {
  /** The kind. */
  type: "image";
  /** The bytes or a URL. */
  source:
    | { type: "base64"; media_type: AnthropicImageMediaType; data: string }
    | { type: "url"; url: string };
}

/** A PDF document block. */
export interface AnthropicDocumentBlock {
  /** The kind. */
  type: "document";
  /** The bytes or a URL. */
  source:
    | { type: "base64"; media_type: "application/pdf"; data: string }
    | { type: "url"; url: string };
  /** The file name, when known. */
  title?: string;
}

/** A tool call. */
export interface AnthropicToolUseBlock {
  /** The kind. */
  type: "tool_use";
  /** The call id (letters, digits, `_` and `-`; see {@link anthropicToolId}). */
  id: string;
  /** The tool name. */
  name: string;
  /** The arguments, parsed with `parseToolArguments`. */
  input: JsonObject;
}

/** A tool result. */
export interface AnthropicToolResultBlock {
  /** The kind. */
  type: "tool_result";
  /** The id of the call it answers. */
  tool_use_id: string;
  /** What the tool returned, absent when nothing is left to send. */
  content?: Array<
    AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock
  >;
  /** Present and `true` when the tool failed. */
  is_error?: true;
}

/** A block of a user turn. */
export type AnthropicUserBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolResultBlock;

/** A block of an assistant turn. */
export type AnthropicAssistantBlock =
  | AnthropicTextBlock
  | AnthropicToolUseBlock;

/** A user turn. */
export interface AnthropicUserMessage {
  /** The role. */
  role: "user";
  /** The blocks, tool results first. */
  content: Array<AnthropicUserBlock>;
}

/** An assistant turn. */
export interface AnthropicAssistantMessage {
  /** The role. */
  role: "assistant";
  /** The blocks. */
  content: Array<AnthropicAssistantBlock>;
}

/** One turn of an Anthropic conversation. */
export type AnthropicMessage = AnthropicUserMessage | AnthropicAssistantMessage;

/** The `system` and `messages` of an Anthropic Messages request. */
export interface AnthropicRequest {
  /** The system prompt, when there is one. */
  system?: string;
  /** The turns, alternating and starting with the user. */
  messages: Array<AnthropicMessage>;
}

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/** The longest tool name Anthropic accepts in a `tool_use` block. */
const MAX_TOOL_NAME = 200;

/**
 * The id Anthropic is sent for a call id. Anthropic accepts only letters,
 * digits, `_` and `-`: other ids have every other character replaced by `_`
 * and a hash of the original appended, so distinct ids stay distinct and a
 * call and its result get the same id.
 *
 * @param id The call id.
 * @returns The id as sent.
 *
 * @example An id with a dot
 * ```ts
 * import { anthropicToolId } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * assert.equal(anthropicToolId("call_1"), "call_1");
 * assert.match(anthropicToolId("call.1"), /^call_1_[0-9a-f]{8}$/);
 * ```
 */
export function anthropicToolId(id: string): string {
  if (TOOL_ID.test(id)) return id;
  return `${id.replace(/[^a-zA-Z0-9_-]/g, "_")}_${fnv1a(id)}`;
}

const IMAGE_TYPES: ReadonlySet<string> = new Set([
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
]);

const isImageType = (t: string): t is AnthropicImageMediaType =>
  IMAGE_TYPES.has(t);

// A regex stops at the first visible character; `trim()` copies the text.
const VISIBLE = /\S/;
const blank = (text: string): boolean => !VISIBLE.test(text);

const media = (
  block: ContentBlock & { type: "image" | "file" },
  resolve: AttachmentResolver,
): AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock => {
  const resolved = resolve(block);
  if (resolved !== undefined) {
    if (block.type === "image") {
      if (resolved.kind === "url") {
        return { type: "image", source: { type: "url", url: resolved.url } };
      }
      const t = resolved.mediaType;
      if (isImageType(t)) {
        return {
          type: "image",
          source: { type: "base64", media_type: t, data: resolved.data },
        };
      }
    } else {
      const title = resolved.fileName === undefined
        ? {}
        : { title: resolved.fileName };
      if (
        resolved.kind === "inline" && resolved.mediaType === "application/pdf"
      ) {
        return {
          type: "document",
          source: {
            type: "base64",
            media_type: "application/pdf",
            data: resolved.data,
          },
          ...title,
        };
      }
      if (
        resolved.kind === "url" &&
        (resolved.mediaType === "application/pdf" ||
          (resolved.mediaType === undefined &&
            /\.pdf(?:[?#]|$)/i.test(resolved.url)))
      ) {
        return {
          type: "document",
          source: { type: "url", url: resolved.url },
          ...title,
        };
      }
    }
  }
  return { type: "text", text: omittedText(block, resolved) };
};

const toolResult = (
  block: ToolResultBlock,
  resolve: AttachmentResolver,
): AnthropicToolResultBlock => {
  const content: Array<
    AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock
  > = [];
  for (const b of block.content) {
    if (b.type === "text") {
      if (!blank(b.text)) content.push({ type: "text", text: b.text });
    } else content.push(media(b, resolve));
  }
  return {
    type: "tool_result",
    tool_use_id: anthropicToolId(block.toolCallId),
    ...(content.length === 0 ? {} : { content }),
    ...(block.isError === true ? { is_error: true } : {}),
  };
};

/**
 * Builds the `system` and `messages` of an Anthropic Messages request from
 * derived messages, after {@link pairToolCalls}.
 *
 * - The leading system messages become `system` (their text joined by blank
 *   lines); a later system message becomes user text in place.
 * - Tool results become `tool_result` blocks, first in their user turn;
 *   calls become `tool_use` blocks whose `input` is parsed with
 *   `parseToolArguments`; ids go through {@link anthropicToolId}; an empty
 *   tool name is sent as `UNNAMED_TOOL`, one over 200 characters cut (with
 *   a hash, so distinct names stay distinct).
 * - Consecutive same-role messages are merged into one turn; a conversation
 *   that starts with the model gets a first user turn of
 *   `CONTINUATION_TEXT`; one with no turn left at all (no messages, or
 *   only system, empty or blank ones) is sent as one user turn of
 *   `EMPTY_CONVERSATION_TEXT`.
 * - Reasoning is left out (Anthropic replays thinking only with the
 *   signature it issued). Images become image blocks (JPEG, PNG, GIF, WebP
 *   inline, or a URL), PDF files document blocks; anything else, and any
 *   image or file in an assistant message, becomes a placeholder text.
 *   Blank text blocks and empty turns are left out; the final assistant
 *   turn's trailing white space is trimmed.
 *
 * The result satisfies {@link validateAnthropic} for every input.
 *
 * @param messages Derived messages, in order.
 * @param options How attachments are resolved.
 * @returns The request's `system` and `messages`.
 *
 * @example A crashed call: its result is synthesized, first in its turn
 * ```ts
 * import { toAnthropic } from "@palimpsest/session/providers";
 * import type { Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const messages: Message[] = [
 *   { id: "s", role: "system", source: { kind: "plugin", plugin: "p" },
 *     content: [{ type: "text", text: "be brief" }] },
 *   { id: "u0", role: "user", source: { kind: "user" }, content: [{ type: "text", text: "ls" }] },
 *   { id: "a1", role: "assistant", source: { kind: "model", provider: "p", model: "m" },
 *     content: [{ type: "tool-call", id: "c1", name: "ls", arguments: "{}" }] },
 *   { id: "u2", role: "user", source: { kind: "user" }, content: [{ type: "text", text: "stop" }] },
 * ];
 * const request = toAnthropic(messages);
 * assert.equal(request.system, "be brief");
 * assert.deepEqual(request.messages.map((m) => m.content.map((b) => b.type)), [
 *   ["text"],
 *   ["tool_use"],
 *   ["tool_result", "text"],
 * ]);
 * ```
 */
export function toAnthropic(
  messages: ReadonlyArray<Message>,
  options?: AdapterOptions,
): AnthropicRequest {
  const { resolve, paired, system, start } = adapterInput(messages, options);
  const out: AnthropicMessage[] = [];
  // The open turn is the last one: a block of the other role opens a new
  // one, so consecutive messages of one role merge into one turn.
  function turn(role: "user"): AnthropicUserMessage;
  function turn(role: "assistant"): AnthropicAssistantMessage;
  function turn(role: "user" | "assistant"): AnthropicMessage;
  function turn(role: "user" | "assistant"): AnthropicMessage {
    const last = out[out.length - 1];
    if (last?.role === role) return last;
    const opened: AnthropicMessage = { role, content: [] };
    out.push(opened);
    return opened;
  }
  for (let i = start; i < paired.length; i++) {
    const message = paired[i];
    if (message === undefined) continue;
    const role = message.role === "assistant" ? "assistant" : "user";
    for (const block of message.content) {
      if (block.type === "text") {
        if (!blank(block.text)) {
          turn(role).content.push({ type: "text", text: block.text });
        }
      } else if (block.type === "image" || block.type === "file") {
        if (role === "assistant") {
          turn(role).content.push({
            type: "text",
            text: omittedText(block, resolve(block)),
          });
        } else turn(role).content.push(media(block, resolve));
      } else if (block.type === "tool-call" && role === "assistant") {
        turn(role).content.push({
          type: "tool_use",
          id: anthropicToolId(block.id),
          name: sentToolName(block.name, MAX_TOOL_NAME),
          input: parseToolArguments(block.arguments),
        });
      } else if (block.type === "tool-result" && role === "user") {
        const results = turn(role).content;
        // Results go first in their turn; after pairing they already are,
        // unless a turn merged text before them.
        let at = 0;
        while (results[at]?.type === "tool_result") at++;
        results.splice(at, 0, toolResult(block, resolve));
      }
    }
  }
  if (out[0]?.role === "assistant") {
    out.unshift({
      role: "user",
      content: [{ type: "text", text: CONTINUATION_TEXT }],
    });
  }
  if (out.length === 0) {
    out.push({
      role: "user",
      content: [{ type: "text", text: EMPTY_CONVERSATION_TEXT }],
    });
  }
  const last = out[out.length - 1];
  if (last?.role === "assistant") {
    const tail = last.content[last.content.length - 1];
    if (tail?.type === "text") tail.text = tail.text.trimEnd();
  }
  return system === "" ? { messages: out } : { system, messages: out };
}

/**
 * Checks an Anthropic request against the Messages API's documented rules:
 * there is at least one turn; turns alternate and start with the user; no turn and no text block is
 * empty or blank; the final assistant turn does not end with white space;
 * call ids are unique and made of letters, digits, `_` and `-`; tool names
 * are 1 to 200 characters; a request with a `tool_use` or `tool_result`
 * defines tools (a non-empty `tools`); every
 * `tool_use` is answered by a `tool_result` in the very next turn ("tool_use
 * ids were found without tool_result blocks immediately after"), every
 * `tool_result` answers a `tool_use` of the turn just before, once, and
 * results come first in their turn.
 *
 * @param request The request's `messages` (and `system`, `tools`).
 * @returns The broken rules, in order; empty when the request is valid.
 *
 * @example A call without its result
 * ```ts
 * import { validateAnthropic } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * const violations = validateAnthropic({
 *   messages: [
 *     { role: "user", content: [{ type: "text", text: "ls" }] },
 *     { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "ls", input: {} }] },
 *     { role: "user", content: [{ type: "text", text: "well?" }] },
 *   ],
 * });
 * assert.deepEqual(violations.map((v) => [v._tag, v.index, v.callId]), [
 *   ["ToolCallNotAnswered", 1, "c1"],
 *   ["ToolsNotDefined", 1, undefined],
 * ]);
 * ```
 */
export function validateAnthropic(
  request: AnthropicRequest & DefinedTools,
): ReadonlyArray<RequestViolation> {
  const found: RequestViolation[] = [];
  const ids = new Set<string>();
  const messages = request.messages;
  let firstTool = -1;
  forEachTurn(found, messages, (m) => m.content, (message, i) => {
    const previous = messages[i - 1];
    const called = new Set<string>();
    if (previous?.role === "assistant") {
      for (const b of previous.content) {
        if (b.type === "tool_use") called.add(b.id);
      }
    }
    const answered = new Set<string>();
    let pastResults = false;
    for (const b of message.content) {
      if (b.type === "text") {
        if (blank(b.text)) found.push(violation("BlankText", i));
        pastResults = true;
      } else if (b.type === "tool_use") {
        if (firstTool < 0) firstTool = i;
        if (ids.has(b.id)) {
          found.push(violation("DuplicateToolCallId", i, b.id));
        }
        if (!TOOL_ID.test(b.id)) {
          found.push(violation("InvalidToolCallId", i, b.id));
        }
        if (b.name === "" || b.name.length > MAX_TOOL_NAME) {
          found.push(violation("InvalidToolName", i, b.id));
        }
        ids.add(b.id);
      } else if (b.type === "tool_result") {
        if (firstTool < 0) firstTool = i;
        const id = b.tool_use_id;
        if (pastResults) found.push(violation("ToolResultNotFirst", i, id));
        if (!called.has(id)) {
          found.push(violation("ToolResultWithoutCall", i, id));
        } else if (answered.has(id)) {
          found.push(violation("DuplicateToolResult", i, id));
        }
        answered.add(id);
        for (const c of b.content ?? []) {
          if (c.type === "text" && blank(c.text)) {
            found.push(violation("BlankText", i, id));
          }
        }
      } else pastResults = true;
    }
    if (message.role === "assistant") {
      const next = messages[i + 1];
      unansweredCalls(
        found,
        i,
        message.content.flatMap((b) => b.type === "tool_use" ? [b.id] : []),
        next?.role === "user"
          ? next.content.flatMap((b) =>
            b.type === "tool_result" ? [b.tool_use_id] : []
          )
          : [],
      );
      if (i === messages.length - 1) {
        const tail = message.content[message.content.length - 1];
        if (tail?.type === "text" && tail.text !== tail.text.trimEnd()) {
          found.push(violation("TrailingWhitespace", i));
        }
      }
    }
  });
  checkToolsDefined(found, firstTool, request.tools);
  return found;
}
