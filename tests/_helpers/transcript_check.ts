/**
 * A small stand-in for `checkTranscript` (being written in
 * `src/transcript.ts` on another branch): the pairing rules providers
 * enforce, as data. Every `tool-call` block is answered by exactly one
 * `tool-result` before the next assistant message (or the end), and no
 * result answers an unknown call.
 */
import type { Message } from "@palimpsest/session";

/** One broken pairing rule. */
export type PairingViolation =
  | { readonly kind: "unanswered"; readonly callId: string }
  | { readonly kind: "duplicate"; readonly callId: string }
  | { readonly kind: "unknown"; readonly callId: string };

/** The pairing violations of a transcript, in the order found. */
export function checkPairs(
  messages: ReadonlyArray<Message>,
): PairingViolation[] {
  const out: PairingViolation[] = [];
  let pending = new Map<string, boolean>();
  const close = () => {
    for (const [callId, answered] of pending) {
      if (!answered) out.push({ kind: "unanswered", callId });
    }
  };
  for (const message of messages) {
    if (message.role === "assistant") {
      close();
      pending = new Map();
      for (const block of message.content) {
        if (block.type === "tool-call") pending.set(block.id, false);
      }
      continue;
    }
    for (const block of message.content) {
      if (block.type !== "tool-result") continue;
      const answered = pending.get(block.toolCallId);
      if (answered === undefined) {
        out.push({ kind: "unknown", callId: block.toolCallId });
      } else if (answered) {
        out.push({ kind: "duplicate", callId: block.toolCallId });
      } else pending.set(block.toolCallId, true);
    }
  }
  close();
  return out;
}
