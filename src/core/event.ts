/**
 * The v3 event model: the envelope, the surface operation and the core
 * vocabulary of event types with their data schemas.
 *
 * This module owns shapes and names. Checking a raw value against them, with
 * one error per rule, is `decode.ts`; what events do to the surface is
 * `surface.ts`.
 *
 * @module
 */
import * as Schema from "effect/Schema";
import { SessionSeq } from "./seq.ts";
import {
  Content,
  MessageSource as MessageSourceSchema,
  ModelSource,
  PluginSource,
  ToolResultBlock,
  ToolSource,
} from "./message.ts";
import type {
  ContentBlock,
  MessageSource,
  ModelSource as ModelSourceType,
  PluginSource as PluginSourceType,
  ToolResultBlock as ToolResultBlockType,
  ToolSource as ToolSourceType,
} from "./message.ts";

/** The format version this library reads and writes natively. */
export const FORMAT_VERSION = 3 as const;

/** Replace the inclusive surface range `startSeq..endSeq` by the event. */
export interface ReplaceOp {
  /** The operation. */
  readonly op: "replace";
  /** The first node of the range, in surface order. */
  readonly startSeq: SessionSeq;
  /** The last node of the range, in surface order. */
  readonly endSeq: SessionSeq;
}

/**
 * Return the surface to what it was right after event `toSeq`, then append
 * the event at the tail (a `user/message` only: the new or edited message
 * the session goes on from). The events after `toSeq` stay in the log, as a
 * branch; the event's `sourceEventSeqs` cite exactly the nodes it takes off.
 */
export interface RewindOp {
  /** The operation. */
  readonly op: "rewind";
  /** The event right after which the surface is taken back. */
  readonly toSeq: SessionSeq;
}

/**
 * Where a surface event goes: at the tail (`"append"`), in place of a range
 * (a {@link ReplaceOp}), or, for a `system/message` only, before the head
 * (`"prepend"`: a system prompt given to a surface whose head is not one),
 * or, for a `user/message` only, at the tail of the surface as it was right
 * after an earlier event (a {@link RewindOp}).
 */
export type SurfaceOp = "append" | "prepend" | ReplaceOp | RewindOp;

/** Schema of {@link ReplaceOp}. */
export const ReplaceOp: Schema.Codec<ReplaceOp, unknown> = Schema.Struct({
  op: Schema.Literal("replace"),
  startSeq: SessionSeq,
  endSeq: SessionSeq,
});

/** Schema of {@link RewindOp}. */
export const RewindOp: Schema.Codec<RewindOp, unknown> = Schema.Struct({
  op: Schema.Literal("rewind"),
  toSeq: SessionSeq,
});

/** Schema of {@link SurfaceOp}. */
export const SurfaceOp: Schema.Codec<SurfaceOp, unknown> = Schema.Union([
  Schema.Literal("append"),
  Schema.Literal("prepend"),
  ReplaceOp,
  RewindOp,
]);

/** A turn or step number: a non-negative safe integer. */
export const Counter: Schema.Codec<number> = Schema.Int.check(
  Schema.isGreaterThanOrEqualTo(0),
);

/** One record of a provider stream: when it arrived and the raw chunk. */
export interface StreamRecord {
  /** Epoch milliseconds. */
  readonly time: number;
  /** The provider chunk, opaque JSON. */
  readonly chunk: unknown;
}

/** Schema of {@link StreamRecord}. */
export const StreamRecord: Schema.Codec<StreamRecord> = Schema.Struct({
  time: Schema.Int,
  chunk: Schema.Unknown,
});

// ---------------------------------------------------------------------------
// Surface data

/** A system prompt message. */
export interface SystemMessage {
  /** A non-empty id. */
  readonly id: string;
  /** Always `system`. */
  readonly role: "system";
  /** The prompt; empty means no system prompt. */
  readonly content: ReadonlyArray<ContentBlock>;
  /** The plugin that set the prompt. */
  readonly source: PluginSourceType;
}

