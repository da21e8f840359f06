/**
 * A model-free token estimate: characters over four, plus a per-message
 * framing cost. The compaction engine's default budget measure
 * (`@palimpsest/session/ai`) and the viewer's weights use it; it lives in
 * the core so that neither loads the other.
 *
 * @module
 */
import type { Message } from "./message.ts";

/** Estimates the tokens a model would count for some messages. */
export type TokenEstimate = (messages: ReadonlyArray<Message>) => number;

const attachmentChars = (attachment: unknown): number =>
  JSON.stringify(attachment ?? null).length;

/**
 * The default token estimate: one token per four characters of text,
 * reasoning, tool names and arguments, tool results and attachment
 * descriptions, plus four per message for its framing.
 *
 * @param messages The messages.
 * @returns The estimated token count.
 *
 * @example Estimating a short exchange
 * ```ts
 * import { estimateTokensByChars } from "@palimpsest/session/ai";
 * import assert from "node:assert/strict";
 *
 * const tokens = estimateTokensByChars([
 *   { id: "u0", role: "user", content: [{ type: "text", text: "x".repeat(400) }], source: { kind: "user" } },
 * ]);
 * assert.equal(tokens, 104);
 * ```
 */
export function estimateTokensByChars(
  messages: ReadonlyArray<Message>,
): number {
  let chars = 0;
  for (const message of messages) {
    for (const block of message.content) {
      switch (block.type) {
        case "text":
        case "reasoning":
          chars += block.text.length;
          break;
        case "tool-call":
          chars += block.name.length + block.arguments.length;
          break;
        case "tool-result":
          for (const inner of block.content) {
            chars += inner.type === "text"
              ? inner.text.length
              : attachmentChars(inner.attachment);
          }
          break;
        default:
          chars += attachmentChars(block.attachment);
      }
    }
  }
  return Math.ceil(chars / 4) + 4 * messages.length;
}
