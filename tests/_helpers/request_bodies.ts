/**
 * The request bodies the library builds for each provider: the adapter's
 * messages with the tools the request needs (`requestTools`: the tools
 * given, or minimal definitions of the tools the messages call, with tool
 * choice `none`), without the caller's model and limits.
 *
 * @module
 */
import type { Message } from "@palimpsest/session";
import {
  anthropicTools,
  geminiTools,
  openAIChatTools,
  openAIResponsesTools,
  requestTools,
  toAnthropic,
  toGemini,
  type ToolChoice,
  type Tools,
  toOpenAIChat,
  toOpenAIResponses,
} from "@palimpsest/session/ai";

/** The OpenAI Chat Completions body of `messages`. */
export const openAIChatBody = (
  messages: ReadonlyArray<Message>,
  tools: Tools = [],
  choice?: ToolChoice,
) => {
  const sent = requestTools(messages, tools, choice);
  return {
    ...toOpenAIChat(messages),
    ...openAIChatTools(sent.tools, sent.choice),
  };
};

/** The OpenAI Responses body of `messages`. */
export const openAIResponsesBody = (
  messages: ReadonlyArray<Message>,
  tools: Tools = [],
  choice?: ToolChoice,
) => {
  const sent = requestTools(messages, tools, choice);
  return {
    ...toOpenAIResponses(messages),
    ...openAIResponsesTools(sent.tools, sent.choice),
  };
};

/** The Anthropic Messages body of `messages`. */
export const anthropicBody = (
  messages: ReadonlyArray<Message>,
  tools: Tools = [],
  choice?: ToolChoice,
) => {
  const sent = requestTools(messages, tools, choice);
  return {
    ...toAnthropic(messages),
    ...anthropicTools(sent.tools, sent.choice),
  };
};

/** The Gemini generateContent body of `messages`. */
export const geminiBody = (
  messages: ReadonlyArray<Message>,
  tools: Tools = [],
  choice?: ToolChoice,
) => {
  const sent = requestTools(messages, tools, choice);
  return {
    ...toGemini(messages),
    ...geminiTools(sent.tools, sent.choice),
  };
};
