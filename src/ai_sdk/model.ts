/**
 * Any AI SDK provider model as an `effect/ai` `LanguageModel`: the
 * `LanguageModelV4` that `ai` 7 and its providers (`@ai-sdk/openai`,
 * `@ai-sdk/anthropic`, `@ai-sdk/google`, ...) export, behind the service
 * `runTurn` and the compaction engine talk to.
 *
 * {@link makeAiSdkModel} builds the service and {@link layerAiSdkModel} the
 * layer. Each request turns the `effect/ai` prompt, tools and tool choice
 * into the model's call options ({@link toCallOptions}), calls `doStream`
 * (for `streamText`) or `doGenerate` (for `generateText`), and turns what
 * comes back into `effect/ai` parts ({@link fromStreamPart},
 * {@link fromContent}): text and reasoning deltas, tool input deltas and
 * calls, sources, files, response metadata, and a `finish` part with the
 * usage and the finish reason. Errors become `AiError`s
 * ({@link toAiError}).
 *
 * Decisions:
 *
 * - A tool call's input is parsed with the library's `parseToolArguments`:
 *   input that is not a JSON object is kept under `invalid_json_arguments`
 *   rather than failing the answer.
 * - A stream that ends without the provider's end (the AI SDK's finish
 *   reason `interrupted`: the connection closed cleanly mid-answer; or no
 *   `finish` part at all: the body was empty or held no event the client
 *   knows) fails with a `NetworkError` (`TransportError`), as a connection
 *   reset does:
 *   the answer is cut, and a tool call that came out of it, its arguments
 *   perhaps truncated, is not run. Every other finish reason has the same
 *   name in `effect/ai`.
 * - `stream-start` (warnings), `ping`, `raw`, `custom` and
 *   `reasoning-file` parts carry nothing the log keeps and are left out.
 * - Each request owns an `AbortController`, aborted when the request's
 *   scope closes: interrupting the fiber that reads the stream aborts the
 *   HTTP request, as does a failure.
 * - Tool names are sent as the library's other adapters send them: an empty
 *   name as `unnamed_tool`, one over 64 characters cut with a hash.
 *
 * This module imports only `@ai-sdk/provider` (for the error classes): the
 * package's other entry points never load it.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Stream from "effect/Stream";
import { LanguageModel } from "effect/ai";
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
} from "@ai-sdk/provider";
import { type AiSdkCallSettings, toCallOptions } from "./request.ts";

export type { AiSdkCallSettings };
import { fromContent, fromStreamPart } from "./response.ts";
import { streamCut, toAiError } from "./errors.ts";

/** Options of {@link makeAiSdkModel} and {@link layerAiSdkModel}. */
export interface AiSdkModelOptions {
  /** Settings sent with every request (for example `maxOutputTokens`). */
  readonly settings?: AiSdkCallSettings;
}

/* ----------------------------------------------------------------------- */
/* The service                                                              */
/* ----------------------------------------------------------------------- */

const abortController = Effect.acquireRelease(
  Effect.sync(() => new AbortController()),
  (controller) => Effect.sync(() => controller.abort()),
);

/**
 * The `effect/ai` `LanguageModel` service of an AI SDK provider model. Use
 * {@link layerAiSdkModel} to provide it.
 *
 * @param model The provider's model, for example `openai("gpt-5")` or
 * `anthropic("claude-sonnet-4-5")`.
 * @param options Settings sent with every request.
 * @returns The service.
 *
 * @example A summary from a mock model
 * ```ts
 * import { makeAiSdkModel } from "@palimpsest/session/ai-sdk";
 * import { MockLanguageModelV4 } from "ai/test";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const model = new MockLanguageModelV4({ doGenerate: {
 *   content: [{ type: "text", text: "Short." }], warnings: [],
 *   finishReason: { unified: "stop", raw: undefined },
 *   usage: { inputTokens: { total: 9, noCache: 9, cacheRead: undefined, cacheWrite: undefined },
 *            outputTokens: { total: 1, text: 1, reasoning: undefined } },
 * } });
 * const response = await Effect.runPromise(Effect.flatMap(
 *   makeAiSdkModel(model),
 *   (service) => service.generateText({ prompt: "summarize" }),
 * ));
 * assert.equal(response.text, "Short.");
 * ```
 */
