/**
 * The `read` tool the turn tests give the scripted model: it takes a path and
 * answers a string.
 *
 * @module
 */
import { Effect, Schema } from "effect";
import { Tool, Toolkit } from "effect/ai";

/** The `read` tool: `{ path }` in, a string out. */
export const Read = Tool.make("read", {
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.String,
});

/** A toolkit of the `read` tool alone. */
export const readTools = Toolkit.make(Read);

/** Handlers of {@link readTools}: `read` answers "contents of PATH". */
export const readHandlers = readTools.toLayer({
  read: ({ path }) => Effect.succeed(`contents of ${path}`),
});

/** The provider and model the turn tests record for the scripted model. */
export const scriptedModelId = { provider: "scripted", model: "test-1" };
