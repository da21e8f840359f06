/**
 * A private stand-in for the `toPrompt` adapter until it lands: derived
 * messages to an `effect/ai` prompt. Not exported.
 *
 * @module
 */
import { Prompt } from "effect/ai";
import type { Message } from "../message.ts";

const parseArguments = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/**
 * Derived messages as an `effect/ai` prompt.
 * @internal
 */
export const toPromptShim = (
  messages: ReadonlyArray<Message>,
): Prompt.Prompt => {
  const names = new Map<string, string>();
  const out: Prompt.MessageEncoded[] = [];
  for (const message of messages) {
    if (message.role === "system") {
      const text = message.content.map((b) => b.type === "text" ? b.text : "")
        .join("");
      if (text !== "") out.push({ role: "system", content: text });
      continue;
    }
    if (message.role === "assistant") {
      const content: Prompt.AssistantMessagePartEncoded[] = [];
      for (const block of message.content) {
        if (block.type === "text") {
          content.push({ type: "text", text: block.text });
        }
        if (block.type === "reasoning") {
          content.push({ type: "reasoning", text: block.text });
        }
        if (block.type === "tool-call") {
          names.set(block.id, block.name);
          content.push({
            type: "tool-call",
            id: block.id,
            name: block.name,
            params: parseArguments(block.arguments),
            providerExecuted: false,
          });
        }
      }
      if (content.length > 0) out.push({ role: "assistant", content });
      continue;
    }
    const results: Prompt.ToolMessagePartEncoded[] = [];
    const parts: Prompt.UserMessagePartEncoded[] = [];
    for (const block of message.content) {
      if (block.type === "text") parts.push({ type: "text", text: block.text });
      if (block.type === "tool-result") {
        results.push({
          type: "tool-result",
          id: block.toolCallId,
          name: names.get(block.toolCallId) ?? "unknown",
          isFailure: block.isError === true,
          result: block.content.map((c) => c.type === "text" ? c.text : "")
            .join(""),
        });
      }
    }
    if (results.length > 0) out.push({ role: "tool", content: results });
    if (parts.length > 0) out.push({ role: "user", content: parts });
  }
  return Prompt.make(out);
};
