/**
 * Transcript checks: what providers reject in a message list, as data.
 *
 * Providers require every `tool-call` block of an assistant message to be
 * answered by exactly one `tool-result` block before the next assistant
 * message, and refuse a result that answers no call. {@link checkTranscript}
 * reports each breach as a tagged plain object with the message and block
 * indexes and the call id, so a harness can check the messages it is about
 * to send, or a test can check what a repaired log derives.
 *
 * @module
 */
import type { Message } from "../core/message.ts";

/** A `tool-call` block with no `tool-result` before the next assistant message (or the end). */
export interface UnansweredToolCall {
  /** The tag. */
  readonly _tag: "UnansweredToolCall";
  /** The call id. */
  readonly callId: string;
  /** The index of the assistant message holding the call. */
  readonly messageIndex: number;
  /** The index of the block in that message. */
  readonly blockIndex: number;
  /** The index of the next assistant message, or undefined at the end. */
  readonly nextAssistantIndex: number | undefined;
}

/** A second `tool-result` for a call already answered. */
export interface DuplicateToolResult {
  /** The tag. */
  readonly _tag: "DuplicateToolResult";
  /** The call id. */
  readonly callId: string;
  /** The index of the message holding the extra result. */
  readonly messageIndex: number;
  /** The index of the block in that message. */
  readonly blockIndex: number;
  /** The index of the message holding the first result. */
  readonly firstMessageIndex: number;
}

/** A `tool-result` answering no open call: unknown, or whose call was closed by a later assistant message. */
export interface UnknownToolResult {
  /** The tag. */
  readonly _tag: "UnknownToolResult";
  /** The call id the result names. */
  readonly callId: string;
  /** The index of the message holding the result. */
  readonly messageIndex: number;
  /** The index of the block in that message. */
  readonly blockIndex: number;
  /** True when a call with this id exists but an assistant message came in between. */
  readonly late: boolean;
}

/** Two `tool-call` blocks with the same id. */
export interface DuplicateToolCall {
  /** The tag. */
  readonly _tag: "DuplicateToolCall";
  /** The call id. */
  readonly callId: string;
  /** The index of the message holding the repeated call. */
  readonly messageIndex: number;
  /** The index of the block in that message. */
  readonly blockIndex: number;
}

/** One breach of the tool-call pairing rules. */
export type TranscriptViolation =
  | UnansweredToolCall
  | DuplicateToolResult
  | UnknownToolResult
  | DuplicateToolCall;

interface OpenCall {
  readonly messageIndex: number;
  readonly blockIndex: number;
  answeredAt: number | undefined;
}

/**
 * Checks that every `tool-call` block is answered by exactly one
 * `tool-result` block before the next assistant message, and that no result
 * answers an unknown call. Calls still open at the end are unanswered.
 * O(number of blocks).
 *
 * @param messages Derived messages, in order.
 * @returns The violations, in the order found; empty when clean.
 *
 * @example A call answered after the next assistant message
 * ```ts
 * import { checkTranscript, type Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const model = { kind: "model", provider: "p", model: "m" } as const;
 * const messages: Message[] = [
 *   { id: "a0", role: "assistant", source: model,
 *     content: [{ type: "tool-call", id: "c1", name: "ls", arguments: "{}" }] },
 *   { id: "a1", role: "assistant", source: model, content: [{ type: "text", text: "done" }] },
 *   { id: "r1", role: "user", source: { kind: "tool", callId: "c1" },
 *     content: [{ type: "tool-result", toolCallId: "c1", content: [] }] },
 * ];
 * assert.deepEqual(checkTranscript(messages).map((v) => v._tag), [
 *   "UnansweredToolCall",
 *   "UnknownToolResult",
 * ]);
 * ```
 */
export function checkTranscript(
  messages: ReadonlyArray<Message>,
): ReadonlyArray<TranscriptViolation> {
  const violations: TranscriptViolation[] = [];
  const seen = new Set<string>();
  let open = new Map<string, OpenCall>();
  const closeOpen = (nextAssistantIndex: number | undefined): void => {
    for (const [callId, call] of open) {
      if (call.answeredAt === undefined) {
        violations.push({
          _tag: "UnansweredToolCall",
          callId,
          messageIndex: call.messageIndex,
          blockIndex: call.blockIndex,
          nextAssistantIndex,
        });
      }
    }
  };
  for (let m = 0; m < messages.length; m++) {
    const message = messages[m];
    if (message === undefined) continue;
    if (message.role === "assistant") {
      closeOpen(m);
      open = new Map();
      message.content.forEach((block, b) => {
        if (block.type !== "tool-call") return;
        if (seen.has(block.id)) {
          violations.push({
            _tag: "DuplicateToolCall",
            callId: block.id,
            messageIndex: m,
            blockIndex: b,
          });
          return;
        }
        seen.add(block.id);
        open.set(block.id, {
          messageIndex: m,
          blockIndex: b,
          answeredAt: undefined,
        });
      });
      continue;
    }
    message.content.forEach((block, b) => {
      if (block.type !== "tool-result") return;
      const call = open.get(block.toolCallId);
      if (call === undefined) {
        violations.push({
          _tag: "UnknownToolResult",
          callId: block.toolCallId,
          messageIndex: m,
          blockIndex: b,
          late: seen.has(block.toolCallId),
        });
      } else if (call.answeredAt !== undefined) {
        violations.push({
          _tag: "DuplicateToolResult",
          callId: block.toolCallId,
          messageIndex: m,
          blockIndex: b,
          firstMessageIndex: call.answeredAt,
        });
      } else {
        call.answeredAt = m;
      }
    });
  }
  closeOpen(undefined);
  return violations;
}
