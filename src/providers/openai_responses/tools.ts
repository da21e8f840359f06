/**
 * The tools of an OpenAI Responses request: the wire shapes of its `tools` and
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

/** An OpenAI Responses function tool. */
export interface OpenAIResponsesTool {
  /** The kind. */
  type: "function";
  /** The name. */
  name: string;
  /** The description, when there is one. */
  description?: string;
  /** The parameters. */
  parameters: JsonObject;
  /**
   * Whether OpenAI enforces the schema strictly: always `false`, the
   * default of Chat Completions, so any JSON Schema is accepted.
   */
  strict: false;
}

/** An OpenAI Responses `tool_choice`. */
export type OpenAIResponsesToolChoice =
  | "auto"
  | "none"
  | "required"
  | { type: "function"; name: string };

/** The `tools` and `tool_choice` of a Responses request. */
export interface OpenAIResponsesTools {
  /** The tools. */
  tools?: Array<OpenAIResponsesTool>;
  /** The choice, when one was given. */
  tool_choice?: OpenAIResponsesToolChoice;
}

/**
 * The `tools` and `tool_choice` of an OpenAI Responses request: `function`
 * tools with `strict: false` (the request schema requires the field; strict
 * mode would refuse schemas with optional properties); `"auto"`, `"none"` and `"required"` as they are, a named tool as
 * `{ type: "function", name }`. With no tools, both are left out.
 *
 * @param tools The tools' definitions (from a `Toolkit`: `toolDefinitions`
 *   in `@palimpsest/session/ai`).
 * @param choice Which tool the model may or must call; the provider's
 *   default (`auto`) when absent.
 * @returns The fields to spread into the request.
 *
 * @example Tools the model must use
 * ```ts
 * import { openAIResponsesTools } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * const read = { name: "read", parameters: { type: "object", properties: {} } };
 * assert.deepEqual(openAIResponsesTools([read], "required"), {
 *   tools: [{ type: "function", ...read, strict: false }],
 *   tool_choice: "required",
 * });
 * ```
 */
export function openAIResponsesTools(
  tools: ReadonlyArray<ToolDefinition>,
  choice?: ToolChoice,
): OpenAIResponsesTools {
  return toolFields(
    tools,
    choice,
    (d) => ({
      type: "function",
      ...namedTool(d),
      parameters: d.parameters,
      strict: false,
    }),
    (c): OpenAIResponsesToolChoice =>
      typeof c === "string" ? c : { type: "function", name: c.tool },
  );
}