/** Data of `system/message`. */
export interface SystemMessageData {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
  /** The message. */
  readonly message: SystemMessage;
}

/** A user-role message (any source). */
export interface UserMessage {
  /** A non-empty id. */
  readonly id: string;
  /** Always `user`. */
  readonly role: "user";
  /** The content. */
  readonly content: ReadonlyArray<ContentBlock>;
  /** Who produced it. */
  readonly source: MessageSource;
}

/** An assistant message, produced by a model. */
export interface AssistantMessage {
  /** A non-empty id. */
  readonly id: string;
  /** Always `assistant`. */
  readonly role: "assistant";
  /** The content; empty derives no message. */
  readonly content: ReadonlyArray<ContentBlock>;
  /** The model. */
  readonly source: ModelSourceType;
}

/** Data of `assistant/message`. */
export interface AssistantMessageData {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
  /** The message. */
  readonly message: AssistantMessage;
  /** The provider stream the message was built from. */
  readonly stream: ReadonlyArray<StreamRecord>;
  /** Token usage as the provider reported it. */
  readonly usage?: unknown;
  /** True when the stream was cut before it finished. */
  readonly interrupted?: boolean;
}

/** A tool result message: user role, one `tool-result` block. */
export interface ToolResultMessage {
  /** A non-empty id. */
  readonly id: string;
  /** Always `user`. */
  readonly role: "user";
  /** Exactly one `tool-result` block. */
  readonly content: readonly [ToolResultBlockType];
  /** The tool call this answers. */
  readonly source: ToolSourceType;
}

/** A tool failure, named for programs. */
export interface ToolError {
  /** The error name. */
  readonly name: string;
  /** A stable code. */
  readonly code: string;
}

/** Data of `tool/result`. */
export interface ToolResultData {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
  /** The message. */
  readonly message: ToolResultMessage;
  /** Present only when the block has `isError: true`. */
  readonly error?: ToolError;
  /** Harness metadata, opaque JSON. */
  readonly meta?: unknown;
}

/** Schema of {@link SystemMessageData}. */
export const SystemMessageData: Schema.Codec<SystemMessageData> = Schema.Struct(
  {
    turn: Counter,
    step: Counter,
    message: Schema.Struct({
      id: Schema.NonEmptyString,
      role: Schema.Literal("system"),
      content: Content,
      source: PluginSource,
    }),
  },
);

/** Schema of `user/message` data: the message itself. */
export const UserMessageData: Schema.Codec<UserMessage> = Schema.Struct({
  id: Schema.NonEmptyString,
  role: Schema.Literal("user"),
  content: Content,
  source: MessageSourceSchema,
});

/** Schema of {@link AssistantMessageData}. */
export const AssistantMessageData: Schema.Codec<AssistantMessageData> = Schema
  .Struct({
    turn: Counter,
    step: Counter,
    message: Schema.Struct({
      id: Schema.NonEmptyString,
      role: Schema.Literal("assistant"),
      content: Content,
      source: ModelSource,
    }),
    stream: Schema.Array(StreamRecord),
    usage: Schema.optionalKey(Schema.Unknown),
    interrupted: Schema.optionalKey(Schema.Boolean),
  });

/** Schema of {@link ToolError}. */
export const ToolError: Schema.Codec<ToolError> = Schema.Struct({
  name: Schema.String,
  code: Schema.String,
});

/** Schema of {@link ToolResultData}. */
export const ToolResultData: Schema.Codec<ToolResultData> = Schema.Struct({
  turn: Counter,
  step: Counter,
  message: Schema.Struct({
    id: Schema.NonEmptyString,
    role: Schema.Literal("user"),
    content: Schema.Tuple([ToolResultBlock]),
    source: ToolSource,
  }).check(
    Schema.makeFilter(
      (m) => m.content[0].toolCallId === m.source.callId,
      { expected: "a tool-result block whose toolCallId equals source.callId" },
    ),
  ),
  error: Schema.optionalKey(ToolError),
  meta: Schema.optionalKey(Schema.Unknown),
});

