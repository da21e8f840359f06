/**
 * Recording a model's answer: from the `effect/ai` stream parts of one
 * request to the events that keep it.
 *
 * The answer becomes one `assistant/message` draft that embeds the stream
 * as `{ time, chunk }` records (each chunk is the encoded `effect/ai`
 * stream part, as JSON), plus one `tool/call` draft per tool call, which the
 * turn loop appends just before it runs that tool. An answer cut short (no
 * `finish` part: the stream failed, reported an `error` part, or the fiber
 * was interrupted) keeps what came out with `interrupted: true`; when
 * nothing came out (no text, reasoning or tool call) it is an
 * `assistant/attempt` instead, which keeps the stream off the surface.
 *
 * Decisions:
 *
 * - Text and reasoning blocks are built from `*-start`, `*-delta` and
 *   `*-end` parts in the order they started; a delta for an id never started
 *   starts its block. Blocks with no text are dropped.
 * - A tool call's `arguments` are `JSON.stringify` of the parameters as the
 *   provider sent them (`effect/ai` hands them over parsed); missing
 *   parameters are `{}`.
 * - Calls the provider ran itself (`providerExecuted: true`) stay in the
 *   stream but not in the message: nothing in the log could answer them.
 * - Call ids are unique in the session. Many providers number calls per
 *   answer (`call_0` every time), and pairing drops a call whose id was
 *   used before, so a call whose id is in `usedCallIds`, or repeats an
 *   earlier call of the same answer, gets a fresh id: the provider's id,
 *   `_` and the first number that makes it new and unlike every id of the
 *   answer (cut to stay within 64 characters). The message's `tool-call` block, its `tool/call` and the
 *   result carry the fresh id; the stream keeps the provider's chunk as it
 *   came, so the provider's id of the message's k-th call is that of the
 *   stream's k-th `tool-call` part not run by the provider
 *   ({@link RecordedAnswer.providerCallIds}).
 * - `usage` is the `finish` part's usage, encoded.
 *
 * The module is pure: it does not read the clock or append anything; see
 * `turn.ts` for the loop that does.
 *
 * @module
 */
import type { Response } from "effect/ai";
import type {
  ContentBlock,
  Message,
  ModelSource,
  ToolCallBlock,
} from "../core/message.ts";
import type {
  AssistantAttemptData,
  SessionEvent,
  StreamRecord,
} from "../core/event.ts";
import type {
  AssistantMessageDraft,
  EventDraft,
  Session,
} from "../session/session.ts";
import { Draft } from "../session/drafts.ts";
import { deriveMessages } from "../session/derive.ts";
import { heldEvents } from "../session/prior.ts";

/** One stream part as the log keeps it: its time and its encoded JSON. */
export interface TimedPart {
  /** Epoch milliseconds when the part arrived. */
  readonly time: number;
  /** The encoded `effect/ai` stream part. */
  readonly chunk: Response.StreamPartEncoded;
}

/** Where an answer belongs and what its message is called. */
export interface RecordOptions {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
  /** The id the assistant message gets. */
  readonly messageId: string;
  /** The model that answered. */
  readonly source: ModelSource;
  /**
   * True when the stream is known to be cut (the fiber was interrupted or
   * the request failed), even if a `finish` part came.
   */
  readonly cut?: boolean;
  /**
   * The call ids the session already uses (see {@link sessionCallIds}); a
   * call that reuses one gets a fresh id. None by default.
   */
  readonly usedCallIds?: ReadonlySet<string>;
}

/** An `assistant/attempt` draft: a settled attempt with no message. */
export interface AssistantAttemptDraft {
  /** The event type. */
  readonly type: "assistant/attempt";
  /** The data. */
  readonly data: AssistantAttemptData;
}

/** What {@link recordAnswer} made of a stream. */
export interface RecordedAnswer {
  /** The `assistant/message` or `assistant/attempt` draft. */
  readonly draft: AssistantMessageDraft | AssistantAttemptDraft;
  /** The message, or undefined for an attempt. */
  readonly message: Message | undefined;
  /** The tool calls of the message, in order. */
  readonly calls: ReadonlyArray<ToolCallBlock>;
  /**
   * The id the provider gave each call, in the order of {@link calls}: the
   * same as the call's own id unless it had to be made new.
   */
  readonly providerCallIds: ReadonlyArray<string>;
  /** One `tool/call` draft per call, in order. */
  readonly toolCallDrafts: ReadonlyArray<EventDraft>;
  /** The `finish` part's reason, when one came. */
  readonly finishReason: Response.FinishReason | undefined;
  /** True when the answer was cut short. */
  readonly interrupted: boolean;
}

