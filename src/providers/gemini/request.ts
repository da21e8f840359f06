/**
 * The Gemini adapter and its validator.
 *
 * The shapes here are the parts of Gemini's `Content` and `Part` the adapter
 * fills; the tests check them against the official SDK's types.
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
  UNNAMED_TOOL,
  violation,
} from "../content.ts";

/** A text part. */
export interface GeminiTextPart {
  /** The text, never empty. */
  text: string;
}

/** Inline bytes. */
export interface GeminiInlineDataPart {
  /** The bytes, base64, and their type. */
  inlineData: { mimeType: string; data: string };
}

/** A file by URI. */
export interface GeminiFileDataPart {
  /** The URI and its type. */
  fileData: { fileUri: string; mimeType: string };
}

/** A function call. */
export interface GeminiFunctionCallPart {
  /** The call. */
  functionCall: { id: string; name: string; args: JsonObject };
}

/** A function response. */
export interface GeminiFunctionResponsePart {
  /** The response: `{ output }`, or `{ error }` when the tool failed. */
  functionResponse: {
    id: string;
    name: string;
    response: { output: string } | { error: string };
  };
}

/** A part of a content. */
export type GeminiPart =
  | GeminiTextPart
  | GeminiInlineDataPart
  | GeminiFileDataPart
  | GeminiFunctionCallPart
  | GeminiFunctionResponsePart;

/** One turn. */
export interface GeminiContent {
  /** The role. */
  role: "user" | "model";
  /** The parts, never empty. */
  parts: Array<GeminiPart>;
}

/** The `systemInstruction` and `contents` of a Gemini request. */
export interface GeminiRequest {
  /** The system prompt, when there is one. */
  systemInstruction?: { parts: Array<GeminiTextPart> };
  /** The turns, alternating and starting with the user. */
  contents: Array<GeminiContent>;
}

const media = (
  block: ContentBlock & { type: "image" | "file" },
  resolve: AttachmentResolver,
): GeminiPart => {
  const resolved = resolve(block);
  if (resolved?.kind === "inline") {
    return {
      inlineData: { mimeType: resolved.mediaType, data: resolved.data },
    };
  }
  if (resolved?.kind === "url" && resolved.mediaType !== undefined) {
    return {
      fileData: { fileUri: resolved.url, mimeType: resolved.mediaType },
    };
  }
  return { text: omittedText(block, resolved) };
};

const resultText = (
  block: ToolResultBlock,
  resolve: AttachmentResolver,
): string =>
  block.content.map((b) =>
    b.type === "text" ? b.text : omittedText(b, resolve(b))
  ).join("\n");

/**
 * Builds the `systemInstruction` and `contents` of a Gemini request from
 * derived messages, after {@link pairToolCalls}.
 *
 * - The leading system messages become `systemInstruction`; a later one
 *   becomes user text in place.
 * - Calls become `functionCall` parts (id, name, `args` parsed with
 *   `parseToolArguments`; an empty name is sent as `UNNAMED_TOOL`); their
 *   results `functionResponse` parts, first in the user turn right after,
 *   with the call's name and `{ output }` or, when the tool failed,
 *   `{ error }` holding the result's text (images and files as
 *   placeholders).
 * - Consecutive same-role messages are merged into one turn; a conversation
 *   that starts with the model gets a first user turn of
 *   `CONTINUATION_TEXT`; one with no turn left at all (no messages, or
 *   only system or empty ones) is sent as one user turn of
 *   `EMPTY_CONVERSATION_TEXT`.
 * - Images and files become `inlineData`, or `fileData` for a URL with a
 *   known type; others become placeholder text. Reasoning is left out
 *   (Gemini replays thoughts only through its signatures). Empty text
 *   parts and empty turns are left out.
 *
 * The result satisfies {@link validateGemini} for every input.
 *
 * @param messages Derived messages, in order.
 * @param options How attachments are resolved.
 * @returns The request's `systemInstruction` and `contents`.
 *
 * @example A call and its response
 * ```ts
 * import { toGemini } from "@palimpsest/session/providers";
 * import type { Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const messages: Message[] = [
 *   { id: "u0", role: "user", source: { kind: "user" }, content: [{ type: "text", text: "ls" }] },
 *   { id: "a1", role: "assistant", source: { kind: "model", provider: "p", model: "m" },
 *     content: [{ type: "tool-call", id: "c1", name: "ls", arguments: '{"dir":"."}' }] },
 *   { id: "r2", role: "user", source: { kind: "tool", callId: "c1" },
 *     content: [{ type: "tool-result", toolCallId: "c1", content: [{ type: "text", text: "a.txt" }] }] },
 * ];
 * assert.deepEqual(toGemini(messages).contents.slice(1), [
 *   { role: "model", parts: [{ functionCall: { id: "c1", name: "ls", args: { dir: "." } } }] },
 *   { role: "user", parts: [
 *     { functionResponse: { id: "c1", name: "ls", response: { output: "a.txt" } } },
 *   ] },
 * ]);
 * ```
 */
