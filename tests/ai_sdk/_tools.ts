/**
 * The toolkit the AI SDK model tests offer the model: one `read` tool that
 * takes a path and answers `contents of PATH`.
 *
 * @module
 */
import { Effect, Schema } from "effect";
import { Tool, Toolkit } from "effect/ai";

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
