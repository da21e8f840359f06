/**
 * The providers' own request body schemas (`../shared/provider-specs/`,
 * JSON Schema 2020-12 made from each provider's published spec), compiled
 * once with ajv 8, and the full bodies a caller sends: an adapter's output
 * with the envelope (model, max tokens) and the tools the request needs.
 *
 * `ajv-formats` is loaded because the schemas check formats on fields the
 * adapters fill: `uri` (OpenAI image and file URLs), `byte` (Anthropic
 * base64 data), `date-time` and `float`.
 *
 * @module
 */
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { Message } from "@palimpsest/session";
import type { Tools } from "@palimpsest/session/ai";
import type { ToolChoice } from "@palimpsest/session/providers";
import {
  anthropicBody,
  geminiBody,
  openAIChatBody,
  openAIResponsesBody,
} from "./request_bodies.ts";

/** The four targets. */
export type Target =
  | "OpenAI Responses"
  | "OpenAI Chat"
  | "Anthropic Messages"
  | "Gemini generateContent";

/** Every target, in report order. */
export const TARGETS: ReadonlyArray<Target> = [
  "OpenAI Responses",
  "OpenAI Chat",
  "Anthropic Messages",
  "Gemini generateContent",
];

const FILES: Record<Target, string> = {
  "OpenAI Responses": "openai.responses.request.schema.json",
  "OpenAI Chat": "openai.chat.request.schema.json",
  "Anthropic Messages": "anthropic.messages.request.schema.json",
  "Gemini generateContent": "gemini.generateContent.request.schema.json",
};

/** A compiled schema: the errors of a body, empty when it is valid. */
export type BodyCheck = (body: unknown) => ReadonlyArray<ErrorObject>;

const compile = (target: Target): BodyCheck => {
  const schema = JSON.parse(
    Deno.readTextFileSync(
      new URL(
        `../../../shared/provider-specs/${FILES[target]}`,
        import.meta.url,
      ),
    ),
  );
  const ajv = new Ajv2020({ allErrors: false });
  addFormats.default(ajv);
  const validate = ajv.compile(schema);
  return (body) => validate(body) ? [] : [...(validate.errors ?? [])];
};

let compiled: Record<Target, BodyCheck> | undefined;

/** The four schemas, compiled on first use. */
export const schemaChecks = (): Record<Target, BodyCheck> => {
  compiled ??= {
    "OpenAI Responses": compile("OpenAI Responses"),
    "OpenAI Chat": compile("OpenAI Chat"),
    "Anthropic Messages": compile("Anthropic Messages"),
    "Gemini generateContent": compile("Gemini generateContent"),
  };
  return compiled;
};

/**
 * The full request body a caller sends to `target`: the library's body
 * (messages and the tools the request needs) with the model and limits.
 */
export const fullBody = (
  target: Target,
  messages: ReadonlyArray<Message>,
  tools: Tools,
  choice: ToolChoice | undefined,
): Record<string, unknown> => {
  switch (target) {
    case "OpenAI Responses":
      return {
        model: "gpt-5",
        max_output_tokens: 1024,
        ...openAIResponsesBody(messages, tools, choice),
      };
    case "OpenAI Chat":
      return {
        model: "gpt-5",
        max_completion_tokens: 1024,
        ...openAIChatBody(messages, tools, choice),
      };
    case "Anthropic Messages":
      return {
        model: "claude-sonnet-4-5",
        max_tokens: 1024,
        ...anthropicBody(messages, tools, choice),
      };
    case "Gemini generateContent":
      // The model is in the URL path (`models/{model}:generateContent`).
      return {
        ...geminiBody(messages, tools, choice),
        generationConfig: { maxOutputTokens: 1024 },
      };
  }
};
