/**
 * `@palimpsest/session/providers`: the pure request converters and
 * validators for each model provider's HTTP API, with no `effect/ai` loaded.
 *
 * - {@link pairToolCalls} is the one pairing pass every converter runs
 *   first: each call answered once, right after the message that made it,
 *   and the repairs reported as data.
 * - {@link toOpenAIChat}, {@link toOpenAIResponses}, {@link toAnthropic} and
 *   {@link toGemini} build each provider's request body (the message part of
 *   it: the caller adds model, limits and settings).
 * - {@link openAIChatTools}, {@link openAIResponsesTools},
 *   {@link anthropicTools} and {@link geminiTools} build each provider's
 *   `tools` and tool choice from plain {@link ToolDefinition}s (an
 *   `effect/ai` `Toolkit` gives its definitions through `toolDefinitions`
 *   in `@palimpsest/session/ai`), so a body the library builds is complete
 *   and valid by the provider's own request schema.
 * - {@link validateOpenAIChat}, {@link validateOpenAIResponses},
 *   {@link validateAnthropic} and {@link validateGemini} check a request
 *   against each provider's documented ordering rules, and that a request
 *   holding tool calls or results defines tools (`ToolsNotDefined`), and
 *   return what they find as data ({@link RequestViolation}).
 * - {@link parseToolArguments} and {@link resolveAttachment} are the
 *   policies the converters share for tool arguments and attachments.
 *
 * All converters are pure functions of the messages, never throw, and
 * produce a request their validator accepts for every input once its
 * tools are added (`requestTools` in `@palimpsest/session/ai` gives the
 * tools a request with tool blocks needs). The model
 * engine (the `effect/ai` prompt, the turn loop, recording, compaction, and
 * the tool definitions built from an `effect/ai` `Toolkit`) is
 * `@palimpsest/session/ai`, which builds on this entry point and does not
 * re-export it.
 *
 * Each provider API is one folder, `src/providers/<api>/`: its request's
 * wire types, converter and validator (`request.ts`) and its tools
 * (`tools.ts`). What the converters share (content policies, the pairing
 * pass, the tool definitions) sits beside the folders.
 *
 * @example Build and check an Anthropic request
 * ```ts
 * import { toAnthropic, validateAnthropic } from "@palimpsest/session/providers";
 * import type { Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const messages: Message[] = [
 *   { id: "u0", role: "user", source: { kind: "user" },
 *     content: [{ type: "text", text: "hi" }] },
 * ];
 * const request = toAnthropic(messages);
 * assert.deepEqual(validateAnthropic(request), []);
 * ```
 *
 * @module
 */
export {
  type DroppedCallReason,
  type DroppedResultReason,
  type DroppedToolCall,
  type DroppedToolResult,
  MISSING_RESULT_TEXT,
  type MovedToolResult,
  type PairedMessages,
  type PairingRepair,
  pairToolCalls,
  type SyntheticToolResult,
} from "./pairing.ts";
export {
  type AdapterOptions,
  type AttachmentResolver,
  CONTINUATION_TEXT,
  type DefinedTools,
  EMPTY_CONVERSATION_TEXT,
  type InlineAttachment,
  INVALID_ARGUMENTS_KEY,
  type JsonObject,
  omittedText,
  parseToolArguments,
  type RequestViolation,
  type RequestViolationTag,
  resolveAttachment,
  type ResolvedAttachment,
  UNNAMED_TOOL,
  type UrlAttachment,
} from "./content.ts";
export {
  CALLED_TOOL_DESCRIPTION,
  calledToolDefinitions,
  type ToolChoice,
  type ToolDefinition,
} from "./tool_definitions.ts";
export {
  type AnthropicAssistantBlock,
  type AnthropicAssistantMessage,
  type AnthropicDocumentBlock,
  type AnthropicImageBlock,
  type AnthropicImageMediaType,
  type AnthropicMessage,
  type AnthropicRequest,
  type AnthropicTextBlock,
  anthropicToolId,
  type AnthropicToolResultBlock,
  type AnthropicToolUseBlock,
  type AnthropicUserBlock,
  type AnthropicUserMessage,
  toAnthropic,
  validateAnthropic,
} from "./anthropic/request.ts";
export {
  type OpenAIChatAssistantMessage,
  type OpenAIChatFilePart,
  type OpenAIChatImagePart,
  type OpenAIChatMessage,
  type OpenAIChatRequest,
  type OpenAIChatSystemMessage,
  type OpenAIChatTextPart,
  type OpenAIChatToolCall,
  type OpenAIChatToolMessage,
  type OpenAIChatUserMessage,
  type OpenAIChatUserPart,
  toOpenAIChat,
  validateOpenAIChat,
} from "./openai_chat/request.ts";
export {
  openAIResponsesCallId,
  type OpenAIResponsesCompaction,
  type OpenAIResponsesFilePart,
  type OpenAIResponsesFunctionCall,
  type OpenAIResponsesFunctionCallOutput,
  type OpenAIResponsesImagePart,
  type OpenAIResponsesItem,
  type OpenAIResponsesPart,
  type OpenAIResponsesRequest,
  type OpenAIResponsesTextMessage,
  type OpenAIResponsesTextPart,
  type OpenAIResponsesUserMessage,
  toOpenAIResponses,
  validateOpenAIResponses,
} from "./openai_responses/request.ts";
export {
  type GeminiContent,
  type GeminiFileDataPart,
  type GeminiFunctionCallPart,
  type GeminiFunctionResponsePart,
  type GeminiInlineDataPart,
  type GeminiPart,
  type GeminiRequest,
  type GeminiTextPart,
  toGemini,
  validateGemini,
} from "./gemini/request.ts";
export {
  type AnthropicTool,
  type AnthropicToolChoice,
  type AnthropicTools,
  anthropicTools,
} from "./anthropic/tools.ts";
export {
  type OpenAIChatTool,
  type OpenAIChatToolChoice,
  type OpenAIChatTools,
  openAIChatTools,
} from "./openai_chat/tools.ts";
export {
  type OpenAIResponsesTool,
  type OpenAIResponsesToolChoice,
  type OpenAIResponsesTools,
  openAIResponsesTools,
} from "./openai_responses/tools.ts";
export {
  type GeminiFunctionDeclaration,
  type GeminiToolConfig,
  type GeminiTools,
  geminiTools,
} from "./gemini/tools.ts";
