/**
 * Messages and content blocks: what a model is sent and what it answers.
 *
 * This module owns the message shapes shared by every surface event. It does
 * not know which event carries which message; the event vocabulary narrows
 * roles and sources per type. Objects may carry keys beyond the ones listed:
 * they are kept as they are and compared as JSON where a rule needs it.
 *
 * @module
 */
import * as Schema from "effect/Schema";

/** A plain text block. */
export interface TextBlock {
  /** The block kind. */
  readonly type: "text";
  /** The text. */
  readonly text: string;
}

/** Model reasoning kept beside the answer. */
export interface ReasoningBlock {
  /** The block kind. */
  readonly type: "reasoning";
  /** The reasoning text. */
  readonly text: string;
}

/** An image, described by an attachment the harness resolves. */
export interface ImageBlock {
  /** The block kind. */
  readonly type: "image";
  /** An opaque JSON description of the attachment (a path, an id, a URL). */
  readonly attachment: unknown;
}

/** A file, described by an attachment the harness resolves. */
export interface FileBlock {
  /** The block kind. */
  readonly type: "file";
  /** An opaque JSON description of the attachment (a path, an id, a URL). */
  readonly attachment: unknown;
}

/** A call the model asks a tool to make. */
export interface ToolCallBlock {
  /** The block kind. */
  readonly type: "tool-call";
  /** The call id, answered by a `tool-result` block with this `toolCallId`. */
  readonly id: string;
  /** The tool name. */
  readonly name: string;
  /** The raw JSON text of the arguments, exactly as the model produced it. */
  readonly arguments: string;
}

/** The blocks a tool result may hold. */
export type ToolResultContentBlock = TextBlock | ImageBlock | FileBlock;

/** The answer to one tool call. */
export interface ToolResultBlock {
  /** The block kind. */
  readonly type: "tool-result";
  /** The id of the `tool-call` block this answers. */
  readonly toolCallId: string;
  /** What the tool returned. */
  readonly content: ReadonlyArray<ToolResultContentBlock>;
  /** Present and `true` when the tool failed. */
  readonly isError?: boolean;
}

/** Any content block. */
export type ContentBlock =
  | TextBlock
  | ReasoningBlock
  | ImageBlock
  | FileBlock
  | ToolCallBlock
  | ToolResultBlock;

/** A message typed by a person. */
export interface UserSource {
  /** The producer kind. */
  readonly kind: "user";
}

/** A producer of another kind; its keys are kept as they are. */
export interface OtherSource {
  /** The producer kind. */
  readonly kind: string;
  /** Further keys. */
  readonly [key: string]: unknown;
}

/**
 * Who produced a message. `kind` names the producer; other keys say more and
 * are kept as they are.
 */
export type MessageSource =
  | UserSource
  | PluginSource
  | ModelSource
  | ToolSource
  | OtherSource;

/** A message produced by a plugin (a system prompt, a compaction summary). */
export interface PluginSource {
  /** The producer kind. */
  readonly kind: "plugin";
  /** The plugin name. */
  readonly plugin: string;
}

/** A message produced by a model. */
export interface ModelSource {
  /** The producer kind. */
  readonly kind: "model";
  /** The provider name. */
  readonly provider: string;
  /** The model name. */
  readonly model: string;
}

/** A message produced by a tool. */
export interface ToolSource {
  /** The producer kind. */
  readonly kind: "tool";
  /** The id of the call this answers. */
  readonly callId: string;
}

/** The roles a derived message can have (tool results are `user`). */
export type Role = "system" | "user" | "assistant";

/** A message as a model sees it. */
export interface Message {
  /** A non-empty id, unique within the session. */
  readonly id: string;
  /** The role. */
  readonly role: Role;
  /** The content blocks, in order. */
  readonly content: ReadonlyArray<ContentBlock>;
  /** Who produced it. */
  readonly source: MessageSource;
}

// Text and reasoning blocks share one shape, as do image and file blocks.
const textBlockOf = <T extends "text" | "reasoning">(type: T) =>
  Schema.Struct({ type: Schema.Literal(type), text: Schema.String });
const attachmentBlockOf = <T extends "image" | "file">(type: T) =>
  Schema.Struct({ type: Schema.Literal(type), attachment: Schema.Unknown });

/** Schema of {@link TextBlock}. */
export const TextBlock: Schema.Codec<TextBlock> = textBlockOf("text");
/** Schema of {@link ReasoningBlock}. */
export const ReasoningBlock: Schema.Codec<ReasoningBlock> = textBlockOf(
  "reasoning",
);
/** Schema of {@link ImageBlock}. */
export const ImageBlock: Schema.Codec<ImageBlock> = attachmentBlockOf("image");
/** Schema of {@link FileBlock}. */
export const FileBlock: Schema.Codec<FileBlock> = attachmentBlockOf("file");

/** Schema of {@link ToolCallBlock}. */
export const ToolCallBlock: Schema.Codec<ToolCallBlock> = Schema.Struct({
  type: Schema.Literal("tool-call"),
  id: Schema.NonEmptyString,
  name: Schema.String,
  arguments: Schema.String,
});

/** Schema of {@link ToolResultContentBlock}. */
export const ToolResultContentBlock: Schema.Codec<ToolResultContentBlock> =
  Schema.Union([TextBlock, ImageBlock, FileBlock]);

/** Schema of {@link ToolResultBlock}. */
export const ToolResultBlock: Schema.Codec<ToolResultBlock> = Schema.Struct({
  type: Schema.Literal("tool-result"),
  toolCallId: Schema.NonEmptyString,
  content: Schema.Array(ToolResultContentBlock),
  isError: Schema.optionalKey(Schema.Boolean),
});

/** Schema of {@link ContentBlock}. */
export const ContentBlock: Schema.Codec<ContentBlock> = Schema.Union([
  TextBlock,
  ReasoningBlock,
  ImageBlock,
  FileBlock,
  ToolCallBlock,
  ToolResultBlock,
]);

/** Schema of a message's content: an array of {@link ContentBlock}. */
export const Content: Schema.Codec<ReadonlyArray<ContentBlock>> = Schema.Array(
  ContentBlock,
);

/** Schema of {@link MessageSource}. */
export const MessageSource: Schema.Codec<MessageSource> = Schema.Struct({
  kind: Schema.NonEmptyString,
});

/** Schema of {@link PluginSource}. */
export const PluginSource: Schema.Codec<PluginSource> = Schema.Struct({
  kind: Schema.Literal("plugin"),
  plugin: Schema.NonEmptyString,
});

/** Schema of {@link ModelSource}. */
export const ModelSource: Schema.Codec<ModelSource> = Schema.Struct({
  kind: Schema.Literal("model"),
  provider: Schema.String,
  model: Schema.String,
});

/** Schema of {@link ToolSource}. */
export const ToolSource: Schema.Codec<ToolSource> = Schema.Struct({
  kind: Schema.Literal("tool"),
  callId: Schema.NonEmptyString,
});

/** Schema of {@link Role}. */
export const Role: Schema.Codec<Role> = Schema.Literals([
  "system",
  "user",
  "assistant",
]);

/** Schema of {@link Message}. */
export const Message: Schema.Codec<Message> = Schema.Struct({
  id: Schema.NonEmptyString,
  role: Role,
  content: Content,
  source: MessageSource,
});
