/**
 * A language model that only summarizes, for the tests of compaction: its
 * `generateText` answers a fixed text and its `streamText` streams nothing.
 *
 * @module
 */
import { Effect, Layer, Stream } from "effect";
import { LanguageModel } from "effect/ai";

/**
 * A layer of a model whose every summary is `text`.
 *
 * @param text What `generateText` answers.
 * @returns The model's layer.
 */
export const summaryModel = (
  text: string,
): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () => Effect.succeed([{ type: "text", text }]),
      streamText: () => Stream.empty,
    }),
  );
