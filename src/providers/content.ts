/**
 * What every adapter needs from a content block: the tool arguments as an
 * object, an attachment as bytes or a URL, and the text of a placeholder for
 * what a provider cannot take.
 *
 * @module
 */
import type {
  ContentBlock,
  FileBlock,
  ImageBlock,
  Message,
} from "../core/message.ts";
import { fnv1a } from "../core/hash.ts";
import { pairToolCalls } from "./pairing.ts";

/** A JSON object, as providers that take tool arguments as an object want it. */
export type JsonObject = { readonly [key: string]: unknown };

/** The key under which arguments that are not a JSON object are passed on. */
export const INVALID_ARGUMENTS_KEY = "invalid_json_arguments";

/**
 * Parses a call's raw JSON `arguments` for providers that want an object.
 * The policy: an empty (or blank) string is `{}`; a JSON object is itself;
 * anything else (text that does not parse, or JSON that is not an object)
 * is passed on as `{ invalid_json_arguments: raw }`, so the model sees what
 * it produced and the request is still accepted.
 *
 * @param raw The raw JSON text, exactly as the model produced it.
 * @returns The arguments as an object.
 *
 * @example Valid, empty and invalid arguments
 * ```ts
 * import { parseToolArguments } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(parseToolArguments('{"path":"a"}'), { path: "a" });
 * assert.deepEqual(parseToolArguments(""), {});
 * assert.deepEqual(parseToolArguments('{"path":'), { invalid_json_arguments: '{"path":' });
 * ```
 */
export function parseToolArguments(raw: string): JsonObject {
  if (raw.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { [INVALID_ARGUMENTS_KEY]: raw };
  }
  if (isJsonObject(value)) return value;
  return { [INVALID_ARGUMENTS_KEY]: raw };
}

const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** An attachment resolved to its bytes, as base64. */
export interface InlineAttachment {
  /** The kind. */
  readonly kind: "inline";
  /** The MIME type, e.g. `image/png`. */
  readonly mediaType: string;
  /** The bytes, base64-encoded (no `data:` prefix). */
  readonly data: string;
  /** A file name, when known. */
  readonly fileName?: string;
}

/** An attachment resolved to a URL the provider fetches. */
export interface UrlAttachment {
  /** The kind. */
  readonly kind: "url";
  /** The URL. */
  readonly url: string;
  /** The MIME type, when known. */
  readonly mediaType?: string;
  /** A file name, when known. */
  readonly fileName?: string;
}

/** An attachment in a form a provider can be sent. */
export type ResolvedAttachment = InlineAttachment | UrlAttachment;

/**
 * Turns a block's opaque `attachment` into bytes or a URL, or `undefined`
 * when it cannot (the adapter then sends a placeholder text instead).
 */
export type AttachmentResolver = (
  block: ImageBlock | FileBlock,
) => ResolvedAttachment | undefined;

/** Options every adapter takes. */
export interface AdapterOptions {
  /**
   * How attachments become bytes or URLs; {@link resolveAttachment} by
   * default. Adapters are pure: a resolver that reads files should read
   * them before the call and look them up here.
   */
  readonly resolveAttachment?: AttachmentResolver;
}

const str = (o: JsonObject, key: string): string | undefined => {
  const v = o[key];
  return typeof v === "string" && v !== "" ? v : undefined;
};

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/**
 * The default attachment resolver. It understands, in the attachment:
 *
 * - a `data:<type>;base64,<data>` string or `{ url }` with such a URL;
 * - an `http:` or `https:` URL string, or `{ url, mediaType?, fileName? }`;
 * - `{ mediaType, data, fileName? }` with base64 `data`.
 *
 * `mimeType` and `name` are read as spellings of `mediaType` and
 * `fileName`. Anything else (a local path, a provider file id) is not
 * resolved.
 *
 * @param block The image or file block.
 * @returns The resolved attachment, or `undefined`.
 *
 * @example Inline bytes and a URL
 * ```ts
 * import { resolveAttachment } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(
 *   resolveAttachment({ type: "image", attachment: { mediaType: "image/png", data: "iVBO" } }),
 *   { kind: "inline", mediaType: "image/png", data: "iVBO" },
 * );
 * assert.deepEqual(
 *   resolveAttachment({ type: "file", attachment: "https://example.com/a.pdf" }),
 *   { kind: "url", url: "https://example.com/a.pdf" },
 * );
 * assert.equal(resolveAttachment({ type: "image", attachment: { path: "shot.png" } }), undefined);
 * ```
 */
