/**
 * `@palimpsest/session/ai-sdk`: the Vercel AI SDK and the session log.
 *
 * - {@link layerAiSdkModel} (and {@link makeAiSdkModel}) wraps any AI SDK
 *   provider model (`LanguageModelV4`: `@ai-sdk/openai`,
 *   `@ai-sdk/anthropic`, `@ai-sdk/google`, ...) as an `effect/ai`
 *   `LanguageModel`, so `runTurn` and `compactIfNeeded` run on it; its
 *   errors become `AiError`s ({@link toAiError}) and interruption aborts the
 *   HTTP request.
 *
 * This entry point is the only one that loads the AI SDK packages: a user
 * who does not import it installs nothing more.
 *
 * @module
 */
export {
  type AiSdkCallSettings,
  type AiSdkModelOptions,
  fromContent,
  fromStreamPart,
  layerAiSdkModel,
  makeAiSdkModel,
  toAiError,
  toCallOptions,
  toProviderPrompt,
} from "./model.ts";