// ---------------------------------------------------------------------------
// Log-only data

/** Data of `turn/start`. */
export interface TurnStartData {
  /** The turn. */
  readonly turn: number;
}

/** Why a turn ended. */
export interface TurnEndReason {
  /** The reason kind. */
  readonly kind:
    | "completed"
    | "aborted"
    | "blocked"
    | "error"
    | "max-tokens"
    | "interrupted";
  /**
   * For kind `error`: what failed, opaque JSON (the turn loop writes the
   * error's `_tag`, its `reason` and `message`).
   */
  readonly error?: unknown;
}

/** Data of `turn/end`. */
export interface TurnEndData {
  /** The turn. */
  readonly turn: number;
  /** Why it ended. */
  readonly reason: TurnEndReason;
}

/** Data of `step/start` and `step/end`. */
export interface StepData {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
}

/** Data of `assistant/attempt`: a settled attempt with no message. */
export interface AssistantAttemptData {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
  /** The provider stream. */
  readonly stream: ReadonlyArray<StreamRecord>;
}

/**
 * Data of `assistant/partial`: a batch of the stream parts of an answer
 * still streaming, written as they arrive so that a crash keeps them. The
 * answer's `assistant/message` (or `assistant/attempt`) still embeds its
 * whole stream; partial batches never reach the surface.
 */
export interface AssistantPartialData {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
  /**
   * The index, in the request's stream, of the batch's first record: the
   * batches of one request follow each other without a gap, the first at
   * 0 (a batch at 0 starts a new request of the step).
   */
  readonly offset: number;
  /** The records, in the order they arrived. */
  readonly stream: ReadonlyArray<StreamRecord>;
  /** The model, on a request's first batch. */
  readonly source?: ModelSourceType;
}

/** Data of `tool/call`. */
export interface ToolCallData {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
  /** The call id. */
  readonly callId: string;
  /** The tool name. */
  readonly name: string;
  /** The raw JSON text of the arguments. */
  readonly arguments: string;
}

/** The request configuration a header records. */
export interface RequestConfig {
  /** The provider. */
  readonly provider: string;
  /** The model. */
  readonly model: string;
  /** The tools offered, opaque JSON. */
  readonly tools?: unknown;
}

/** Data of `request/header`. */
export interface RequestHeaderData {
  /** The header; v3 forbids a `system` key in it. */
  readonly header: { readonly config: RequestConfig };
  /** Why the header was (re)sent, opaque JSON. */
  readonly reason: unknown;
}

/** Data of `request/context`. */
export interface RequestContextData {
  /** The provider. */
  readonly provider: string;
  /** The model. */
  readonly model: string;
  /** The context window in tokens. */
  readonly contextWindow?: number;
}

/** Data of `session/end-seed`. */
export interface EndSeedData {
  /** True when the seed was inherited from a parent session. */
  readonly inherited?: true;
}

/** Data of `compaction/start`. */
export interface CompactionStartData {
  /** The compaction id. */
  readonly compactionId: string;
  /** The turn, or `null` for a manual compaction between turns. */
  readonly turn: number | null;
  /** The command that asked for the compaction, when one did. */
  readonly sourceCommandId?: string;
}

/** Data of `compaction/summary`. */
export interface CompactionSummaryData {
  /** The compaction id. */
  readonly compactionId: string;
  /** The summary text. */
  readonly summary: string;
  /** The nodes the summary stands for. */
  readonly shadowedSeqs: ReadonlyArray<SessionSeq>;
}

/** Data of `compaction/prune`. */
export interface CompactionPruneData {
  /** The tool results whose content is pruned. */
  readonly shadowedSeqs: ReadonlyArray<SessionSeq>;
}

