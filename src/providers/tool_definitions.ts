/**
 * The tools of a request as every provider is told about them: a
 * {@link ToolDefinition} (name, description, JSON Schema parameters) and a
 * {@link ToolChoice}, which each provider's `tools.ts` turns into that
 * API's own `tools` and tool choice; and the stand-in definitions for tools
 * known only by the calls of earlier messages. No `effect/ai` here: the
 * definitions of an `effect/ai` `Toolkit` are `toolDefinitions` in
 * `@palimpsest/session/ai`.
 *
 * @module
 */
import { type JsonObject, UNNAMED_TOOL } from "./content.ts";

/** A tool as every provider is told about it: a name, a description, and its parameters as JSON Schema. */
export interface ToolDefinition {
  /**
   * The name the model calls it by. All four providers accept letters,
   * digits, `_` and `-`, at most 64 characters; the name is sent as given.
   */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description?: string;
  /** The parameters: a JSON Schema of an object (`type: "object"`). */
  readonly parameters: JsonObject;
}

/**
 * Which tool the model may or must call: `"auto"` (the model decides),
 * `"none"` (no call), `"required"` (at least one call, any tool), or
 * `{ tool }` (a call to that tool).
 */
export type ToolChoice = "auto" | "none" | "required" | {
  /** The name of the tool the model must call. */
  readonly tool: string;
};

/**
 * A tool name every provider accepts in a definition: a letter or `_`
 * first, then letters, digits, `_` and `-`, at most 64 characters.
 */
const DEFINABLE = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

/** The description of a tool defined only because earlier messages call it. */
export const CALLED_TOOL_DESCRIPTION: string =
  "Not available now: named by earlier messages only.";

/**
 * Minimal definitions for tools known only by name (from the calls of
 * earlier messages): each name a provider accepts in a definition gets
 * `{ name, description: CALLED_TOOL_DESCRIPTION, parameters: { type:
 * "object", properties: {} } }`, in order, once; when no name qualifies
 * (empty, too long, odd characters), one such definition named
 * `unnamed_tool` stands for them. None for no names.
 *
 * @param names The tool names, as the messages call them.
 * @returns The definitions.
 *
 * @example Two calls to one tool and an odd name
 * ```ts
 * import { calledToolDefinitions } from "@palimpsest/session/providers";
 * import assert from "node:assert/strict";
 *
 * const defined = calledToolDefinitions(["read", "read", "mcp.ls"]);
 * assert.deepEqual(defined.map((d) => d.name), ["read"]);
 * assert.deepEqual(calledToolDefinitions(["mcp.ls"]).map((d) => d.name), ["unnamed_tool"]);
 * ```
 */
export function calledToolDefinitions(
  names: Iterable<string>,
): ReadonlyArray<ToolDefinition> {
  const seen = new Set<string>();
  let any = false;
  for (const name of names) {
    any = true;
    if (DEFINABLE.test(name)) seen.add(name);
  }
  if (!any) return [];
  const stub = (name: string): ToolDefinition => ({
    name,
    description: CALLED_TOOL_DESCRIPTION,
    parameters: { type: "object", properties: {} },
  });
  return seen.size === 0 ? [stub(UNNAMED_TOOL)] : [...seen].map(stub);
}

/**
 * A definition's name, and its description when it has one: the part of a
 * tool that Anthropic, both OpenAI APIs and the AI SDK write the same way.
 * @internal
 */
export const namedTool = (
  definition: ToolDefinition,
): { name: string; description?: string } => ({
  name: definition.name,
  ...(definition.description === undefined
    ? {}
    : { description: definition.description }),
});

/**
 * The `tools` and `tool_choice` of a request whose API names them so
 * (Anthropic, both OpenAI APIs): each definition as `tool` writes it, the
 * choice as `chosen` writes it. With no tools both are left out: OpenAI
 * refuses a `tool_choice` without tools.
 * @internal
 */
export const toolFields = <Tool, Choice>(
  tools: ReadonlyArray<ToolDefinition>,
  choice: ToolChoice | undefined,
  tool: (definition: ToolDefinition) => Tool,
  chosen: (choice: ToolChoice) => Choice,
): { tools?: Array<Tool>; tool_choice?: Choice } =>
  tools.length === 0 ? {} : {
    tools: tools.map(tool),
    ...(choice === undefined ? {} : { tool_choice: chosen(choice) }),
  };