export function makeAiSdkModel(
  model: LanguageModelV4,
  options: AiSdkModelOptions = {},
): Effect.Effect<LanguageModel.LanguageModel> {
  const settings = options.settings ?? {};
  // One provider call, aborted when its scope closes; a rejection is an
  // AiError of the service method that made it.
  const call = <A>(
    method: "generateText" | "streamText",
    request: LanguageModel.ProviderOptions,
    run: (callOptions: LanguageModelV4CallOptions) => PromiseLike<A>,
  ) =>
    Effect.gen(function* () {
      const controller = yield* abortController;
      return yield* Effect.tryPromise({
        try: () =>
          Promise.resolve(
            run(toCallOptions(request, settings, controller.signal)),
          ),
        catch: (error) => toAiError(error, method),
      });
    });
  return LanguageModel.make({
    generateText: (request) =>
      Effect.scoped(Effect.gen(function* () {
        const result = yield* call(
          "generateText",
          request,
          (callOptions) => model.doGenerate(callOptions),
        );
        return fromContent(result.content, result);
      })),
    streamText: (request) =>
      Stream.unwrap(Effect.gen(function* () {
        const result = yield* call(
          "streamText",
          request,
          (callOptions) => model.doStream(callOptions),
        );
        let finished = false;
        return Stream.fromReadableStream({
          evaluate: () => result.stream,
          onError: (error) => toAiError(error, "streamText"),
        }).pipe(
          Stream.mapEffect((part) => {
            if (part.type === "error") {
              return Effect.fail(toAiError(part.error, "streamText"));
            }
            if (part.type === "finish") {
              if (part.finishReason.unified === "interrupted") {
                return Effect.fail(streamCut("streamText"));
              }
              finished = true;
            }
            return Effect.succeed(fromStreamPart(part));
          }),
          Stream.filter((part) => part !== undefined),
          Stream.concat(Stream.suspend(() =>
            finished ? Stream.empty : Stream.fail(streamCut("streamText"))
          )),
        );
      })),
  });
}

/**
 * A layer providing `effect/ai`'s `LanguageModel` from an AI SDK provider
 * model, so `runTurn` and `compactIfNeeded` run on it.
 *
 * @param model The provider's model (a `LanguageModelV4`).
 * @param options Settings sent with every request.
 * @returns The layer.
 *
 * @example A mock model answering one streamed request
 * ```ts
 * import { layerAiSdkModel } from "@palimpsest/session/ai-sdk";
 * import { MockLanguageModelV4 } from "ai/test";
 * import { simulateReadableStream } from "ai";
 * import { Effect, Stream } from "effect";
 * import { LanguageModel } from "effect/ai";
 * import assert from "node:assert/strict";
 *
 * const model = new MockLanguageModelV4({
 *   doStream: {
 *     stream: simulateReadableStream({ chunks: [
 *       { type: "text-start", id: "t" },
 *       { type: "text-delta", id: "t", delta: "Hello" },
 *       { type: "text-end", id: "t" },
 *       { type: "finish", finishReason: { unified: "stop", raw: "stop" },
 *         usage: { inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
 *                  outputTokens: { total: 1, text: 1, reasoning: undefined } } },
 *     ] }),
 *   },
 * });
 * const parts = await Effect.runPromise(
 *   LanguageModel.streamText({ prompt: "hi" }).pipe(
 *     Stream.runCollect,
 *     Effect.provide(layerAiSdkModel(model)),
 *   ),
 * );
 * assert.deepEqual(parts.map((p) => p.type), ["text-start", "text-delta", "text-end", "finish"]);
 * ```
 */
export function layerAiSdkModel(
  model: LanguageModelV4,
  options: AiSdkModelOptions = {},
): Layer.Layer<LanguageModel.LanguageModel> {
  return Layer.effect(
    LanguageModel.LanguageModel,
    makeAiSdkModel(model, options),
  );
}
