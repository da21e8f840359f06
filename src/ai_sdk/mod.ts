/**
 * `@palimpsest/session/ai-sdk`: the Vercel AI SDK and the session log.
 *
 * - {@link layerAiSdkModel} (and {@link makeAiSdkModel}) wraps any AI SDK
 *   provider model (`LanguageModelV4`: `@ai-sdk/openai`,
 *   `@ai-sdk/anthropic`, `@ai-sdk/google`, ...) as an `effect/ai`
 *   `LanguageModel`, so `runTurn` and `compactIfNeeded` run on it; its
 *   errors become `AiError`s ({@link toAiError}) and interruption aborts the
 *   HTTP request.
 * - {@link toModelMessages} gives a harness that calls the AI SDK itself the
 *   session's messages as `ModelMessage[]` (pairing applied, attachments
 *   resolved), and {@link recordAiSdkSteps} records the steps of its
 *   `generateText` or `streamText` result (answers, tool calls, tool
 *   results, usage) as one turn of the session.
 * - {@link uiMessageChunks} reads a session's answer from the log as the AI
 *   SDK's UI message stream, live or finished, from any seq, and
 *   {@link uiStreamResponse} serves it as server-sent events: a `useChat`
 *   client that resumes reconnects to the log, with no store of its own.
 *
 * This entry point is the only one that loads the AI SDK packages: a user
 * who does not import it installs nothing more.
 *
 * @module
 */
export {
  type AiSdkCallSettings,
  type AiSdkModelOptions,
  layerAiSdkModel,
  makeAiSdkModel,
} from "./model.ts";
export { toAiError } from "./errors.ts";
export { fromContent, fromStreamPart } from "./response.ts";
export { toCallOptions, toProviderPrompt } from "./request.ts";
export {
  recordAiSdkSteps,
  type RecordAiSdkStepsOptions,
  type RecordedAiSdkTurn,
  toModelMessages,
} from "./harness.ts";
export { uiMessageChunks, uiStreamResponse } from "./ui_stream.ts";
export type { AdapterOptions } from "../providers/content.ts";
