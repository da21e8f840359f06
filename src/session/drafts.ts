/**
 * Draft constructors: the events a harness appends, one short call each,
 * with the surface metadata right by construction.
 *
 * - Surface drafts (`user/message`, `system/message`, `assistant/message`,
 *   `tool/result`) are appended at the tail (`surfaceOp: "append"`).
 * - A tool result cites its call: {@link Draft}`.toolResult` reads the
 *   `tool/call` event it is given (as `append` returned it, with its seq) and
 *   puts that seq in `sourceEventSeqs`, its call id in the block and the
 *   source, and its turn and step in the data.
 * - An assistant message never cites (its draft type has no
 *   `sourceEventSeqs`); turn and step markers and tool calls are log-only and
 *   carry no surface metadata.
 *
 * Message ids are deterministic: pass `id` to choose one; otherwise it is
 * derived from what the message is, never from a clock or a random source,
 * so the same program writes the same log. A tool result's default id is
 * `result-<callId>`; a user, system or assistant message's default id is its
 * role's prefix (`user-`, `system-`, `assistant-`) and a 32-bit FNV-1a hash
 * of its turn, step and content. Two identical messages in the same turn and
 * step therefore share an id (nothing in the format requires ids to be
 * unique); pass `id` where that matters.
 *
 * @module
 */
import { fnv1a } from "../core/hash.ts";
import { jsonText } from "../core/json.ts";
import type {
  ContentBlock,
  MessageSource,
  ToolCallBlock,
  ToolResultBlock,
  ToolResultContentBlock,
} from "../core/message.ts";
import type {
  SessionEvent,
  StreamRecord,
  ToolCallEvent,
  ToolError,
  TurnEndReason,
} from "../core/event.ts";
import type {
  AssistantMessageDraft,
  CitingSurfaceDraft,
  LogOnlyDraft,
} from "./session.ts";

/** A `user/message` draft. */
export type UserMessageDraft = Extract<
  CitingSurfaceDraft,
  { type: "user/message" }
>;
/** A `system/message` draft. */
export type SystemMessageDraft = Extract<
  CitingSurfaceDraft,
  { type: "system/message" }
>;
/** A `tool/result` draft. */
export type ToolResultDraft = Extract<
  CitingSurfaceDraft,
  { type: "tool/result" }
>;
/** A `tool/call` draft. */
export type ToolCallDraft = Extract<LogOnlyDraft, { type: "tool/call" }>;
/** A `turn/start` draft. */
export type TurnStartDraft = Extract<LogOnlyDraft, { type: "turn/start" }>;
/** A `turn/end` draft. */
export type TurnEndDraft = Extract<LogOnlyDraft, { type: "turn/end" }>;
/** A `step/start` draft. */
export type StepStartDraft = Extract<LogOnlyDraft, { type: "step/start" }>;
/** A `step/end` draft. */
export type StepEndDraft = Extract<LogOnlyDraft, { type: "step/end" }>;

/** Text, or content blocks as they are. */
export type DraftContent = string | ReadonlyArray<ContentBlock>;

/** Options of {@link Draft}`.user`. */
export interface UserOptions {
  /** The message id; derived from the content when absent. */
  readonly id?: string;
  /** Who produced it; `{ kind: "user" }` by default. */
  readonly source?: MessageSource;
}

/** Options of {@link Draft}`.system`. */
export interface SystemOptions {
  /** The message id; derived from turn, step and text when absent. */
  readonly id?: string;
  /** The turn; 0 by default. */
  readonly turn?: number;
  /** The step; 0 by default. */
  readonly step?: number;
  /** The plugin that sets the prompt; `"system-prompt"` by default. */
  readonly plugin?: string;
}

/** One tool call of an assistant message. */
export interface DraftToolCall {
  /** The call id, unique within the session. */
  readonly id: string;
  /** The tool name. */
  readonly name: string;
  /** The arguments: the raw JSON text, or a value to `JSON.stringify`. */
  readonly arguments: unknown;
}