export function resolveAttachment(
  block: ImageBlock | FileBlock,
): ResolvedAttachment | undefined {
  const a = block.attachment;
  if (typeof a === "string") return fromUrl(a, undefined, undefined);
  if (!isJsonObject(a)) return undefined;
  const mediaType = str(a, "mediaType") ?? str(a, "mimeType");
  const fileName = str(a, "fileName") ?? str(a, "name");
  const url = str(a, "url");
  if (url !== undefined) return fromUrl(url, mediaType, fileName);
  const data = str(a, "data");
  if (data === undefined || mediaType === undefined) return undefined;
  return {
    kind: "inline",
    mediaType,
    data,
    ...(fileName === undefined ? {} : { fileName }),
  };
}

const fromUrl = (
  url: string,
  mediaType: string | undefined,
  fileName: string | undefined,
): ResolvedAttachment | undefined => {
  const data = DATA_URL.exec(url);
  if (data !== null) {
    return {
      kind: "inline",
      mediaType: data[1] ?? "application/octet-stream",
      data: data[2] ?? "",
      ...(fileName === undefined ? {} : { fileName }),
    };
  }
  if (!/^https?:\/\//i.test(url)) return undefined;
  return {
    kind: "url",
    url,
    ...(mediaType === undefined ? {} : { mediaType }),
    ...(fileName === undefined ? {} : { fileName }),
  };
};

/** The `data:` URL of inline bytes. */
export const dataUrl = (a: InlineAttachment): string =>
  `data:${a.mediaType};base64,${a.data}`;

/**
 * The text sent in place of an image or file a provider cannot take, e.g.
 * `[image omitted]` or `[file report.pdf omitted]`.
 *
 * @param block The block left out.
 * @param resolved What it resolved to, if anything (for its name).
 * @returns The placeholder text.
 *
 * @example A file the target cannot take
 * ```ts
 * import { omittedText } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * assert.equal(omittedText({ type: "image", attachment: null }, undefined), "[image omitted]");
 * ```
 */
export function omittedText(
  block: ImageBlock | FileBlock,
  resolved: ResolvedAttachment | undefined,
): string {
  const name = resolved?.fileName;
  return `[${block.type}${name === undefined ? "" : ` ${name}`} omitted]`;
}

/** The resolver an adapter uses. */
export const resolverOf = (
  options: AdapterOptions | undefined,
): AttachmentResolver => options?.resolveAttachment ?? resolveAttachment;

/**
 * The text blocks of a message joined by blank lines, empty ones skipped.
 * @internal
 */
export const joinText = (
  content: ReadonlyArray<{ readonly type: string; readonly text?: string }>,
): string => {
  let text = "";
  for (const block of content) {
    if (
      block.type !== "text" || block.text === undefined || block.text === ""
    ) {
      continue;
    }
    text = text === "" ? block.text : `${text}\n\n${block.text}`;
  }
  return text;
};

/**
 * The text of blocks where a target takes text only: text blocks joined by
 * blank lines (empty ones skipped), images and files as placeholders.
 * @internal
 */
export const textWithPlaceholders = (
  content: ReadonlyArray<ContentBlock>,
  resolve: AttachmentResolver,
): string => {
  const texts: string[] = [];
  for (const b of content) {
    if (b.type === "text") {
      if (b.text !== "") texts.push(b.text);
    } else if (b.type === "image" || b.type === "file") {
      texts.push(omittedText(b, resolve(b)));
    }
  }
  return texts.join("\n\n");
};

/**
 * The system prompt of the leading system messages (joined text) and the
 * index of the first message after them.
 */
const leadingSystem = (
  messages: ReadonlyArray<Message>,
): { readonly system: string; readonly start: number } => {
  let start = 0;
  let system = "";
  while (start < messages.length) {
    const message = messages[start];
    if (message === undefined || message.role !== "system") break;
    const text = joinText(message.content);
    if (text !== "") system = system === "" ? text : `${system}\n\n${text}`;
    start++;
  }
  return { system, start };
};

/**
 * What an adapter with a separate system field starts from: the attachment
 * resolver, the messages with their tool calls paired, and the system text
 * leading them with the index of the first message after it.
 * @internal
 */
export const adapterInput = (
  messages: ReadonlyArray<Message>,
  options: AdapterOptions | undefined,
): {
  readonly resolve: AttachmentResolver;
  readonly paired: ReadonlyArray<Message>;
  readonly system: string;
  readonly start: number;
} => {
  const paired = pairToolCalls(messages).messages;
  return { resolve: resolverOf(options), paired, ...leadingSystem(paired) };
};

/** The text sent as the first user turn when a conversation starts with the model. */
export const CONTINUATION_TEXT = "(The conversation continues.)";

/**
 * The text of the user turn sent when a conversation has nothing to send:
 * no messages, only system messages, or only messages that are empty or
 * blank. Every provider refuses a request without a turn, so each adapter
 * sends this placeholder instead, and each validator reports such a request
 * as `EmptyConversation`.
 */
export const EMPTY_CONVERSATION_TEXT = "(The conversation is empty.)";

/**
 * The name sent for a tool call whose name is empty: Anthropic and Gemini
 * refuse an empty name (a log may hold one: a tool call's name is any
 * string).
 */
export const UNNAMED_TOOL = "unnamed_tool";

/**
 * A call's tool name as a target with a length limit takes it: an empty
 * name is {@link UNNAMED_TOOL}; a name over `max` characters is cut, with
 * `_` and a hash of the whole name appended, so distinct names stay
 * distinct.
 * @internal
 */
export const sentToolName = (name: string, max: number): string => {
  if (name === "") return UNNAMED_TOOL;
  if (name.length <= max) return name;
  const hash = fnv1a(name);
  return `${name.slice(0, max - hash.length - 1)}_${hash}`;
};

/** What a validator found: one provider ordering rule broken. */
export type RequestViolationTag =
  /** The first turn is not the user's (Anthropic, Gemini). */
  | "FirstTurnNotUser"
  /** Two consecutive turns have the same role (Anthropic, Gemini). */
  | "RolesNotAlternating"
  /** The request holds no user or assistant turn: every provider refuses it. */
  | "EmptyConversation"
  /** A message or turn has no content. */
  | "EmptyContent"
  /** A text block is empty or blank (Anthropic). */
  | "BlankText"
  /** The final assistant turn ends with white space (Anthropic). */
  | "TrailingWhitespace"
  /** An assistant message has neither content nor tool calls (OpenAI Chat). */
  | "AssistantWithoutContent"
  /** A role the target does not accept in its message list. */
  | "UnexpectedRole"
  /** A tool call is not answered where the provider wants its result. */
  | "ToolCallNotAnswered"
  /** A tool result answers no call where the provider looks for one. */
  | "ToolResultWithoutCall"
  /** A second result for the same call. */
  | "DuplicateToolResult"
  /** Two calls with the same id. */
  | "DuplicateToolCallId"
  /**
   * A call id the provider refuses (Anthropic: only letters, digits, `_`
   * and `-`; OpenAI Responses: more than 64 characters).
   */
  | "InvalidToolCallId"
  /**
   * A tool call's name the provider refuses (Anthropic: empty or over 200
   * characters; Gemini: empty).
   */
  | "InvalidToolName"
  /** A tool result after other content in its user turn (Anthropic). */
  | "ToolResultNotFirst"
  /** A function response whose name is not the name of its call (Gemini). */
  | "ToolResultNameMismatch"
  /**
   * The request holds tool calls or results but defines no tool (`tools`
   * absent or empty): Anthropic refuses it ("Requests which include
   * `tool_use` or `tool_result` blocks must define tools"), and so do
   * gateways in front of the others. The index is the first message or
   * item holding one.
   */
  | "ToolsNotDefined";

/** One broken rule, with where it was found. */
export interface RequestViolation {
  /** The rule. */
  readonly _tag: RequestViolationTag;
  /** The index of the message, item or content in the request's list. */
  readonly index: number;
  /** The call id concerned, when the rule is about a call. */
  readonly callId: string | undefined;
}

/** The tools a request body defines, as the validators read them. */
export interface DefinedTools {
  /** The body's `tools`: a non-empty list defines tools. */
  readonly tools?: ReadonlyArray<unknown> | undefined;
}

/**
 * Records `ToolsNotDefined` when a tool block stands at `first` (`-1` for
 * none) and `tools` defines none.
 * @internal
 */
export const checkToolsDefined = (
  found: RequestViolation[],
  first: number,
  tools: ReadonlyArray<unknown> | undefined,
): void => {
  if (first >= 0 && (tools === undefined || tools.length === 0)) {
    found.push(violation("ToolsNotDefined", first));
  }
};

/**
 * A violation value.
 * @internal
 */
export const violation = (
  _tag: RequestViolationTag,
  index: number,
  callId?: string,
): RequestViolation => ({ _tag, index, callId });

/**
 * Walks the turns of a target whose conversation alternates user and model
 * turns (Anthropic, Gemini), recording the rules every such turn keeps: the
 * conversation is not empty, starts with a user turn and alternates, and no
 * turn is empty. `f` then checks the turn's own content.
 * @internal
 */
export const forEachTurn = <T extends { readonly role: string }>(
  found: RequestViolation[],
  turns: ReadonlyArray<T>,
  parts: (turn: T) => ReadonlyArray<unknown>,
  f: (turn: T, i: number) => void,
): void => {
  if (turns.length === 0) found.push(violation("EmptyConversation", 0));
  turns.forEach((turn, i) => {
    if (i === 0 && turn.role !== "user") {
      found.push(violation("FirstTurnNotUser", i));
    }
    if (i > 0 && turns[i - 1]?.role === turn.role) {
      found.push(violation("RolesNotAlternating", i));
    }
    if (parts(turn).length === 0) found.push(violation("EmptyContent", i));
    f(turn, i);
  });
};

/**
 * Records a `ToolCallNotAnswered` for each call of turn `i`, in order, that
 * is not among the answers of the turn after it.
 * @internal
 */
export const unansweredCalls = (
  found: RequestViolation[],
  i: number,
  calls: ReadonlyArray<string>,
  answers: ReadonlyArray<string>,
): void => {
  const answered = new Set(answers);
  for (const id of calls) {
    if (!answered.has(id)) found.push(violation("ToolCallNotAnswered", i, id));
  }
};

/**
 * The tool calls a validator has seen, for targets where the results follow
 * their calls as separate items (OpenAI Chat and Responses).
 * @internal
 */
export interface CallLedger {
  /**
   * A call at `index`: a reused id is `DuplicateToolCallId`. A call after
   * results closes the calls before it first.
   */
  readonly call: (id: string, index: number) => void;
  /**
   * A result at `index`: one for no open call is `ToolResultWithoutCall`, a
   * second one `DuplicateToolResult`.
   */
  readonly answer: (id: string, index: number) => void;
  /** No more results: every open call left unanswered is `ToolCallNotAnswered`. */
  readonly close: () => void;
}

/**
 * A {@link CallLedger} that pushes what it finds to `found`.
 * @internal
 */
export const callLedger = (found: RequestViolation[]): CallLedger => {
  const ids = new Set<string>();
  let open = new Map<string, number>();
  let answered = new Set<string>();
  const close = (): void => {
    for (const [id, at] of open) {
      if (!answered.has(id)) {
        found.push(violation("ToolCallNotAnswered", at, id));
      }
    }
    open = new Map();
    answered = new Set();
  };
  return {
    call: (id, index) => {
      if (answered.size > 0) close();
      if (ids.has(id)) found.push(violation("DuplicateToolCallId", index, id));
      ids.add(id);
      open.set(id, index);
    },
    answer: (id, index) => {
      if (!open.has(id)) {
        found.push(violation("ToolResultWithoutCall", index, id));
      } else if (answered.has(id)) {
        found.push(violation("DuplicateToolResult", index, id));
      }
      answered.add(id);
    },
    close,
  };
};
