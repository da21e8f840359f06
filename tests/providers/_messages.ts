/**
 * Messages for the provider mapping tests, by who says them: the user, a
 * plugin's system prompt, the model `m` of provider `p`, or a tool.
 *
 * @module
 */
import type { Message } from "@palimpsest/session";

/** A user message `id` saying `text`. */
export const fromUser = (id: string, text: string): Message => ({
  id,
  role: "user",
  source: { kind: "user" },
  content: [{ type: "text", text }],
});

/** A system message `id` of plugin `plugin` saying `text`. */
export const fromPlugin = (
  id: string,
  plugin: string,
  text: string,
): Message => ({
  id,
  role: "system",
  source: { kind: "plugin", plugin },
  content: [{ type: "text", text }],
});

/** An assistant message `id` of model `m` of provider `p`, with `content`. */
export const fromModel = (
  id: string,
  content: Message["content"],
): Message => ({
  id,
  role: "assistant",
  source: { kind: "model", provider: "p", model: "m" },
  content,
});

/** The result message `id` of the call `callId`, its block holding `content`. */
export const fromTool = (
  id: string,
  callId: string,
  content: Extract<
    Message["content"][number],
    { readonly type: "tool-result" }
  >["content"],
): Message => ({
  id,
  role: "user",
  source: { kind: "tool", callId },
  content: [{ type: "tool-result", toolCallId: callId, content }],
});