/** Data of `compaction/end`. */
export interface CompactionEndData {
  /** The compaction id. */
  readonly compactionId: string;
  /** The turn, or `null` for a manual compaction between turns. */
  readonly turn?: number | null;
  /** The command that asked for the compaction, when one did. */
  readonly sourceCommandId?: string;
  /** Why the compaction failed, opaque JSON. */
  readonly error?: unknown;
}

/**
 * Data of `session/metadata`: a change to what people call and file the
 * session under. Each key present changes its field, the last write winning:
 * `title` and `cwd` are replaced (`null` clears them), `tags` replaces the
 * whole set, and `labels` and `values` are merged key by key (a `null`
 * removes the key). Keys absent leave their field as it was.
 */
export interface SessionMetadataData {
  /** The title; `null` clears it. */
  readonly title?: string | null;
  /** The tags, the whole set. */
  readonly tags?: ReadonlyArray<string>;
  /** Labels to set (a string) or remove (`null`), by key. */
  readonly labels?: { readonly [key: string]: string | null };
  /** The working directory; `null` clears it. */
  readonly cwd?: string | null;
  /** Free values to set or remove (`null`), by key, opaque JSON. */
  readonly values?: { readonly [key: string]: unknown };
}

/** Schema of {@link TurnStartData}. */
export const TurnStartData: Schema.Codec<TurnStartData> = Schema.Struct({
  turn: Counter,
});

/** Schema of {@link TurnEndReason}. */
export const TurnEndReason: Schema.Codec<TurnEndReason> = Schema.Struct({
  kind: Schema.Literals([
    "completed",
    "aborted",
    "blocked",
    "error",
    "max-tokens",
    "interrupted",
  ]),
  error: Schema.optionalKey(Schema.Unknown),
});

/** Schema of {@link TurnEndData}. */
export const TurnEndData: Schema.Codec<TurnEndData> = Schema.Struct({
  turn: Counter,
  reason: TurnEndReason,
});

/** Schema of {@link StepData}. */
export const StepData: Schema.Codec<StepData> = Schema.Struct({
  turn: Counter,
  step: Counter,
});

/** Schema of {@link AssistantAttemptData}. */
export const AssistantAttemptData: Schema.Codec<AssistantAttemptData> = Schema
  .Struct({
    turn: Counter,
    step: Counter,
    stream: Schema.Array(StreamRecord),
  });

/** Schema of {@link AssistantPartialData}. */
export const AssistantPartialData: Schema.Codec<AssistantPartialData> = Schema
  .Struct({
    turn: Counter,
    step: Counter,
    offset: Counter,
    stream: Schema.Array(StreamRecord),
    source: Schema.optionalKey(ModelSource),
  });

/** Schema of {@link ToolCallData}. */
export const ToolCallData: Schema.Codec<ToolCallData> = Schema.Struct({
  turn: Counter,
  step: Counter,
  callId: Schema.NonEmptyString,
  name: Schema.String,
  arguments: Schema.String,
});

/** Schema of {@link RequestConfig}. */
export const RequestConfig: Schema.Codec<RequestConfig> = Schema.Struct({
  provider: Schema.String,
  model: Schema.String,
  tools: Schema.optionalKey(Schema.Unknown),
});

/** Schema of {@link RequestHeaderData}. */
export const RequestHeaderData: Schema.Codec<RequestHeaderData> = Schema.Struct(
  {
    header: Schema.Struct({ config: RequestConfig }),
    reason: Schema.Unknown,
  },
);

/** Schema of {@link RequestContextData}. */
export const RequestContextData: Schema.Codec<RequestContextData> = Schema
  .Struct({
    provider: Schema.String,
    model: Schema.String,
    contextWindow: Schema.optionalKey(Counter),
  });

/** Schema of {@link EndSeedData}. */
export const EndSeedData: Schema.Codec<EndSeedData> = Schema.Struct({
  inherited: Schema.optionalKey(Schema.Literal(true)),
});

