/**
 * The request bodies the library builds for each provider: the adapter's
 * messages with the tools the request needs (`requestTools`: the tools
 * given, or minimal definitions of the tools the messages call, with tool
 * choice `none`), without the caller's model and limits.
 *
 * @module
 */
import type { Message } from "@palimpsest/session";
import { requestTools, type Tools } from "@palimpsest/session/ai";
import {
  anthropicTools,
  geminiTools,
  openAIChatTools,
  openAIResponsesTools,
  toAnthropic,
  toGemini,
  type ToolChoice,
  toOpenAIChat,
  toOpenAIResponses,
} from "@palimpsest/session/providers";

/**
 * A provider's body builder: its message converter's body with the tools
 * the request needs, in that provider's shape.
 */
const bodyOf = <B extends object, T extends object>(
  convert: (messages: ReadonlyArray<Message>) => B,
  toolsOf: (
    tools: ReturnType<typeof requestTools>["tools"],
    choice: ReturnType<typeof requestTools>["choice"],
  ) => T,
) =>
(
  messages: ReadonlyArray<Message>,
  tools: Tools = [],
  choice?: ToolChoice,
): B & T => {
  const sent = requestTools(messages, tools, choice);
  return { ...convert(messages), ...toolsOf(sent.tools, sent.choice) };
};

/** The OpenAI Chat Completions body of `messages`. */
export const openAIChatBody = bodyOf(toOpenAIChat, openAIChatTools);

/** The OpenAI Responses body of `messages`. */
export const openAIResponsesBody = bodyOf(
  toOpenAIResponses,
  openAIResponsesTools,
);

/** The Anthropic Messages body of `messages`. */
export const anthropicBody = bodyOf(toAnthropic, anthropicTools);

/** The Gemini generateContent body of `messages`. */
export const geminiBody = bodyOf(toGemini, geminiTools);