interface OpenBlock {
  readonly type: "text" | "reasoning";
  text: string;
}

const messageOf = (event: SessionEvent): Message | undefined => {
  switch (event.type) {
    case "user/message":
      return event.data;
    case "system/message":
    case "assistant/message":
    case "tool/result":
      return event.data.message;
    default:
      return undefined;
  }
};

const addIds = (ids: Set<string>, message: Message | undefined): void => {
  for (const block of message?.content ?? []) {
    if (block.type === "tool-call") ids.add(block.id);
    else if (block.type === "tool-result") ids.add(block.toolCallId);
  }
};

/**
 * The tool-call ids a session uses: those of every call and result in the
 * events it holds (the whole log, for a session read in full) and on its
 * surface (what a session opened from a checkpoint knows of older events).
 * The turn loop passes them to {@link recordAnswer} as `usedCallIds`.
 *
 * @param session The session.
 * @returns The ids, of calls, `tool/call`s and results.
 *
 * @example A reused id gets a fresh one
 * ```ts
 * import { recordAnswer, sessionCallIds } from "@palimpsest/session/ai";
 * import { Draft, Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const session = Effect.runSync(Session.appendAll(
 *   Session.make({ id: "s", createdAt: 0, isSeeded: false }),
 *   [Draft.user("hi", { id: "u0" }), Draft.assistant({
 *     turn: 0, step: 0, provider: "p", model: "m",
 *     toolCalls: [{ id: "call_0", name: "read", arguments: {} }],
 *   })],
 * ));
 * const answer = recordAnswer([
 *   { time: 1, chunk: { type: "tool-call", id: "call_0", name: "read", params: {} } },
 *   { time: 2, chunk: { type: "finish", reason: "tool-calls", usage: { inputTokens: {}, outputTokens: {} } } },
 * ], {
 *   turn: 0, step: 0, messageId: "a1",
 *   source: { kind: "model", provider: "p", model: "m" },
 *   usedCallIds: sessionCallIds(session),
 * });
 * assert.deepEqual(answer.calls.map((c) => c.id), ["call_0_1"]);
 * assert.deepEqual(answer.providerCallIds, ["call_0"]);
 * ```
 */
export function sessionCallIds(session: Session): ReadonlySet<string> {
  const ids = new Set<string>();
  for (const message of deriveMessages(session.surface)) addIds(ids, message);
  for (const event of heldEvents(session)) {
    if (event.type === "tool/call") ids.add(event.data.callId);
    else addIds(ids, messageOf(event));
  }
  return ids;
}

/** Longest call id made fresh: Responses refuses a longer `call_id`. */
const MAX_FRESH_ID = 64;

/**
 * The provider's id, `_` and the first number that makes it not taken, cut
 * to {@link MAX_FRESH_ID} characters.
 */
const freshCallId = (
  id: string,
  taken: (id: string) => boolean,
): string => {
  for (let n = 1;; n++) {
    const suffix = `_${n}`;
    const fresh = id.slice(0, Math.max(0, MAX_FRESH_ID - suffix.length)) +
      suffix;
    if (!taken(fresh)) return fresh;
  }
};

/** The block a text or reasoning stream part belongs to. */
const kindOf = (type: string): "text" | "reasoning" =>
  type.startsWith("text") ? "text" : "reasoning";

/**
 * Builds the drafts of one model answer from its stream parts.
 *
 * @param parts The stream parts, in arrival order, with their times.
 * @param options The turn, step, message id and model.
 * @returns The assistant message (or attempt) draft, its tool calls and
 * their `tool/call` drafts, the finish reason, and whether it was cut.
 *
 * @example Recording a streamed answer with a tool call
 * ```ts
 * import { recordAnswer } from "@palimpsest/session/ai";
 * import assert from "node:assert/strict";
 *
 * const answer = recordAnswer([
 *   { time: 1, chunk: { type: "text-start", id: "t" } },
 *   { time: 2, chunk: { type: "text-delta", id: "t", delta: "Reading it." } },
 *   { time: 3, chunk: { type: "tool-call", id: "c1", name: "read", params: { path: "a.txt" } } },
 *   { time: 4, chunk: { type: "finish", reason: "tool-calls", usage: { inputTokens: { total: 9 }, outputTokens: { total: 3 } } } },
 * ], { turn: 0, step: 0, messageId: "a0", source: { kind: "model", provider: "p", model: "m" } });
 * assert.equal(answer.draft.type, "assistant/message");
 * assert.deepEqual(answer.message?.content, [
 *   { type: "text", text: "Reading it." },
 *   { type: "tool-call", id: "c1", name: "read", arguments: '{"path":"a.txt"}' },
 * ]);
 * assert.equal(answer.toolCallDrafts.length, 1);
 * assert.equal(answer.interrupted, false);
 * ```
 */