/** What {@link Draft}`.assistant` takes. */
export interface AssistantInput {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
  /** The provider, e.g. `"anthropic"`. */
  readonly provider: string;
  /** The model, e.g. `"claude-sonnet-4"`. */
  readonly model: string;
  /** The answer's text or blocks; none by default. */
  readonly content?: DraftContent;
  /** Tool calls, appended to the content as `tool-call` blocks. */
  readonly toolCalls?: ReadonlyArray<DraftToolCall>;
  /** The provider stream the answer was built from; `[]` by default. */
  readonly stream?: ReadonlyArray<StreamRecord>;
  /** Token usage as the provider reported it. */
  readonly usage?: unknown;
  /** True when the stream was cut before it finished. */
  readonly interrupted?: boolean;
  /** The message id; derived from turn, step and content when absent. */
  readonly id?: string;
}

/** What {@link Draft}`.toolCall` takes. */
export interface ToolCallInput {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
  /** The call id, as in the assistant message's `tool-call` block. */
  readonly callId: string;
  /** The tool name. */
  readonly name: string;
  /** The arguments: the raw JSON text, or a value to `JSON.stringify`. */
  readonly arguments: unknown;
}

/** Options of {@link Draft}`.toolResult`. */
export interface ToolResultOptions {
  /** The message id; `result-<callId>` by default. */
  readonly id?: string;
  /** The tool failed: the block gets `isError: true`. */
  readonly isError?: boolean;
  /** The failure's name and code; implies `isError`. */
  readonly error?: ToolError;
  /** Harness metadata, opaque JSON. */
  readonly meta?: unknown;
}

/** The draft constructors; see the module documentation. */
export interface DraftApi {
  /**
   * A `user/message` appended at the tail.
   *
   * @param content Text, or content blocks.
   * @param options `id` and `source`.
   * @returns The draft.
   */
  readonly user: (
    content: DraftContent,
    options?: UserOptions,
  ) => UserMessageDraft;
  /**
   * A `system/message` appended at the tail (to replace the prompt at the
   * head of a non-empty surface, use `setSystemPrompt`).
   *
   * @param text The prompt; `""` for none (the node derives no message).
   * @param options `id`, `turn`, `step` and `plugin`.
   * @returns The draft.
   */
  readonly system: (
    text: string,
    options?: SystemOptions,
  ) => SystemMessageDraft;
  /**
   * An `assistant/message` appended at the tail; it never cites.
   *
   * @param input Turn, step, provider, model, content, tool calls, stream.
   * @returns The draft.
   */
  readonly assistant: (input: AssistantInput) => AssistantMessageDraft;
  /**
   * A `tool/call` record (log-only).
   *
   * @param input Turn, step, call id, tool name and arguments.
   * @returns The draft.
   */
  readonly toolCall: (input: ToolCallInput) => ToolCallDraft;
  /**
   * The `tool/call` drafts of an assistant draft's `tool-call` blocks, in
   * order, with its turn and step.
   *
   * @param assistant An assistant draft.
   * @returns One `tool/call` draft per call.
   */
  readonly toolCalls: (
    assistant: AssistantMessageDraft,
  ) => ReadonlyArray<ToolCallDraft>;
  /**
   * The `tool/call` events among appended events (what the store's `append`
   * returns), in order: the calls to run and answer with `toolResult`.
   *
   * @param events Events as appended, with their seqs.
   * @returns The `tool/call` events.
   */
  readonly callsIn: (
    events: Iterable<SessionEvent>,
  ) => ReadonlyArray<ToolCallEvent>;
  /**
   * A `tool/result` appended at the tail that answers and cites `call`: its
   * `sourceEventSeqs` is `[call.seq]`, its block's `toolCallId` and source
   * are the call id, its turn and step the call's.
   *
   * @param call The `tool/call` event, as appended (with its seq).
   * @param content Text, or tool-result content blocks.
   * @param options `id`, `isError`, `error`, `meta`.
   * @returns The draft.
   */
  readonly toolResult: (
    call: ToolCallEvent,
    content: string | ReadonlyArray<ToolResultContentBlock>,
    options?: ToolResultOptions,
  ) => ToolResultDraft;
  /**
   * A `turn/start` marker.
   *
   * @param turn The turn.
   * @returns The draft.
   */
  readonly turnStart: (turn: number) => TurnStartDraft;
  /**
   * A `turn/end` marker.
   *
   * @param turn The turn.
   * @param reason Why it ended: a reason kind or the reason object.
   * @returns The draft.
   */
  readonly turnEnd: (
    turn: number,
    reason: TurnEndReason["kind"] | TurnEndReason,
  ) => TurnEndDraft;
  /**
   * A `step/start` marker.
   *
   * @param turn The turn.
   * @param step The step.
   * @returns The draft.
   */
  readonly stepStart: (turn: number, step: number) => StepStartDraft;
  /**
   * A `step/end` marker.
   *
   * @param turn The turn.
   * @param step The step.
   * @returns The draft.
   */
  readonly stepEnd: (turn: number, step: number) => StepEndDraft;
}

