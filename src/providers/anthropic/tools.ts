/**
 * The tools of an Anthropic Messages request: the wire shapes of its `tools` and
 * tool choice, and their conversion from {@link ToolDefinition}s.
 *
 * @module
 */
import type { JsonObject } from "../content.ts";
import {
  namedTool,
  type ToolChoice,
  type ToolDefinition,
  toolFields,
} from "../tool_definitions.ts";

/** An Anthropic tool. */
export interface AnthropicTool {
  /** The name. */
  name: string;
  /** The description, when there is one. */
  description?: string;
  /** The parameters, always with `type: "object"`. */
  input_schema: JsonObject & { type: "object" };
}

/** An Anthropic `tool_choice`. */
export type AnthropicToolChoice =
  | { type: "auto" }
  | { type: "none" }
  | { type: "any" }
  | { type: "tool"; name: string };

/** The `tools` and `tool_choice` of an Anthropic Messages request. */
export interface AnthropicTools {
  /** The tools. */
  tools?: Array<AnthropicTool>;
  /** The choice, when one was given. */
  tool_choice?: AnthropicToolChoice;
}

/**
 * The `tools` and `tool_choice` of an Anthropic Messages request: each
 * tool's parameters as `input_schema`, its `type` set to `object` (which
 * Anthropic requires); `"auto"` as `{ type: "auto" }`, `"none"` as
 * `{ type: "none" }`, `"required"` as `{ type: "any" }`, a named tool as
 * `{ type: "tool", name }`. With no tools, both are left out.
 *
 * @param tools The tools' definitions (from a `Toolkit`: `toolDefinitions`
 *   in `@palimpsest/session/ai`).
 * @param choice Which tool the model may or must call; the provider's
 *   default (`auto`) when absent.
 * @returns The fields to spread into the request.
 *
 * @example Tools the model must use
 * ```ts
 * import { anthropicTools } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * const read = { name: "read", description: "Read a file",
 *   parameters: { type: "object", properties: {} } };
 * assert.deepEqual(anthropicTools([read], "required"), {
 *   tools: [{ name: "read", description: "Read a file",
 *     input_schema: { type: "object", properties: {} } }],
 *   tool_choice: { type: "any" },
 * });
 * ```
 */
export function anthropicTools(
  tools: ReadonlyArray<ToolDefinition>,
  choice?: ToolChoice,
): AnthropicTools {
  return toolFields(
    tools,
    choice,
    (d) => ({
      ...namedTool(d),
      input_schema: { ...d.parameters, type: "object" },
    }),
    (c): AnthropicToolChoice =>
      c === "required"
        ? { type: "any" }
        : typeof c === "string"
        ? { type: c }
        : { type: "tool", name: c.tool },
  );
}
