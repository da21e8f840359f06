/**
 * The `read` tool the turn tests give the scripted model: it takes a path and
 * answers a string.
 *
 * @module
 */
import { Schema } from "effect";
import { Tool } from "effect/ai";

/** The `read` tool: `{ path }` in, a string out. */
export const Read = Tool.make("read", {
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.String,
});