const idOf = (prefix: string, ...parts: ReadonlyArray<unknown>): string =>
  `${prefix}-${fnv1a(JSON.stringify(parts))}`;

const blocksOf = (content: DraftContent): ReadonlyArray<ContentBlock> =>
  typeof content === "string" ? [{ type: "text", text: content }] : content;

const user = (
  content: DraftContent,
  options?: UserOptions,
): UserMessageDraft => {
  const blocks = blocksOf(content);
  return {
    type: "user/message",
    surfaceOp: "append",
    data: {
      id: options?.id ?? idOf("user", blocks),
      role: "user",
      content: blocks,
      source: options?.source ?? { kind: "user" },
    },
  };
};

const system = (text: string, options?: SystemOptions): SystemMessageDraft => {
  const turn = options?.turn ?? 0;
  const step = options?.step ?? 0;
  const content: ReadonlyArray<ContentBlock> = text === ""
    ? []
    : [{ type: "text", text }];
  return {
    type: "system/message",
    surfaceOp: "append",
    data: {
      turn,
      step,
      message: {
        id: options?.id ?? idOf("system", turn, step, content),
        role: "system",
        content,
        source: { kind: "plugin", plugin: options?.plugin ?? "system-prompt" },
      },
    },
  };
};

const assistant = (input: AssistantInput): AssistantMessageDraft => {
  const calls: ReadonlyArray<ToolCallBlock> = (input.toolCalls ?? []).map((
    call,
  ) => ({
    type: "tool-call",
    id: call.id,
    name: call.name,
    arguments: jsonText(call.arguments),
  }));
  const content = [
    ...blocksOf(input.content ?? []),
    ...calls,
  ];
  return {
    type: "assistant/message",
    surfaceOp: "append",
    data: {
      turn: input.turn,
      step: input.step,
      message: {
        id: input.id ?? idOf("assistant", input.turn, input.step, content),
        role: "assistant",
        content,
        source: {
          kind: "model",
          provider: input.provider,
          model: input.model,
        },
      },
      stream: input.stream ?? [],
      ...(input.usage === undefined ? {} : { usage: input.usage }),
      ...(input.interrupted === undefined
        ? {}
        : { interrupted: input.interrupted }),
    },
  };
};

const toolCall = (input: ToolCallInput): ToolCallDraft => ({
  type: "tool/call",
  data: {
    turn: input.turn,
    step: input.step,
    callId: input.callId,
    name: input.name,
    arguments: jsonText(input.arguments),
  },
});

