/**
 * The OpenAI Responses adapter and its validator.
 *
 * The shapes here are the parts of the Responses API's `input` items the
 * adapter fills; the tests check them against the official SDK's types.
 *
 * @module
 */
import type { Message, ToolResultContentBlock } from "../../core/message.ts";
import {
  adapterInput,
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
  textWithPlaceholders,
  violation,
} from "../content.ts";
import { fnv1a } from "../../core/hash.ts";

/** A text part. */
export interface OpenAIResponsesTextPart {
  /** The kind. */
  type: "input_text";
  /** The text. */
  text: string;
}

/** An image part: a URL or a `data:` URL. */
export interface OpenAIResponsesImagePart {
  /** The kind. */
  type: "input_image";
  /** How closely the model looks. */
  detail: "auto";
  /** The image. */
  image_url: string;
}

/** A file part: inline bytes as a `data:` URL, or a URL. */
export interface OpenAIResponsesFilePart {
  /** The kind. */
  type: "input_file";
  /** The bytes, as a `data:` URL. */
  file_data?: string;
  /** The file's URL. */
  file_url?: string;
  /** The file name, when known. */
  filename?: string;
}

/** A part of a user message or of a tool output. */
export type OpenAIResponsesPart =
  | OpenAIResponsesTextPart
  | OpenAIResponsesImagePart
  | OpenAIResponsesFilePart;

/** A user message. */
export interface OpenAIResponsesUserMessage {
  /** The kind. */
  type: "message";
  /** The role. */
  role: "user";
  /** The parts. */
  content: Array<OpenAIResponsesPart>;
}

/** An assistant or system message, as text. */
export interface OpenAIResponsesTextMessage {
  /** The kind. */
  type: "message";
  /** The role. */
  role: "assistant" | "system";
  /** The text. */
  content: string;
}

/** A function call. */
export interface OpenAIResponsesFunctionCall {
  /** The kind. */
  type: "function_call";
  /** The call id. */
  call_id: string;
  /** The function name. */
  name: string;
  /** The raw JSON arguments. */
  arguments: string;
}

/** A function call's output. */
export interface OpenAIResponsesFunctionCallOutput {
  /** The kind. */
  type: "function_call_output";
  /** The id of the call it answers. */
  call_id: string;
  /** The output: its text, or parts when it holds images or files. */
  output: string | Array<OpenAIResponsesPart>;
}

/**
 * An encrypted `compaction` item a Responses server issued, sent back
 * unchanged (other keys it holds are kept as they are). A text block
 * carries one as `opaque: { api: "openai-responses", item }`; the other
 * adapters leave such a block out.
 */
export interface OpenAIResponsesCompaction {
  /** The item kind. */
  readonly type: "compaction";
  /** The server's encrypted state. */
  readonly encrypted_content: string;
}

/** A Responses input item. */
export type OpenAIResponsesItem =
  | OpenAIResponsesUserMessage
  | OpenAIResponsesTextMessage
  | OpenAIResponsesFunctionCall
  | OpenAIResponsesFunctionCallOutput
  | OpenAIResponsesCompaction;

/** The Responses item an opaque text block carries, if any. */
const opaqueItem = (block: object): OpenAIResponsesCompaction | undefined => {
  const opaque: unknown = Reflect.get(block, "opaque");
  if (typeof opaque !== "object" || opaque === null) return undefined;
  if (Reflect.get(opaque, "api") !== "openai-responses") return undefined;
  const item: unknown = Reflect.get(opaque, "item");
  return typeof item === "object" && item !== null &&
      Reflect.get(item, "type") === "compaction" &&
      typeof Reflect.get(item, "encrypted_content") === "string"
    ? item as OpenAIResponsesCompaction
    : undefined;
};

/** The `instructions` and `input` of a Responses request. */
export interface OpenAIResponsesRequest {
  /** The system prompt, when there is one. */
  instructions?: string;
  /** The items. */
  input: Array<OpenAIResponsesItem>;
}

/** The longest `call_id` OpenAI accepts in a `function_call_output`. */
const MAX_CALL_ID = 64;

