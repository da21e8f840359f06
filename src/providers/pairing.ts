/**
 * The pairing pass: one place that makes a message list answer every tool
 * call exactly once, right after the message that made it.
 *
 * Every adapter runs {@link pairToolCalls} first, so the provider shapes are
 * built from a list where each assistant message's `tool-call` blocks are
 * followed, before anything else, by one `tool-result` per call in call
 * order. Logs cut by a crash, windows, hand-built lists and history
 * rewrites can all break that; the pass repairs what it finds and reports
 * each repair as data. It never throws and never reorders anything but
 * results, and running it on its own output repairs nothing.
 *
 * @module
 */
import type {
  ContentBlock,
  Message,
  ToolCallBlock,
  ToolResultBlock,
} from "../core/message.ts";

/** An unanswered call got a synthetic error result. */
export interface SyntheticToolResult {
  /** The tag. */
  readonly _tag: "SyntheticToolResult";
  /** The call id. */
  readonly callId: string;
  /** The tool name. */
  readonly name: string;
  /** The index, in the input, of the assistant message holding the call. */
  readonly messageIndex: number;
}

/** Why a `tool-result` block was left out. */
export type DroppedResultReason =
  /** No call with this id came before it. */
  | "unknown"
  /** Its call was closed by a later assistant message. */
  | "late"
  /** Its call was already answered. */
  | "duplicate"
  /** It sat in an assistant message, where no provider accepts a result. */
  | "in-assistant-message";

/** A `tool-result` block left out. */
export interface DroppedToolResult {
  /** The tag. */
  readonly _tag: "DroppedToolResult";
  /** The call id the result names. */
  readonly callId: string;
  /** Why it was left out. */
  readonly reason: DroppedResultReason;
  /** The index, in the input, of the message holding it. */
  readonly messageIndex: number;
  /** The index of the block in that message. */
  readonly blockIndex: number;
}

/** Why a `tool-call` block was left out. */
export type DroppedCallReason =
  /** An earlier call has the same id. */
  | "duplicate"
  /** It sat in a user or system message, where no provider accepts a call. */
  | "outside-assistant-message";

/** A `tool-call` block left out. */
export interface DroppedToolCall {
  /** The tag. */
  readonly _tag: "DroppedToolCall";
  /** The call id. */
  readonly callId: string;
  /** Why it was left out. */
  readonly reason: DroppedCallReason;
  /** The index, in the input, of the message holding it. */
  readonly messageIndex: number;
  /** The index of the block in that message. */
  readonly blockIndex: number;
}

/** A result moved ahead of messages that came between its call and it. */
export interface MovedToolResult {
  /** The tag. */
  readonly _tag: "MovedToolResult";
  /** The call id. */
  readonly callId: string;
  /** The index, in the input, of the message holding the result. */
  readonly messageIndex: number;
}

/** One change the pairing pass made. */
export type PairingRepair =
  | SyntheticToolResult
  | DroppedToolResult
  | DroppedToolCall
  | MovedToolResult;

/** The paired messages and what was repaired to get them. */
export interface PairedMessages {
  /** The messages, every call answered once right after its assistant message. */
  readonly messages: ReadonlyArray<Message>;
  /** The repairs, in the order made; empty when the input was already paired. */
  readonly repairs: ReadonlyArray<PairingRepair>;
}

/** The text of a synthetic result, sent to the model in place of the missing one. */
export const MISSING_RESULT_TEXT =
  "No result was recorded for this tool call: it may not have run, or its outcome was lost.";

/** One call seen so far: the run it opened in, and its answer once found. */
interface CallState {
  readonly run: number;
  host: Message | undefined;
  block: ToolResultBlock | undefined;
}

const synthetic = (assistantId: string, call: ToolCallBlock): Message => ({
  id: `${assistantId}:${call.id}:missing`,
  role: "user",
  source: { kind: "tool", callId: call.id },
  content: [{
    type: "tool-result",
    toolCallId: call.id,
    isError: true,
    content: [{ type: "text", text: MISSING_RESULT_TEXT }],
  }],
});

