/**
 * A scripted `LanguageModel` for tests: each request takes the next reply
 * of its script, and every prompt it was sent is kept for assertions.
 *
 * @module
 */
import { Deferred, Effect, Layer, Stream } from "effect";
import { AiError, LanguageModel, type Prompt, type Response } from "effect/ai";
import { layerJsonlStore, type SessionStore } from "@palimpsest/session";
import { tempDir } from "../_helpers/store.ts";

/** One reply to a streamed request. */
export type StreamReply =
  | {
    readonly parts: ReadonlyArray<Response.StreamPartEncoded>;
    /** Fail with this after the parts. */
    readonly thenFail?: AiError.AiError;
    /** Never end after the parts; the latch is opened once they are out. */
    readonly thenHang?: Deferred.Deferred<void>;
  }
  | { readonly fail: AiError.AiError };

/** One reply to a summary request. */
export type TextReply =
  | { readonly text: string; readonly before?: Effect.Effect<void> }
  | { readonly fail: AiError.AiError }
  | { readonly hang: Deferred.Deferred<void> };

/** The scripted model and what it was asked. */
export interface Scripted {
  /** The `LanguageModel` layer. */
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>;
  /** Every prompt of a streamed request, in order. */
  readonly streamed: Prompt.Prompt[];
  /** Every prompt of a summary request, in order. */
  readonly summarized: Prompt.Prompt[];
}

const noUsage = { inputTokens: {}, outputTokens: {} };

/** A text answer's parts. */
export const text = (t: string): Response.StreamPartEncoded[] => [
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: t },
  { type: "text-end", id: "t" },
];

/** A tool call part. */
export const call = (
  id: string,
  name: string,
  params: unknown = {},
): Response.StreamPartEncoded => ({ type: "tool-call", id, name, params });

/** A finish part. */
export const finish = (
  reason: Response.FinishReason = "stop",
): Response.StreamPartEncoded => ({ type: "finish", reason, usage: noUsage });

/** A model error with an invalid-request reason. */
export const invalidRequest = (description: string): AiError.AiError =>
  AiError.make({
    module: "Scripted",
    method: "streamText",
    reason: new AiError.InvalidRequestError({ description }),
  });

/** A model error that is not about the request's length. */
export const providerDown = (): AiError.AiError =>
  AiError.make({
    module: "Scripted",
    method: "streamText",
    reason: new AiError.InternalProviderError({ description: "overloaded" }),
  });

/** A model playing the given scripts; past their end it says "done". */
export const scriptedModel = (script: {
  readonly stream?: ReadonlyArray<StreamReply>;
  readonly text?: ReadonlyArray<TextReply>;
}): Scripted => {
  const streamed: Prompt.Prompt[] = [];
  const summarized: Prompt.Prompt[] = [];
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.suspend(() => {
          const reply = script.text?.[summarized.length];
          summarized.push(options.prompt);
          if (reply === undefined) {
            return Effect.succeed([{ type: "text" as const, text: "done" }]);
          }
          if ("fail" in reply) return Effect.fail(reply.fail);
          if ("hang" in reply) {
            return Effect.andThen(
              Deferred.succeed(reply.hang, undefined),
              Effect.never,
            );
          }
          return Effect.as(reply.before ?? Effect.void, [
            { type: "text" as const, text: reply.text },
          ]);
        }),
      streamText: (options) =>
        Stream.unwrap(Effect.sync(() => {
          const reply = script.stream?.[streamed.length];
          streamed.push(options.prompt);
          if (reply === undefined) {
            return Stream.fromIterable([...text("done"), finish()]);
          }
          if ("fail" in reply) return Stream.fail(reply.fail);
          const parts = Stream.fromIterable(reply.parts);
          if (reply.thenFail !== undefined) {
            return Stream.concat(parts, Stream.fail(reply.thenFail));
          }
          const latch = reply.thenHang;
          if (latch !== undefined) {
            return Stream.concat(
              parts,
              Stream.fromEffect(
                Effect.andThen(
                  Deferred.succeed(latch, undefined),
                  Effect.never,
                ),
              ),
            );
          }
          return parts;
        })),
    }),
  );
  return { layer, streamed, summarized };
};

/** A fresh JSONL store layer in a temp folder. */
export const tempStore = (): Layer.Layer<SessionStore, unknown> =>
  layerJsonlStore({ root: tempDir("palimpsest-ai-") });

/**
 * A model error as an HTTP provider reports it: the reason its status
 * gives (529 is a provider error), with the status and headers kept.
 */
export const httpFailure = (
  status: number,
  headers: Record<string, string> = {},
): AiError.AiError => {
  const http = { response: { status, headers } };
  return AiError.make({
    module: "Scripted",
    method: "streamText",
    reason: status === 529
      ? new AiError.InternalProviderError({ description: "overloaded", http })
      : AiError.reasonFromHttpStatus({ status, http }),
  });
};