/** Schema of {@link CompactionStartData}. */
export const CompactionStartData: Schema.Codec<CompactionStartData> = Schema
  .Struct({
    compactionId: Schema.NonEmptyString,
    turn: Schema.NullOr(Counter),
    sourceCommandId: Schema.optionalKey(Schema.NonEmptyString),
  });

/** Schema of {@link CompactionSummaryData}. */
export const CompactionSummaryData: Schema.Codec<
  CompactionSummaryData,
  unknown
> = Schema.Struct({
  compactionId: Schema.NonEmptyString,
  summary: Schema.String,
  shadowedSeqs: Schema.Array(SessionSeq),
});

/** Schema of {@link CompactionPruneData}. */
export const CompactionPruneData: Schema.Codec<CompactionPruneData, unknown> =
  Schema.Struct({
    shadowedSeqs: Schema.Array(SessionSeq),
  });

/** Schema of {@link CompactionEndData}. */
export const CompactionEndData: Schema.Codec<CompactionEndData> = Schema
  .Struct({
    compactionId: Schema.NonEmptyString,
    turn: Schema.optionalKey(Schema.NullOr(Counter)),
    sourceCommandId: Schema.optionalKey(Schema.NonEmptyString),
    error: Schema.optionalKey(Schema.Unknown),
  });

/** Schema of {@link SessionMetadataData}. */
export const SessionMetadataData: Schema.Codec<SessionMetadataData> = Schema
  .Struct({
    title: Schema.optionalKey(Schema.NullOr(Schema.String)),
    tags: Schema.optionalKey(Schema.Array(Schema.NonEmptyString)),
    labels: Schema.optionalKey(
      Schema.Record(Schema.String, Schema.NullOr(Schema.String)),
    ),
    cwd: Schema.optionalKey(Schema.NullOr(Schema.String)),
    values: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  });

// ---------------------------------------------------------------------------
// Events

/** The envelope every event shares. */
export interface EventEnvelope<T extends string, D> {
  /** The event type. */
  readonly type: T;
  /** The position in the log. */
  readonly seq: SessionSeq;
  /** Epoch milliseconds. */
  readonly time: number;
  /** The type's data. */
  readonly data: D;
  /** Present only as `true`: readers that do not know the type may skip it. */
  readonly ignorable?: true;
}

/** A surface event: it names where it goes on the surface. */
export interface SurfaceEnvelope<T extends string, D>
  extends EventEnvelope<T, D> {
  /** Where the event goes on the surface. */
  readonly surfaceOp: SurfaceOp;
  /** Earlier events it stands for: non-empty, unique, each earlier. */
  readonly sourceEventSeqs?: ReadonlyArray<SessionSeq>;
}

/** A log-only event: it never joins the surface. */
export interface LogOnlyEnvelope<T extends string, D>
  extends EventEnvelope<T, D> {
  /** Never present on log-only events. */
  readonly surfaceOp?: never;
  /** Never present on log-only events. */
  readonly sourceEventSeqs?: never;
}

/** `system/message`: the system prompt. */
export type SystemMessageEvent = SurfaceEnvelope<
  "system/message",
  SystemMessageData
>;
/** `user/message`: user input, or a plugin's user-role message. */
export type UserMessageEvent = SurfaceEnvelope<"user/message", UserMessage>;
/** `assistant/message`: model output; it never cites sources. */
export interface AssistantMessageEvent
  extends EventEnvelope<"assistant/message", AssistantMessageData> {
  /** Where the event goes on the surface. */
  readonly surfaceOp: SurfaceOp;
  /** Never present: the message embeds its stream. */
  readonly sourceEventSeqs?: never;
}
/** `tool/result`: a tool's answer, as a user-role message. */
export type ToolResultEvent = SurfaceEnvelope<"tool/result", ToolResultData>;