export function recordAnswer(
  parts: ReadonlyArray<TimedPart>,
  options: RecordOptions,
): RecordedAnswer {
  const stream: StreamRecord[] = [];
  const blocks: Array<OpenBlock | ToolCallBlock> = [];
  const providerCallIds: string[] = [];
  const used = options.usedCallIds;
  // Ids of this answer's calls: a fresh id never takes one a later call
  // of the answer comes with.
  const given = new Set<string>();
  for (const { chunk } of parts) {
    if (chunk.type === "tool-call") given.add(chunk.id);
  }
  const mine = new Set<string>();
  const taken = (id: string): boolean =>
    mine.has(id) || (used !== undefined && used.has(id));
  const open = new Map<string, OpenBlock>();
  let finishReason: Response.FinishReason | undefined;
  let usage: unknown;
  let failed = false;
  const blockFor = (kind: "text" | "reasoning", id: string): OpenBlock => {
    const key = `${kind}:${id}`;
    const found = open.get(key);
    if (found !== undefined) return found;
    const block: OpenBlock = { type: kind, text: "" };
    open.set(key, block);
    blocks.push(block);
    return block;
  };
  for (const { time, chunk } of parts) {
    stream.push({ time, chunk });
    switch (chunk.type) {
      case "text-start":
      case "reasoning-start":
        blockFor(kindOf(chunk.type), chunk.id);
        break;
      case "text-delta":
      case "reasoning-delta":
        blockFor(kindOf(chunk.type), chunk.id).text += chunk.delta;
        break;
      case "text-end":
      case "reasoning-end":
        open.delete(`${kindOf(chunk.type)}:${chunk.id}`);
        break;
      case "tool-call":
        if (chunk.providerExecuted !== true) {
          const id = taken(chunk.id)
            ? freshCallId(chunk.id, (id) => taken(id) || given.has(id))
            : chunk.id;
          mine.add(id);
          providerCallIds.push(chunk.id);
          blocks.push({
            type: "tool-call",
            id,
            name: chunk.name,
            arguments: JSON.stringify(chunk.params ?? {}),
          });
        }
        break;
      case "finish":
        finishReason = chunk.reason;
        usage = chunk.usage;
        break;
      case "error":
        failed = true;
        break;
      default:
        break;
    }
  }
  const content: ContentBlock[] = [];
  const calls: ToolCallBlock[] = [];
  for (const block of blocks) {
    if (block.type === "tool-call") {
      content.push(block);
      calls.push(block);
    } else if (block.text !== "") {
      content.push(
        block.type === "text"
          ? { type: "text", text: block.text }
          : { type: "reasoning", text: block.text },
      );
    }
  }
  const interrupted = options.cut === true || failed ||
    finishReason === undefined;
  const { turn, step } = options;
  if (content.length === 0) {
    return {
      draft: { type: "assistant/attempt", data: { turn, step, stream } },
      message: undefined,
      calls: [],
      providerCallIds: [],
      toolCallDrafts: [],
      finishReason,
      interrupted,
    };
  }
  const message: Message = {
    id: options.messageId,
    role: "assistant",
    content,
    source: options.source,
  };
  const draft: AssistantMessageDraft = {
    type: "assistant/message",
    surfaceOp: "append",
    data: {
      turn,
      step,
      message: { ...message, role: "assistant", source: options.source },
      stream,
      ...(usage === undefined ? {} : { usage }),
      ...(interrupted ? { interrupted: true } : {}),
    },
  };
  return {
    draft,
    message,
    calls,
    providerCallIds,
    toolCallDrafts: Draft.toolCalls(draft),
    finishReason,
    interrupted,
  };
}
