import assert from "node:assert/strict";
import { Schema } from "effect";
import { Tool, Toolkit } from "effect/ai";
import { toolDefinitions } from "@palimpsest/session/ai";
import {
  anthropicTools,
  geminiTools,
  openAIChatTools,
  openAIResponsesTools,
  type ToolChoice,
} from "@palimpsest/session/providers";
import {
  fullBody,
  schemaChecks,
  TARGETS,
} from "../_helpers/provider_schemas.ts";

const Read = Tool.make("read", {
  description: "Read a file",
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.String,
});
const Now = Tool.make("now", { success: Schema.String });
const Dynamic = Tool.dynamic("lookup", {
  description: "Look a word up",
  parameters: { type: "object", properties: { word: { type: "string" } } },
});
const WebSearch = Tool.providerDefined({
  id: "openai.web_search",
  customName: "WebSearch",
  providerName: "web_search",
  args: Schema.Struct({}),
  success: Schema.String,
})({});

Deno.test("a toolkit becomes definitions: name, description, parameters' JSON Schema; provider-defined tools left out", () => {
  const definitions = toolDefinitions(
    Toolkit.make(Read, Now, Dynamic, WebSearch),
  );
  assert.deepEqual(definitions.map((d) => d.name), ["read", "now", "lookup"]);
  assert.deepEqual(definitions.map((d) => d.description), [
    "Read a file",
    undefined,
    "Look a word up",
  ]);
  assert.deepEqual(definitions[0]?.parameters.required, ["path"]);
  assert.equal(definitions[1]?.parameters.type, "object");
  assert.deepEqual(definitions[2]?.parameters, {
    type: "object",
    properties: { word: { type: "string" } },
  });
  const plain = [{ name: "x", parameters: { type: "object" } }];
  assert.equal(toolDefinitions(plain), plain);
});

const read = {
  name: "read",
  parameters: { type: "object", properties: { path: { type: "string" } } },
};

Deno.test("each choice maps to each provider's own spelling", () => {
  const choices: ReadonlyArray<ToolChoice> = [
    "auto",
    "none",
    "required",
    { tool: "read" },
  ];
  assert.deepEqual(
    choices.map((c) => openAIChatTools([read], c).tool_choice),
    ["auto", "none", "required", {
      type: "function",
      function: { name: "read" },
    }],
  );
  assert.deepEqual(
    choices.map((c) => openAIResponsesTools([read], c).tool_choice),
    ["auto", "none", "required", { type: "function", name: "read" }],
  );
  assert.deepEqual(
    choices.map((c) => anthropicTools([read], c).tool_choice),
    [{ type: "auto" }, { type: "none" }, { type: "any" }, {
      type: "tool",
      name: "read",
    }],
  );
  assert.deepEqual(
    choices.map((c) => geminiTools([read], c).toolConfig),
    [
      { functionCallingConfig: { mode: "AUTO" } },
      { functionCallingConfig: { mode: "NONE" } },
      { functionCallingConfig: { mode: "ANY" } },
      {
        functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["read"] },
      },
    ],
  );
  // No choice: the provider's default, nothing sent.
  assert.equal("tool_choice" in openAIChatTools([read]), false);
  assert.equal("toolConfig" in geminiTools([read]), false);
});

Deno.test("no tools send neither tools nor a choice", () => {
  for (
    const convert of [
      openAIChatTools,
      openAIResponsesTools,
      anthropicTools,
      geminiTools,
    ]
  ) {
    assert.deepEqual(convert([], "required"), {});
    assert.deepEqual(
      convert(toolDefinitions(Toolkit.make(WebSearch)), "auto"),
      {},
    );
  }
});

Deno.test("each provider's tool shape: Anthropic's input_schema is an object schema, Gemini's description is never empty", () => {
  assert.deepEqual(openAIChatTools([read]).tools, [
    { type: "function", function: read },
  ]);
  assert.deepEqual(openAIResponsesTools([read]).tools, [
    { type: "function", ...read, strict: false },
  ]);
  assert.deepEqual(
    anthropicTools([{ name: "now", parameters: {} }]).tools,
    [{ name: "now", input_schema: { type: "object" } }],
  );
  assert.deepEqual(
    geminiTools([{ ...read, description: "" }]).tools,
    [{
      functionDeclarations: [{
        name: "read",
        description: "read",
        parametersJsonSchema: read.parameters,
      }],
    }],
  );
});

Deno.test("bodies with every choice and a toolkit's tools are valid by each provider's schema", () => {
  const checks = schemaChecks();
  const messages = [{
    id: "u0",
    role: "user" as const,
    source: { kind: "user" as const },
    content: [{ type: "text" as const, text: "hi" }],
  }];
  const toolkit = Toolkit.make(Read, Now, Dynamic, WebSearch);
  for (
    const choice of ["auto", "none", "required", { tool: "read" }] as const
  ) {
    for (const target of TARGETS) {
      const body = fullBody(target, messages, toolkit, choice);
      assert.deepEqual(checks[target](body), [], JSON.stringify(body));
    }
  }
  // A tool without a description is refused by Gemini's schema unless the
  // converter fills one in.
  const bare = {
    contents: [{ role: "user", parts: [{ text: "hi" }] }],
    tools: [{ functionDeclarations: [{ name: "read" }] }],
  };
  assert.notDeepEqual(checks["Gemini generateContent"](bare), []);
});