/** The events that produce messages. */
export type SurfaceEvent =
  | SystemMessageEvent
  | UserMessageEvent
  | AssistantMessageEvent
  | ToolResultEvent;

/** `turn/start`. */
export type TurnStartEvent = LogOnlyEnvelope<"turn/start", TurnStartData>;
/** `turn/end`. */
export type TurnEndEvent = LogOnlyEnvelope<"turn/end", TurnEndData>;
/** `step/start`. */
export type StepStartEvent = LogOnlyEnvelope<"step/start", StepData>;
/** `step/end`. */
export type StepEndEvent = LogOnlyEnvelope<"step/end", StepData>;
/** `assistant/attempt`. */
export type AssistantAttemptEvent = LogOnlyEnvelope<
  "assistant/attempt",
  AssistantAttemptData
>;
/** `assistant/partial`: stream parts of an answer still streaming. */
export type AssistantPartialEvent = LogOnlyEnvelope<
  "assistant/partial",
  AssistantPartialData
>;
/** `tool/call`. */
export type ToolCallEvent = LogOnlyEnvelope<"tool/call", ToolCallData>;
/** `request/header`. */
export type RequestHeaderEvent = LogOnlyEnvelope<
  "request/header",
  RequestHeaderData
>;
/** `request/context`. */
export type RequestContextEvent = LogOnlyEnvelope<
  "request/context",
  RequestContextData
>;
/** `session/end-seed`. */
export type EndSeedEvent = LogOnlyEnvelope<"session/end-seed", EndSeedData>;
/** `compaction/start`. */
export type CompactionStartEvent = LogOnlyEnvelope<
  "compaction/start",
  CompactionStartData
>;
/** `compaction/summary`. */
export type CompactionSummaryEvent = LogOnlyEnvelope<
  "compaction/summary",
  CompactionSummaryData
>;
/** `compaction/prune`. */
export type CompactionPruneEvent = LogOnlyEnvelope<
  "compaction/prune",
  CompactionPruneData
>;
/** `compaction/end`. */
export type CompactionEndEvent = LogOnlyEnvelope<
  "compaction/end",
  CompactionEndData
>;

/** `session/metadata`: a title, tags, labels, a folder or values set. */
export type SessionMetadataEvent = LogOnlyEnvelope<
  "session/metadata",
  SessionMetadataData
>;

/** The core log-only events. */
export type LogOnlyEvent =
  | TurnStartEvent
  | TurnEndEvent
  | StepStartEvent
  | StepEndEvent
  | AssistantAttemptEvent
  | AssistantPartialEvent
  | ToolCallEvent
  | RequestHeaderEvent
  | RequestContextEvent
  | EndSeedEvent
  | CompactionStartEvent
  | CompactionSummaryEvent
  | CompactionPruneEvent
  | CompactionEndEvent
  | SessionMetadataEvent;

/** Every event of the core vocabulary. */
export type CoreEvent = SurfaceEvent | LogOnlyEvent;

declare const foreignTypeName: unique symbol;

/**
 * The type name of an extension or opaque event. At run time it is the
 * string the log holds; the compiler keeps it apart from the core names, so
 * that `event.type === "tool/call"` (or a `switch (event.type)`) narrows a
 * {@link SessionEvent} to the core event and its data. Reach these events
 * with {@link isForeignEvent}, {@link isExtensionEvent} or
 * {@link isOpaqueEvent}, and read the name with {@link eventTypeName}.
 */
export interface ForeignTypeName extends String {
  /** Type-level only: no such property exists at run time. */
  readonly [foreignTypeName]: "ForeignTypeName";
}

/** A log-only event of a caller's extra vocabulary. */
export interface ExtensionEvent {
  /** The extension type's name (a string at run time). */
  readonly type: ForeignTypeName;
  /** The position in the log. */
  readonly seq: SessionSeq;
  /** Epoch milliseconds. */
  readonly time: number;
  /** The data, as the vocabulary's schema decoded it. */
  readonly data: unknown;
  /** Present only as `true`. */
  readonly ignorable?: true;
  /** Never present on log-only events. */
  readonly surfaceOp?: never;
  /** Never present on log-only events. */
  readonly sourceEventSeqs?: never;
}