/**
 * The `call_id` OpenAI Responses is sent for a call id. OpenAI refuses a
 * `function_call_output` whose `call_id` is longer than 64 characters (ids
 * that long come from sessions that moved between harnesses or providers):
 * such an id is cut to its first 55 characters, with `_` and a hash of the
 * whole id appended, so distinct ids stay distinct and a call and its
 * output get the same id. Shorter ids are sent as they are.
 *
 * @param id The call id.
 * @returns The id as sent, at most 64 characters.
 *
 * @example A long id
 * ```ts
 * import { openAIResponsesCallId } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * assert.equal(openAIResponsesCallId("call_1"), "call_1");
 * const long = `call_${"a".repeat(60)}|fc_${"b".repeat(60)}`;
 * assert.equal(openAIResponsesCallId(long).length, 64);
 * assert.notEqual(openAIResponsesCallId(long), openAIResponsesCallId(`${long}2`));
 * ```
 */
export function openAIResponsesCallId(id: string): string {
  if (id.length <= MAX_CALL_ID) return id;
  const hash = fnv1a(id);
  return `${id.slice(0, MAX_CALL_ID - hash.length - 1)}_${hash}`;
}

const part = (
  block: ToolResultContentBlock,
  resolve: AttachmentResolver,
): OpenAIResponsesPart => {
  if (block.type === "text") return { type: "input_text", text: block.text };
  const resolved = resolve(block);
  if (resolved === undefined) {
    return { type: "input_text", text: omittedText(block, resolved) };
  }
  const url = resolved.kind === "url" ? resolved.url : dataUrl(resolved);
  if (block.type === "image") {
    return { type: "input_image", detail: "auto", image_url: url };
  }
  return {
    type: "input_file",
    ...(resolved.kind === "url" ? { file_url: url } : { file_data: url }),
    ...(resolved.fileName === undefined ? {} : { filename: resolved.fileName }),
  };
};

/**
 * Builds the `instructions` and `input` of an OpenAI Responses request from
 * derived messages, after {@link pairToolCalls}.
 *
 * - The leading system messages become `instructions`; a later one becomes a
 *   `system` message item in place.
 * - Calls become `function_call` items (raw `arguments`; an empty string is
 *   sent as `{}`), each answered right after by its `function_call_output`:
 *   the result's text, or parts when it holds images or files. Call ids go
 *   through {@link openAIResponsesCallId}.
 * - Assistant text becomes an assistant message item; images and files in
 *   it become placeholder text. A text block carrying an encrypted
 *   `compaction` item ({@link OpenAIResponsesCompaction}) sends that item
 *   unchanged. Reasoning is left out (the API replays only
 *   the reasoning items it issued, by id). Empty messages are left out.
 *
 * The result satisfies {@link validateOpenAIResponses} for every input.
 *
 * @param messages Derived messages, in order.
 * @param options How attachments are resolved.
 * @returns The request's `instructions` and `input`.
 *
 * @example A call and its output
 * ```ts
 * import { toOpenAIResponses } from "@palimpsest/session/providers";
 * import type { Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const messages: Message[] = [
 *   { id: "s", role: "system", source: { kind: "plugin", plugin: "p" },
 *     content: [{ type: "text", text: "be brief" }] },
 *   { id: "a1", role: "assistant", source: { kind: "model", provider: "p", model: "m" },
 *     content: [{ type: "tool-call", id: "c1", name: "ls", arguments: "{}" }] },
 *   { id: "r2", role: "user", source: { kind: "tool", callId: "c1" },
 *     content: [{ type: "tool-result", toolCallId: "c1", content: [{ type: "text", text: "a.txt" }] }] },
 * ];
 * assert.deepEqual(toOpenAIResponses(messages), {
 *   instructions: "be brief",
 *   input: [
 *     { type: "function_call", call_id: "c1", name: "ls", arguments: "{}" },
 *     { type: "function_call_output", call_id: "c1", output: "a.txt" },
 *   ],
 * });
 * ```
 */