const toolCalls = (
  draft: AssistantMessageDraft,
): ReadonlyArray<ToolCallDraft> => {
  const out: ToolCallDraft[] = [];
  for (const block of draft.data.message.content) {
    if (block.type !== "tool-call") continue;
    out.push(toolCall({
      turn: draft.data.turn,
      step: draft.data.step,
      callId: block.id,
      name: block.name,
      arguments: block.arguments,
    }));
  }
  return out;
};

const isToolCall = (event: SessionEvent): event is ToolCallEvent =>
  event.type === "tool/call";

const callsIn = (
  events: Iterable<SessionEvent>,
): ReadonlyArray<ToolCallEvent> => {
  const out: ToolCallEvent[] = [];
  for (const event of events) if (isToolCall(event)) out.push(event);
  return out;
};

const toolResult = (
  call: ToolCallEvent,
  content: string | ReadonlyArray<ToolResultContentBlock>,
  options?: ToolResultOptions,
): ToolResultDraft => {
  const callId = call.data.callId;
  const isError = options?.isError === true || options?.error !== undefined;
  const block: ToolResultBlock = {
    type: "tool-result",
    toolCallId: callId,
    content: typeof content === "string"
      ? [{ type: "text", text: content }]
      : content,
    ...(isError ? { isError: true } : {}),
  };
  return {
    type: "tool/result",
    surfaceOp: "append",
    sourceEventSeqs: [call.seq],
    data: {
      turn: call.data.turn,
      step: call.data.step,
      message: {
        id: options?.id ?? `result-${callId}`,
        role: "user",
        content: [block],
        source: { kind: "tool", callId },
      },
      ...(options?.error === undefined ? {} : { error: options.error }),
      ...(options?.meta === undefined ? {} : { meta: options.meta }),
    },
  };
};

/**
 * The draft constructors, one per core event a harness writes: `user`,
 * `system`, `assistant` (with its stream and tool calls), `toolCall`,
 * `toolCalls` (the `tool/call` records of an assistant draft), `callsIn`
 * (the `tool/call` events among appended ones), `toolResult` (citing its
 * call), `turnStart`, `turnEnd`, `stepStart`, `stepEnd`. Each
 * returns a plain draft for `Session.append` or the store's `append`.
 *
 * @example One turn with a tool call
 * ```ts
 * import { deriveMessages, Draft, Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   let s = Session.make({ id: "demo", createdAt: 0, isSeeded: false });
 *   s = yield* Session.appendAll(s, [
 *     Draft.turnStart(0),
 *     Draft.user("What is in notes.txt?"),
 *     Draft.stepStart(0, 0),
 *   ]);
 *   const answer = Draft.assistant({
 *     turn: 0, step: 0, provider: "scripted", model: "m1",
 *     toolCalls: [{ id: "c1", name: "read", arguments: { path: "notes.txt" } }],
 *   });
 *   const from = Session.nextSeq(s);
 *   s = yield* Session.appendAll(s, [answer, ...Draft.toolCalls(answer)]);
 *   const appended = yield* Effect.fromResult(Session.events(s, from));
 *   for (const call of Draft.callsIn(appended)) {
 *     s = yield* Session.append(s, Draft.toolResult(call, "three lines"));
 *   }
 *   return deriveMessages(s.surface);
 * });
 * const messages = Effect.runSync(program);
 * assert.deepEqual(messages.map((m) => m.role), ["user", "assistant", "user"]);
 * assert.equal(messages[2]?.id, "result-c1");
 * ```
 */
export const Draft: DraftApi = {
  user,
  system,
  assistant,
  toolCall,
  toolCalls,
  callsIn,
  toolResult,
  turnStart: (turn) => ({ type: "turn/start", data: { turn } }),
  turnEnd: (turn, reason) => ({
    type: "turn/end",
    data: {
      turn,
      reason: typeof reason === "string" ? { kind: reason } : reason,
    },
  }),
  stepStart: (turn, step) => ({ type: "step/start", data: { turn, step } }),
  stepEnd: (turn, step) => ({ type: "step/end", data: { turn, step } }),
};