/**
 * An `ignorable: true` event of a type outside the vocabulary: kept as it
 * was read, never interpreted, never on the surface.
 */
export interface OpaqueEvent {
  /** The unknown type's name (a string at run time). */
  readonly type: ForeignTypeName;
  /** The position in the log. */
  readonly seq: SessionSeq;
  /** Epoch milliseconds. */
  readonly time: number;
  /** Kept as read, not interpreted. */
  readonly data: unknown;
  /** Always `true`. */
  readonly ignorable: true;
  /** Kept as read, not interpreted. */
  readonly surfaceOp?: unknown;
  /** Kept as read, not interpreted. */
  readonly sourceEventSeqs?: unknown;
}

/** An event outside the core vocabulary: an extension or an opaque one. */
export type ForeignEvent = ExtensionEvent | OpaqueEvent;

/**
 * A decoded event. Its `type` narrows it: comparing `event.type` with a core
 * name, or switching on it, reaches that core event with its data; the
 * `default` branch holds the {@link ForeignEvent}s.
 */
export type SessionEvent = CoreEvent | ForeignEvent;

/** The core surface types. */
export type SurfaceType = SurfaceEvent["type"];
/** The core log-only types. */
export type LogOnlyType = LogOnlyEvent["type"];
/** The core types. */
export type CoreType = CoreEvent["type"];

/** The data schema of each surface type. */
export const surfaceDataSchemas: {
  readonly [K in SurfaceType]: Schema.Codec<
    Extract<SurfaceEvent, { type: K }>["data"],
    unknown
  >;
} = {
  "system/message": SystemMessageData,
  "user/message": UserMessageData,
  "assistant/message": AssistantMessageData,
  "tool/result": ToolResultData,
};

/** The data schema of each core log-only type. */
export const logOnlyDataSchemas: {
  readonly [K in LogOnlyType]: Schema.Codec<
    Extract<LogOnlyEvent, { type: K }>["data"],
    unknown
  >;
} = {
  "turn/start": TurnStartData,
  "turn/end": TurnEndData,
  "step/start": StepData,
  "step/end": StepData,
  "assistant/attempt": AssistantAttemptData,
  "assistant/partial": AssistantPartialData,
  "tool/call": ToolCallData,
  "request/header": RequestHeaderData,
  "request/context": RequestContextData,
  "session/end-seed": EndSeedData,
  "compaction/start": CompactionStartData,
  "compaction/summary": CompactionSummaryData,
  "compaction/prune": CompactionPruneData,
  "compaction/end": CompactionEndData,
  "session/metadata": SessionMetadataData,
};

// Typed `unknown` so that an event's type, core or foreign, is looked up
// as it is at run time: a string.
const SURFACE_TYPES: ReadonlySet<unknown> = new Set(
  Object.keys(surfaceDataSchemas),
);
const LOG_ONLY_TYPES: ReadonlySet<unknown> = new Set(
  Object.keys(logOnlyDataSchemas),
);

/**
 * Returns true for the four surface types.
 *
 * @param type An event type.
 * @returns Whether events of this type join the surface.
 *
 * @example Telling surface types from log-only ones
 * ```ts
 * import { isSurfaceType } from "@palimpsest/session/schema";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isSurfaceType("tool/result"), true);
 * assert.equal(isSurfaceType("tool/call"), false);
 * ```
 */
export function isSurfaceType(type: string): type is SurfaceType {
  return SURFACE_TYPES.has(type);
}

/**
 * Returns true for the core log-only types.
 *
 * @param type An event type.
 * @returns Whether the type is a core log-only type.
 *
 * @example Core log-only types
 * ```ts
 * import { isLogOnlyType } from "@palimpsest/session/schema";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isLogOnlyType("turn/start"), true);
 * assert.equal(isLogOnlyType("user/message"), false);
 * ```
 */