export function toOpenAIResponses(
  messages: ReadonlyArray<Message>,
  options?: AdapterOptions,
): OpenAIResponsesRequest {
  const { resolve, paired, system, start } = adapterInput(messages, options);
  const input: OpenAIResponsesItem[] = [];
  for (let i = start; i < paired.length; i++) {
    const message = paired[i];
    if (message === undefined) continue;
    if (message.role === "system") {
      const text = joinText(message.content);
      if (text !== "") {
        input.push({ type: "message", role: "system", content: text });
      }
      continue;
    }
    if (message.role === "assistant") {
      const text = textWithPlaceholders(message.content, resolve);
      if (text !== "") {
        input.push({ type: "message", role: "assistant", content: text });
      }
      for (const b of message.content) {
        if (b.type !== "tool-call") continue;
        input.push({
          type: "function_call",
          call_id: openAIResponsesCallId(b.id),
          name: b.name,
          arguments: b.arguments === "" ? "{}" : b.arguments,
        });
      }
      continue;
    }
    const parts: OpenAIResponsesPart[] = [];
    const opaque: OpenAIResponsesCompaction[] = [];
    for (const b of message.content) {
      if (b.type === "tool-result") {
        const media = b.content.some((c) => c.type !== "text");
        input.push({
          type: "function_call_output",
          call_id: openAIResponsesCallId(b.toolCallId),
          output: media
            ? b.content.map((c) => part(c, resolve))
            : joinText(b.content),
        });
      } else if (b.type === "text") {
        const item = opaqueItem(b);
        if (item !== undefined) opaque.push(item);
        else if (b.text !== "") {
          parts.push({ type: "input_text", text: b.text });
        }
      } else if (b.type === "image" || b.type === "file") {
        parts.push(part(b, resolve));
      }
    }
    if (parts.length > 0) {
      input.push({ type: "message", role: "user", content: parts });
    }
    input.push(...opaque);
  }
  if (
    input.every((item) => item.type === "message" && item.role === "system")
  ) {
    input.push({
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: EMPTY_CONVERSATION_TEXT }],
    });
  }
  return system === "" ? { input } : { instructions: system, input };
}

/**
 * Checks a Responses request against OpenAI's documented rules: every
 * `function_call` is answered by one `function_call_output` with its
 * `call_id` ("No tool output found for function call"), given after the
 * call and before the next message item; every output answers such a call
 * ("No tool call found for function call output"), once; call ids are
 * unique and at most 64 characters; no message is empty; there is an item
 * besides the system messages; a request with function calls or outputs
 * defines tools (a non-empty `tools`).
 *
 * @param request The request's `input` (and `tools`).
 * @returns The broken rules, in order; empty when the request is valid.
 *
 * @example A call without its output
 * ```ts
 * import { validateOpenAIResponses } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * const violations = validateOpenAIResponses({
 *   input: [{ type: "function_call", call_id: "c1", name: "ls", arguments: "{}" }],
 *   tools: [{ type: "function", name: "ls", parameters: {}, strict: false }],
 * });
 * assert.deepEqual(violations.map((v) => [v._tag, v.callId]), [["ToolCallNotAnswered", "c1"]]);
 * ```
 */
export function validateOpenAIResponses(
  request: OpenAIResponsesRequest & DefinedTools,
): ReadonlyArray<RequestViolation> {
  const found: RequestViolation[] = [];
  const calls = callLedger(found);
  let firstTool = -1;
  request.input.forEach((item, i) => {
    switch (item.type) {
      case "function_call":
      case "function_call_output":
        if (firstTool < 0) firstTool = i;
        if (item.type === "function_call") calls.call(item.call_id, i);
        else calls.answer(item.call_id, i);
        if (item.call_id.length > MAX_CALL_ID) {
          found.push(violation("InvalidToolCallId", i, item.call_id));
        }
        break;
      case "message":
        calls.close();
        if (item.content.length === 0) found.push(violation("EmptyContent", i));
        break;
    }
  });
  calls.close();
  if (
    request.input.every((item) =>
      item.type === "message" && item.role === "system"
    )
  ) {
    found.push(violation("EmptyConversation", request.input.length));
  }
  checkToolsDefined(found, firstTool, request.tools);
  return found;
}
