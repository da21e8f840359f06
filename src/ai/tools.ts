/**
 * Tools in the request: the tool definitions a harness sends with every
 * request, as each provider's `tools` and tool choice, from an `effect/ai`
 * `Toolkit` or from plain `{ name, description, parameters }` definitions
 * (JSON Schema). With these, a body the library builds is complete: the
 * adapter's messages, the tools, and the caller's model and limits.
 *
 * @module
 */
import * as Tool from "effect/ai/Tool";
import type * as Toolkit from "effect/ai/Toolkit";
import type { Message } from "../message.ts";
import { type JsonObject, UNNAMED_TOOL } from "../providers/content.ts";

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
 * Tools as the converters take them: an `effect/ai` `Toolkit` (with its
 * handlers or not) or plain definitions.
 */
export type Tools =
  | Toolkit.Any
  | { readonly tools: Readonly<Record<string, Tool.Any>> }
  | ReadonlyArray<ToolDefinition>;

const isToolkit = (
  tools: Tools,
): tools is { readonly tools: Readonly<Record<string, Tool.Any>> } =>
  !Array.isArray(tools);

/**
 * The definitions of a `Toolkit`'s tools (or plain definitions, as they
 * are): each tool's name, its description (`Tool.getDescription`) and the
 * JSON Schema of its parameters (`Tool.getJsonSchema`). Provider-defined
 * tools (a provider's own web search and the like) are left out: they are
 * configured through that provider's `effect/ai` layer, not as functions.
 *
 * @param tools A toolkit or plain definitions.
 * @returns The definitions, in the toolkit's order.
 *
 * @example A toolkit with one tool
 * ```ts
 * import { Schema } from "effect";
 * import { Tool, Toolkit } from "effect/ai";
 * import { toolDefinitions } from "@palimpsest/session/ai";
 * import assert from "node:assert/strict";
 *
 * const Read = Tool.make("read", {
 *   description: "Read a file",
 *   parameters: Schema.Struct({ path: Schema.String }),
 *   success: Schema.String,
 * });
 * const [read] = toolDefinitions(Toolkit.make(Read));
 * assert.equal(read?.name, "read");
 * assert.equal(read?.description, "Read a file");
 * assert.deepEqual(read?.parameters.required, ["path"]);
 * ```
 */
export function toolDefinitions(
  tools: Tools,
): ReadonlyArray<ToolDefinition> {
  if (!isToolkit(tools)) return tools;
  const out: ToolDefinition[] = [];
  for (const tool of Object.values(tools.tools)) {
    if (Tool.isProviderDefined(tool)) continue;
    const description = Tool.getDescription(tool);
    out.push({
      name: tool.name,
      ...(description === undefined ? {} : { description }),
      parameters: objectSchema(Tool.getJsonSchema(tool)),
    });
  }
  return out;
}

const objectSchema = (schema: unknown): JsonObject =>
  typeof schema === "object" && schema !== null && !Array.isArray(schema)
    ? schema as JsonObject
    : { type: "object" };

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
 * import { calledToolDefinitions } from "@palimpsest/session/ai";
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

/** The names of the tools the messages' calls name, in order. */
const calledNames = (messages: ReadonlyArray<Message>): string[] => {
  const names: string[] = [];
  let results = false;
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "tool-call") names.push(block.name);
      else if (block.type === "tool-result") results = true;
    }
  }
  // A result with no call in view still needs a tool defined.
  if (names.length === 0 && results) names.push(UNNAMED_TOOL);
  return names;
};

/**
 * The tools a request with these messages defines, and its tool choice.
 * Providers refuse a request that holds tool calls or results but defines
 * no tool (Anthropic: "Requests which include `tool_use` or `tool_result`
 * blocks must define tools"), so when `tools` is empty and the messages
 * hold a tool call or result, the tools are {@link calledToolDefinitions}
 * of the names called, and the choice is `"none"` (the model is not to
 * call them). Otherwise the tools and the choice are as given.
 *
 * @param messages The messages the request sends.
 * @param tools The tools the caller offers.
 * @param choice The caller's tool choice.
 * @returns The definitions and the choice for the tool converters.
 *
 * @example A summary request of a history with calls, no tools offered
 * ```ts
 * import { anthropicTools, requestTools } from "@palimpsest/session/ai";
 * import type { Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const messages: Message[] = [
 *   { id: "a", role: "assistant", source: { kind: "model", provider: "p", model: "m" },
 *     content: [{ type: "tool-call", id: "c1", name: "ls", arguments: "{}" }] },
 * ];
 * const { tools, choice } = requestTools(messages, []);
 * assert.deepEqual(anthropicTools(tools, choice).tool_choice, { type: "none" });
 * assert.deepEqual(tools.map((t) => t.name), ["ls"]);
 * ```
 */