export function isLogOnlyType(type: string): type is LogOnlyType {
  return LOG_ONLY_TYPES.has(type);
}

/**
 * Returns true when the event is of the core vocabulary. A
 * {@link SessionEvent} narrows on its `type` without this guard; it serves
 * code that wants the core events of a list, or to rule out the
 * {@link ForeignEvent}s in one step.
 *
 * @param event A decoded event.
 * @returns Whether the event is a {@link CoreEvent}.
 *
 * @example Keeping the core events
 * ```ts
 * import { decodeEvent, isCoreEvent } from "@palimpsest/session/schema";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = Effect.runSync(decodeEvent({
 *   type: "future/thing", seq: 0, time: 0, data: null, ignorable: true,
 * }));
 * assert.equal(isCoreEvent(event), false);
 * ```
 */
export function isCoreEvent(event: SessionEvent): event is CoreEvent {
  return SURFACE_TYPES.has(event.type) || LOG_ONLY_TYPES.has(event.type);
}

/**
 * Returns true for an event outside the core vocabulary: an extension event
 * (a type of the caller's vocabulary) or an opaque one (an unknown
 * `ignorable: true` type, kept as read). Past this guard, read the event's
 * name with {@link eventTypeName}.
 *
 * @param event A decoded event.
 * @returns Whether the event is a {@link ForeignEvent}.
 *
 * @example Reaching an extension event
 * ```ts
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { makeVocabulary } from "@palimpsest/session";
 * import { eventTypeName, isForeignEvent } from "@palimpsest/session/schema";
 * import { Result, Schema } from "effect";
 * import assert from "node:assert/strict";
 *
 * const vocabulary = makeVocabulary({
 *   "harness/checkpoint": Schema.Struct({ label: Schema.String }),
 * });
 * const event = Result.getOrThrow(decodeEventResult(
 *   { type: "harness/checkpoint", seq: 0, time: 0, data: { label: "a" } },
 *   { vocabulary },
 * ));
 * assert.equal(isForeignEvent(event) && eventTypeName(event), "harness/checkpoint");
 * ```
 */
export function isForeignEvent(event: SessionEvent): event is ForeignEvent {
  return !SURFACE_TYPES.has(event.type) && !LOG_ONLY_TYPES.has(event.type);
}

/**
 * The name of an event's type, as the log holds it. For a core event it is
 * the same as `event.type`; for a {@link ForeignEvent} it is the way to read
 * the name as a `string`.
 *
 * @param event A decoded event.
 * @returns The type's name.
 *
 * @example Naming core and opaque events alike
 * ```ts
 * import { decodeEvent, eventTypeName } from "@palimpsest/session/schema";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const events = [
 *   { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
 *   { type: "future/thing", seq: 1, time: 0, data: null, ignorable: true },
 * ].map((value) => Effect.runSync(decodeEvent(value)));
 * assert.deepEqual(events.map(eventTypeName), ["turn/start", "future/thing"]);
 * ```
 */
export function eventTypeName(event: SessionEvent): string {
  return String(event.type);
}

/**
 * Narrows a decoded event to a surface event.
 *
 * @param event A decoded event.
 * @returns Whether the event is one of the four surface types.
 *
 * @example Narrowing
 * ```ts
 * import { isSurfaceEvent } from "@palimpsest/session";
 * import { decodeEvent } from "@palimpsest/session/schema";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = Effect.runSync(decodeEvent({
 *   type: "turn/start", seq: 0, time: 0, data: { turn: 0 },
 * }));
 * assert.equal(isSurfaceEvent(event), false);
 * ```
 */
export function isSurfaceEvent(event: SessionEvent): event is SurfaceEvent {
  return SURFACE_TYPES.has(event.type);
}
