/**
 * What the exporters share: ids in each tool's shape made from the
 * session's own (so that an export is the same file every time), times as
 * the tools write them, images as data URLs, and tool arguments as the
 * objects the tools keep.
 *
 * @module
 * @internal
 */
import { createHash } from "node:crypto";
import type { ContentBlock, ToolResultContentBlock } from "../core/message.ts";
import { isRecord, str } from "./values.ts";

const hex = (seed: string): string =>
  createHash("sha256").update(seed).digest("hex");

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a string is a UUID (the session ids Claude Code and Codex look files up by). */
export const isUuid = (s: string): boolean => UUID.test(s);

/**
 * A UUID made from `seed`: the same seed gives the same UUID. Shaped as a
 * version 4 UUID, which every tool parses.
 */
export const uuidOf = (seed: string): string => {
  const h = hex(seed);
  const variant = ((parseInt(h.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${
    h.slice(17, 20)
  }-${h.slice(20, 32)}`;
};

/** The id itself when it is a UUID, else one made from it. */
export const sessionUuid = (id: string): string =>
  isUuid(id) ? id.toLowerCase() : uuidOf(`session:${id}`);

/** Eight hex digits made from `seed` (pi's entry ids). */
export const shortIdOf = (seed: string): string => hex(seed).slice(0, 8);

/** Epoch milliseconds as the ISO time the tools write. */
export const isoOf = (time: number): string => new Date(time).toISOString();

/** The text blocks of a content, joined as one text. */
export const textOf = (content: ReadonlyArray<ContentBlock>): string =>
  content.flatMap((b) => b.type === "text" ? [b.text] : []).join("\n");

/** An image's media type and base64 data, from any attachment the importers keep. */
export const imageData = (attachment: unknown): ImageData | undefined => {
  if (!isRecord(attachment)) return undefined;
  // pi: {mimeType, data}; Claude Code: {type: "base64", media_type, data}.
  const data = str(attachment.data);
  const mimeType = str(attachment.mimeType) ?? str(attachment.media_type);
  if (data !== undefined && mimeType !== undefined) return { mimeType, data };
  // Codex: {url: "data:image/png;base64,..."}.
  const url = str(attachment.url);
  const match = url === undefined
    ? null
    : /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (match === null) return undefined;
  return { mimeType: match[1] ?? "", data: match[2] ?? "" };
};

/** An image as {@link imageData} reads it: its media type and base64 data. */
export type ImageData = { readonly mimeType: string; readonly data: string };

/**
 * A message's blocks as a tool that keeps images as data (pi, Claude Code)
 * holds them: text as text, an image as `image` shapes its data. What the
 * tool cannot hold, an image that is a link or a block of another type, is
 * left out and said through `lost`.
 */
export const dataContent = (
  content: ReadonlyArray<ContentBlock | ToolResultContentBlock>,
  tool: string,
  image: (data: ImageData) => unknown,
  lost: (note: string) => void,
): unknown[] =>
  content.flatMap((b): unknown[] => {
    if (b.type === "text") return [{ type: "text", text: b.text }];
    if (b.type === "image") {
      const data = imageData(b.attachment);
      if (data === undefined) {
        lost(`an image that is a link, not data: ${tool} keeps images as data`);
        return [];
      }
      return [image(data)];
    }
    lost(`a ${b.type} block, which ${tool}'s messages do not hold`);
    return [];
  });

/** An image as a data URL, or its URL when it has one that is not data. */
export const imageUrl = (attachment: unknown): string | undefined => {
  if (isRecord(attachment) && typeof attachment.url === "string") {
    return attachment.url;
  }
  const image = imageData(attachment);
  return image === undefined
    ? undefined
    : `data:${image.mimeType};base64,${image.data}`;
};

/**
 * A call's JSON text as the object pi and Claude Code keep: the parsed
 * object (its text comes back as `JSON.stringify` writes it), or the text
 * itself when it is not a JSON object (the importers read a string back as
 * it is).
 */
export const argumentsValue = (text: string): unknown => {
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : text;
  } catch {
    return text;
  }
};

/**
 * The signatures of an answer's reasoning blocks, by block index, from the
 * `thinking` chunks the importers keep in its stream.
 */
export const signaturesOf = (
  stream: ReadonlyArray<unknown>,
): ReadonlyMap<number, unknown> => {
  const signatures = new Map<number, unknown>();
  for (const chunk of stream) {
    if (
      isRecord(chunk) && chunk.type === "thinking" &&
      typeof chunk.index === "number"
    ) {
      signatures.set(chunk.index, chunk.signature);
    }
  }
  return signatures;
};
