/**
 * Derivation: the messages a model is sent, read off the surface in order.
 *
 * This is the only derivation path. Each node projects to one message,
 * except a `system/message` or `assistant/message` with empty content, which
 * derives none. Tool results are user-role messages holding one
 * `tool-result` block; there is no `tool` role. The module reads surfaces
 * and never changes them.
 *
 * @module
 */
import type { SessionSeq } from "../core/seq.ts";
import type { Message } from "../core/message.ts";
import { forEachMessage, messagesOf, type Surface } from "../surface/mod.ts";

/** A derived message and the surface node it came from. */
export interface MessageWithSource {
  /** The node seq that produced the message. */
  readonly seq: SessionSeq;
  /** The message. */
  readonly message: Message;
}

/**
 * Derives the messages to send to a model: one per surface node, in surface
 * order, skipping empty system and assistant messages. The result is frozen
 * and kept with the surface (an immutable value): deriving the same surface
 * again returns the same array at once, and a surface folded from a derived
 * one, by any appends, replaces and prepends, costs what changed (a look at
 * each event since, binary searches for the changed runs) and one copy of
 * the earlier references. A surface nothing before it was derived from is
 * walked: O(surface length), once.
 *
 * @param surface A surface.
 * @returns The messages, in order.
 *
 * @example Deriving a short transcript
 * ```ts
 * import { deriveMessages, replay } from "@palimpsest/session";
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const events = [
 *   { type: "user/message", seq: 0, time: 0, surfaceOp: "append",
 *     data: { id: "u0", role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user" } } },
 *   { type: "assistant/message", seq: 1, time: 0, surfaceOp: "append",
 *     data: { turn: 0, step: 0, stream: [],
 *       message: { id: "a0", role: "assistant", content: [{ type: "text", text: "hello" }],
 *         source: { kind: "model", provider: "p", model: "m" } } } },
 * ].map((e) => Result.getOrThrow(decodeEventResult(e)));
 * const messages = deriveMessages(Effect.runSync(replay(events)));
 * assert.deepEqual(messages.map((m) => m.role), ["user", "assistant"]);
 * ```
 */
export function deriveMessages(surface: Surface): ReadonlyArray<Message> {
  return messagesOf(surface);
}

/**
 * Derives the messages with the node seq each came from, so a caller can
 * explain where a message came from.
 *
 * @param surface A surface.
 * @returns The messages paired with their node seqs, in order.
 *
 * @example Explaining a message
 * ```ts
 * import { deriveMessagesWithSources, replay } from "@palimpsest/session";
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = Result.getOrThrow(decodeEventResult({
 *   type: "user/message", seq: 0, time: 0, surfaceOp: "append",
 *   data: { id: "u0", role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user" } },
 * }));
 * const [first] = deriveMessagesWithSources(Effect.runSync(replay([event])));
 * assert.equal(first?.seq, 0);
 * ```
 */
export function deriveMessagesWithSources(
  surface: Surface,
): ReadonlyArray<MessageWithSource> {
  const out: MessageWithSource[] = [];
  forEachMessage(surface, (seq, message) => {
    out.push({ seq, message });
  });
  return out;
}
