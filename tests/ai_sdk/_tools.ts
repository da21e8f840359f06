/**
 * The toolkit the AI SDK model tests offer the model: one `read` tool that
 * takes a path and answers `contents of PATH`; and the mock model they run.
 *
 * @module
 */
import { Effect, Schema } from "effect";
import { Tool, Toolkit } from "effect/ai";
import { MockLanguageModelV4 } from "ai/test";

/** The `read` tool, described as the AI SDK sends it to a provider. */
export const Read = Tool.make("read", {
  description: "Reads a file",
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.String,
});

/** The toolkit of {@link Read}. */
export const tools = Toolkit.make(Read);

/** The handlers of {@link tools}: reading PATH gives `contents of PATH`. */
export const toolLayer = tools.toLayer({
  read: ({ path }) => Effect.succeed(`contents of ${path}`),
});

/** How a mock AI SDK model answers: everything but its names. */
export type MockAnswers = Omit<
  NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>,
  "provider" | "modelId"
>;

/**
 * A mock AI SDK model named `mock-1` of provider `mock` (the source its
 * answers are recorded with), answering as `answers` says.
 */
export const mockModel = (answers: MockAnswers): MockLanguageModelV4 =>
  new MockLanguageModelV4({ provider: "mock", modelId: "mock-1", ...answers });