export function toGemini(
  messages: ReadonlyArray<Message>,
  options?: AdapterOptions,
): GeminiRequest {
  const { resolve, paired, system, start } = adapterInput(messages, options);
  const names = new Map<string, string>();
  const contents: GeminiContent[] = [];
  let turn: GeminiContent = { role: "user", parts: [] };
  // How many function responses lead the current turn.
  let responses = 0;
  for (let i = start; i < paired.length; i++) {
    const message = paired[i];
    if (message === undefined) continue;
    const role = message.role === "assistant" ? "model" : "user";
    const content = message.content;
    for (let k = 0; k < content.length; k++) {
      const b = content[k];
      if (b === undefined) continue;
      let part: GeminiPart;
      let name: string;
      switch (b.type) {
        case "text":
          if (b.text === "") continue;
          part = { text: b.text };
          break;
        case "image":
        case "file":
          part = media(b, resolve);
          break;
        case "tool-call":
          if (role !== "model") continue;
          name = sentToolName(b.name, Infinity);
          names.set(b.id, name);
          part = {
            functionCall: {
              id: b.id,
              name,
              args: parseToolArguments(b.arguments),
            },
          };
          break;
        case "tool-result": {
          const text = resultText(b, resolve);
          part = {
            functionResponse: {
              id: b.toolCallId,
              name: names.get(b.toolCallId) ?? UNNAMED_TOOL,
              response: b.isError === true ? { error: text } : { output: text },
            },
          };
          break;
        }
        default:
          continue;
      }
      if (turn.role !== role || turn.parts.length === 0) {
        if (turn.parts.length > 0) contents.push(turn);
        turn = { role, parts: [] };
        responses = 0;
      }
      if (b.type === "tool-result") {
        // Responses go first in their turn; after pairing they already
        // are, unless a turn merged text before them.
        if (turn.parts.length === responses) turn.parts.push(part);
        else turn.parts.splice(responses, 0, part);
        responses++;
      } else turn.parts.push(part);
    }
  }
  if (turn.parts.length > 0) contents.push(turn);
  if (contents[0]?.role === "model") {
    contents.unshift({ role: "user", parts: [{ text: CONTINUATION_TEXT }] });
  }
  if (contents.length === 0) {
    contents.push({ role: "user", parts: [{ text: EMPTY_CONVERSATION_TEXT }] });
  }
  return system === ""
    ? { contents }
    : { systemInstruction: { parts: [{ text: system }] }, contents };
}

/**
 * Checks a Gemini request against the documented rules: there is at least
 * one turn; turns alternate between `user` and `model` and start with the
 * user; no turn is empty and no text part is empty; a model turn with
 * function calls is followed by a user turn whose function response parts
 * answer each call, by id and name
 * ("the number of function response parts is equal to the number of
 * function call parts of the function call turn"); function responses come
 * first in their turn and only right after such a model turn; call ids are
 * unique; function names are not empty; a request with function calls or
 * responses defines tools (a non-empty `tools`).
 *
 * @param request The request's `contents` (and `tools`).
 * @returns The broken rules, in order; empty when the request is valid.
 *
 * @example A function call turn with no response turn
 * ```ts
 * import { validateGemini } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * const violations = validateGemini({
 *   contents: [
 *     { role: "user", parts: [{ text: "ls" }] },
 *     { role: "model", parts: [{ functionCall: { id: "c1", name: "ls", args: {} } }] },
 *   ],
 *   tools: [{ functionDeclarations: [{ name: "ls", description: "ls", parametersJsonSchema: {} }] }],
 * });
 * assert.deepEqual(violations.map((v) => [v._tag, v.callId]), [["ToolCallNotAnswered", "c1"]]);
 * ```
 */
export function validateGemini(
  request: GeminiRequest & DefinedTools,
): ReadonlyArray<RequestViolation> {
  const found: RequestViolation[] = [];
  const ids = new Set<string>();
  const contents = request.contents;
  let firstTool = -1;
  forEachTurn(found, contents, (c) => c.parts, (content, i) => {
    const previous = contents[i - 1];
    const calls = new Map<string, string>();
    if (previous?.role === "model") {
      for (const p of previous.parts) {
        if ("functionCall" in p) {
          calls.set(p.functionCall.id, p.functionCall.name);
        }
      }
    }
    const answered = new Set<string>();
    let pastResponses = false;
    for (const p of content.parts) {
      if ("functionResponse" in p) {
        if (firstTool < 0) firstTool = i;
        const { id, name } = p.functionResponse;
        if (content.role !== "user" || pastResponses) {
          found.push(violation("ToolResultWithoutCall", i, id));
          continue;
        }
        const callName = calls.get(id);
        if (callName === undefined) {
          found.push(violation("ToolResultWithoutCall", i, id));
        } else if (answered.has(id)) {
          found.push(violation("DuplicateToolResult", i, id));
        } else if (callName !== name) {
          found.push(violation("ToolResultNameMismatch", i, id));
        }
        answered.add(id);
        continue;
      }
      pastResponses = true;
      if ("text" in p && p.text === "") {
        found.push(violation("EmptyContent", i));
      }
      if ("functionCall" in p) {
        if (firstTool < 0) firstTool = i;
        const id = p.functionCall.id;
        if (content.role !== "model") {
          found.push(violation("UnexpectedRole", i, id));
        }
        if (ids.has(id)) found.push(violation("DuplicateToolCallId", i, id));
        if (p.functionCall.name === "") {
          found.push(violation("InvalidToolName", i, id));
        }
        ids.add(id);
      }
    }
    if (content.role === "model") {
      const next = contents[i + 1];
      unansweredCalls(
        found,
        i,
        content.parts.flatMap((p) =>
          "functionCall" in p ? [p.functionCall.id] : []
        ),
        next?.role === "user"
          ? next.parts.flatMap((p) =>
            "functionResponse" in p ? [p.functionResponse.id] : []
          )
          : [],
      );
    }
  });
  checkToolsDefined(found, firstTool, request.tools);
  return found;
}
