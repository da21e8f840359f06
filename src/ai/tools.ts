/**
 * Tools in the request, on the `effect/ai` side: the definitions of a
 * `Toolkit`'s tools ({@link toolDefinitions}) and the tools a request with
 * these messages must define ({@link requestTools}). What each provider's
 * `tools` and tool choice look like, and the conversion to them, is each
 * provider's `tools.ts` in `src/providers/`.
 *
 * @module
 */
import * as Tool from "effect/ai/Tool";
import type * as Toolkit from "effect/ai/Toolkit";
import type { Message } from "../core/message.ts";
import { type JsonObject, UNNAMED_TOOL } from "../providers/content.ts";
import {
  calledToolDefinitions,
  type ToolChoice,
  type ToolDefinition,
} from "../providers/tool_definitions.ts";

/**
 * Tools as the engine takes them: an `effect/ai` `Toolkit` (with its
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
 * import { requestTools } from "@palimpsest/session/ai";
 * import { anthropicTools } from "@palimpsest/session/providers";
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
