/**
 * The tools of a Gemini request: the wire shapes of its `tools` and
 * tool choice, and their conversion from {@link ToolDefinition}s.
 *
 * @module
 */
import type { JsonObject } from "../content.ts";
import type { ToolChoice, ToolDefinition } from "../tool_definitions.ts";

/** A Gemini function declaration. */
export interface GeminiFunctionDeclaration {
  /** The name. */
  name: string;
  /** The description (Gemini requires one: the name when none is given). */
  description: string;
  /** The parameters, as JSON Schema. */
  parametersJsonSchema: JsonObject;
}

/** A Gemini `toolConfig`. */
export interface GeminiToolConfig {
  /** How the model calls functions. */
  functionCallingConfig: {
    mode: "AUTO" | "NONE" | "ANY";
    allowedFunctionNames?: Array<string>;
  };
}

/** The `tools` and `toolConfig` of a Gemini request. */
export interface GeminiTools {
  /** One tool holding every function declaration. */
  tools?: Array<{ functionDeclarations: Array<GeminiFunctionDeclaration> }>;
  /** The choice, when one was given. */
  toolConfig?: GeminiToolConfig;
}

/**
 * The `tools` and `toolConfig` of a Gemini request: one tool holding a
 * function declaration per tool, its parameters as `parametersJsonSchema`
 * (full JSON Schema) and its description, or its name when it has none
 * (Gemini requires a description); `"auto"`, `"none"` and `"required"` as
 * the modes `AUTO`, `NONE` and `ANY`, a named tool as `ANY` with that name
 * as the only allowed function. With no tools, both are left out.
 *
 * @param tools The tools' definitions (from a `Toolkit`: `toolDefinitions`
 *   in `@palimpsest/session/ai`).
 * @param choice Which tool the model may or must call; the provider's
 *   default (`AUTO`) when absent.
 * @returns The fields to spread into the request.
 *
 * @example A named tool
 * ```ts
 * import { geminiTools } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * const read = { name: "read", parameters: { type: "object", properties: {} } };
 * assert.deepEqual(geminiTools([read], { tool: "read" }), {
 *   tools: [{ functionDeclarations: [
 *     { name: "read", description: "read", parametersJsonSchema: read.parameters },
 *   ] }],
 *   toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["read"] } },
 * });
 * ```
 */
export function geminiTools(
  tools: ReadonlyArray<ToolDefinition>,
  choice?: ToolChoice,
): GeminiTools {
  if (tools.length === 0) return {};
  return {
    tools: [{
      functionDeclarations: tools.map((d) => ({
        name: d.name,
        description: d.description === undefined || d.description === ""
          ? d.name
          : d.description,
        parametersJsonSchema: d.parameters,
      })),
    }],
    ...(choice === undefined ? {} : {
      toolConfig: {
        functionCallingConfig: typeof choice === "string"
          ? { mode: GEMINI_MODES[choice] }
          : { mode: "ANY", allowedFunctionNames: [choice.tool] },
      },
    }),
  };
}

const GEMINI_MODES = {
  auto: "AUTO",
  none: "NONE",
  required: "ANY",
} as const;