/**
 * Pairs tool calls with their results. After the pass, each assistant
 * message's `tool-call` blocks are followed, before any other message, by
 * exactly one user-role message per call holding its `tool-result`, in call
 * order. Repairs, each reported:
 *
 * - an unanswered call gets a synthetic error result
 *   ({@link MISSING_RESULT_TEXT}, `isError: true`);
 * - a result answering no open call (unknown, late or duplicate) and a
 *   result inside an assistant message are left out;
 * - a call whose id was already used, and a call outside an assistant
 *   message, are left out;
 * - a result that came after other messages of its run is moved ahead of
 *   them (providers want results right after the call).
 *
 * A message mixing results and other content is split: each result becomes
 * its own user-role message (id `<id>:<callId>`), the rest keeps the id. A
 * result in a system message is moved the same way.
 * Messages are shared with the input where nothing changed. O(number of
 * blocks).
 *
 * @param messages Derived messages, in order.
 * @returns The paired messages and the repairs made.
 *
 * @example A crashed turn: the call never got its result
 * ```ts
 * import { pairToolCalls } from "@palimpsest/session/providers";
 * import type { Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const messages: Message[] = [
 *   { id: "u0", role: "user", source: { kind: "user" },
 *     content: [{ type: "text", text: "list the files" }] },
 *   { id: "a1", role: "assistant", source: { kind: "model", provider: "p", model: "m" },
 *     content: [{ type: "tool-call", id: "c1", name: "ls", arguments: "{}" }] },
 * ];
 * const { messages: paired, repairs } = pairToolCalls(messages);
 * assert.deepEqual(repairs, [
 *   { _tag: "SyntheticToolResult", callId: "c1", name: "ls", messageIndex: 1 },
 * ]);
 * assert.equal(paired.length, 3);
 * ```
 */
export function pairToolCalls(
  messages: ReadonlyArray<Message>,
): PairedMessages {
  const out: Message[] = [];
  const repairs: PairingRepair[] = [];
  // Every call id seen so far (ids are unique once duplicates are dropped).
  const calls = new Map<string, CallState>();
  let run = 0;
  let assistantIndex = -1;
  let assistant: Message | undefined;
  let runCalls: ToolCallBlock[] = [];
  let others: Message[] = [];

  const flush = (): void => {
    if (assistant !== undefined) {
      out.push(assistant);
      for (const call of runCalls) {
        const state = calls.get(call.id);
        const host = state?.host;
        const block = state?.block;
        if (host === undefined || block === undefined) {
          repairs.push({
            _tag: "SyntheticToolResult",
            callId: call.id,
            name: call.name,
            messageIndex: assistantIndex,
          });
          out.push(synthetic(assistant.id, call));
        } else if (
          host.role === "user" && host.content.length === 1 &&
          host.content[0] === block
        ) {
          out.push(host);
        } else {
          out.push({
            ...host,
            id: `${host.id}:${call.id}`,
            role: "user",
            content: [block],
          });
        }
      }
    }
    for (const other of others) out.push(other);
  };

  for (let m = 0; m < messages.length; m++) {
    const message = messages[m];
    if (message === undefined) continue;
    const content = message.content;
    if (message.role === "assistant") {
      flush();
      run++;
      let kept: ContentBlock[] | undefined;
      const found: ToolCallBlock[] = [];
      for (let b = 0; b < content.length; b++) {
        const block = content[b];
        if (block === undefined) continue;
        let drop = false;
        if (block.type === "tool-result") {
          repairs.push({
            _tag: "DroppedToolResult",
            callId: block.toolCallId,
            reason: "in-assistant-message",
            messageIndex: m,
            blockIndex: b,
          });
          drop = true;
        } else if (block.type === "tool-call") {
          if (calls.has(block.id)) {
            repairs.push({
              _tag: "DroppedToolCall",
              callId: block.id,
              reason: "duplicate",
              messageIndex: m,
              blockIndex: b,
            });
            drop = true;
          } else {
            calls.set(block.id, { run, host: undefined, block: undefined });
            found.push(block);
          }
        }
        if (drop && kept === undefined) kept = content.slice(0, b);
        else if (!drop && kept !== undefined) kept.push(block);
      }
      assistantIndex = m;
      assistant = kept === undefined ? message : { ...message, content: kept };
      runCalls = found;
      others = [];
      continue;
    }
    let rest: ContentBlock[] | undefined;
    let sawResult = false;
    for (let b = 0; b < content.length; b++) {
      const block = content[b];
      if (block === undefined) continue;
      let take = true;
      if (block.type === "tool-call") {
        repairs.push({
          _tag: "DroppedToolCall",
          callId: block.id,
          reason: "outside-assistant-message",
          messageIndex: m,
          blockIndex: b,
        });
        take = false;
      } else if (block.type === "tool-result") {
        sawResult = true;
        take = false;
        const id = block.toolCallId;
        const state = calls.get(id);
        if (
          state !== undefined && state.run === run && state.block === undefined
        ) {
          state.host = message;
          state.block = block;
          if (others.length > 0) {
            repairs.push({
              _tag: "MovedToolResult",
              callId: id,
              messageIndex: m,
            });
          }
        } else {
          repairs.push({
            _tag: "DroppedToolResult",
            callId: id,
            reason: state === undefined
              ? "unknown"
              : state.run === run
              ? "duplicate"
              : "late",
            messageIndex: m,
            blockIndex: b,
          });
        }
      }
      if (!take && rest === undefined) rest = content.slice(0, b);
      else if (take && rest !== undefined) rest.push(block);
    }
    if (rest === undefined) others.push(message);
    else if (rest.length > 0 || !sawResult) {
      others.push({ ...message, content: rest });
    }
  }
  flush();
  return { messages: out, repairs };
}