export function requestTools(
  messages: ReadonlyArray<Message>,
  tools: Tools,
  choice?: ToolChoice,
): {
  readonly tools: ReadonlyArray<ToolDefinition>;
  readonly choice: ToolChoice | undefined;
} {
  const definitions = toolDefinitions(tools);
  if (definitions.length > 0) return { tools: definitions, choice };
  const called = calledToolDefinitions(calledNames(messages));
  return called.length === 0
    ? { tools: definitions, choice }
    : { tools: called, choice: "none" };
}

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
 * The `tools` and `tool_choice` of an OpenAI Chat Completions request:
 * `function` tools; `"auto"`, `"none"` and `"required"` as they are, a
 * named tool as `{ type: "function", function: { name } }`. With no tools,
 * both are left out (OpenAI refuses a `tool_choice` without tools).
 *
 * @param tools A toolkit or plain definitions.
 * @param choice Which tool the model may or must call; the provider's
 *   default (`auto`) when absent.
 * @returns The fields to spread into the request.
 *
 * @example A named tool
 * ```ts
 * import { openAIChatTools } from "@palimpsest/session/ai";
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
  tools: Tools,
  choice?: ToolChoice,
): OpenAIChatTools {
  const definitions = toolDefinitions(tools);
  if (definitions.length === 0) return {};
  return {
    tools: definitions.map((d) => ({
      type: "function",
      function: {
        name: d.name,
        ...(d.description === undefined ? {} : { description: d.description }),
        parameters: d.parameters,
      },
    })),
    ...(choice === undefined ? {} : {
      tool_choice: typeof choice === "string"
        ? choice
        : { type: "function", function: { name: choice.tool } },
    }),
  };
}

/**
 * The `tools` and `tool_choice` of an OpenAI Responses request: `function`
 * tools with `strict: false` (the request schema requires the field; strict
 * mode would refuse schemas with optional properties); `"auto"`, `"none"` and `"required"` as they are, a named tool as
 * `{ type: "function", name }`. With no tools, both are left out.
 *
 * @param tools A toolkit or plain definitions.
 * @param choice Which tool the model may or must call; the provider's
 *   default (`auto`) when absent.
 * @returns The fields to spread into the request.
 *
 * @example Tools the model must use
 * ```ts
 * import { openAIResponsesTools } from "@palimpsest/session/ai";
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
  tools: Tools,
  choice?: ToolChoice,
): OpenAIResponsesTools {
  const definitions = toolDefinitions(tools);
  if (definitions.length === 0) return {};
  return {
    tools: definitions.map((d) => ({
      type: "function",
      name: d.name,
      ...(d.description === undefined ? {} : { description: d.description }),
      parameters: d.parameters,
      strict: false,
    })),
    ...(choice === undefined ? {} : {
      tool_choice: typeof choice === "string"
        ? choice
        : { type: "function", name: choice.tool },
    }),
  };
}

/**
 * The `tools` and `tool_choice` of an Anthropic Messages request: each
 * tool's parameters as `input_schema`, its `type` set to `object` (which
 * Anthropic requires); `"auto"` as `{ type: "auto" }`, `"none"` as
 * `{ type: "none" }`, `"required"` as `{ type: "any" }`, a named tool as
 * `{ type: "tool", name }`. With no tools, both are left out.
 *
 * @param tools A toolkit or plain definitions.
 * @param choice Which tool the model may or must call; the provider's
 *   default (`auto`) when absent.
 * @returns The fields to spread into the request.
 *
 * @example Tools the model must use
 * ```ts
 * import { anthropicTools } from "@palimpsest/session/ai";
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
  tools: Tools,
  choice?: ToolChoice,
): AnthropicTools {
  const definitions = toolDefinitions(tools);
  if (definitions.length === 0) return {};
  return {
    tools: definitions.map((d) => ({
      name: d.name,
      ...(d.description === undefined ? {} : { description: d.description }),
      input_schema: { ...d.parameters, type: "object" },
    })),
    ...(choice === undefined ? {} : {
      tool_choice: choice === "required"
        ? { type: "any" }
        : typeof choice === "string"
        ? { type: choice }
        : { type: "tool", name: choice.tool },
    }),
  };
}

/**
 * The `tools` and `toolConfig` of a Gemini request: one tool holding a
 * function declaration per tool, its parameters as `parametersJsonSchema`
 * (full JSON Schema) and its description, or its name when it has none
 * (Gemini requires a description); `"auto"`, `"none"` and `"required"` as
 * the modes `AUTO`, `NONE` and `ANY`, a named tool as `ANY` with that name
 * as the only allowed function. With no tools, both are left out.
 *
 * @param tools A toolkit or plain definitions.
 * @param choice Which tool the model may or must call; the provider's
 *   default (`AUTO`) when absent.
 * @returns The fields to spread into the request.
 *
 * @example A named tool
 * ```ts
 * import { geminiTools } from "@palimpsest/session/ai";
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
export function geminiTools(tools: Tools, choice?: ToolChoice): GeminiTools {
  const definitions = toolDefinitions(tools);
  if (definitions.length === 0) return {};
  return {
    tools: [{
      functionDeclarations: definitions.map((d) => ({
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
