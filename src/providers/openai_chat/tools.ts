/**
 * The tools of an OpenAI Chat Completions request: the wire shapes of its `tools` and
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

/** An OpenAI Chat Completions function tool. */
export interface OpenAIChatTool {
  /** The kind. */
  type: "function";
  /** The function. */
  function: { name: string; description?: string; parameters: JsonObject };
}

/** An OpenAI Chat Completions `tool_choice`. */
export type OpenAIChatToolChoice =
  | "auto"
  | "none"
  | "required"
  | { type: "function"; function: { name: string } };

/** The `tools` and `tool_choice` of a Chat Completions request. */
export interface OpenAIChatTools {
  /** The tools. */
  tools?: Array<OpenAIChatTool>;
  /** The choice, when one was given. */
  tool_choice?: OpenAIChatToolChoice;
}

/**
 * The `tools` and `tool_choice` of an OpenAI Chat Completions request:
 * `function` tools; `"auto"`, `"none"` and `"required"` as they are, a
 * named tool as `{ type: "function", function: { name } }`. With no tools,
 * both are left out (OpenAI refuses a `tool_choice` without tools).
 *
 * @param tools The tools' definitions (from a `Toolkit`: `toolDefinitions`
 *   in `@palimpsest/session/ai`).
 * @param choice Which tool the model may or must call; the provider's
 *   default (`auto`) when absent.
 * @returns The fields to spread into the request.
 *
 * @example A named tool
 * ```ts
 * import { openAIChatTools } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * const read = { name: "read", parameters: { type: "object", properties: {} } };
 * assert.deepEqual(openAIChatTools([read], { tool: "read" }), {
 *   tools: [{ type: "function", function: read }],
 *   tool_choice: { type: "function", function: { name: "read" } },
 * });
 * ```
 */
export function openAIChatTools(
  tools: ReadonlyArray<ToolDefinition>,
  choice?: ToolChoice,
): OpenAIChatTools {
  return toolFields(
    tools,
    choice,
    (d) => ({
      type: "function",
      function: { ...namedTool(d), parameters: d.parameters },
    }),
    (c): OpenAIChatToolChoice =>
      typeof c === "string"
        ? c
        : { type: "function", function: { name: c.tool } },
  );
}
