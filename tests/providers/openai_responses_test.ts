import assert from "node:assert/strict";
import {
  MISSING_RESULT_TEXT,
  toOpenAIResponses,
  validateOpenAIResponses,
} from "@palimpsest/session/providers";
import { transcript } from "../_helpers/ai_fixture.ts";

Deno.test("toOpenAIResponses() maps the fixture transcript", () => {
  assert.deepEqual(toOpenAIResponses(transcript), {
    instructions: "be brief",
    input: [
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "look" },
          {
            type: "input_image",
            detail: "auto",
            image_url: "data:image/png;base64,iVBO",
          },
          {
            type: "input_image",
            detail: "auto",
            image_url: "data:image/bmp;base64,Qk0=",
          },
          {
            type: "input_file",
            file_data: "data:application/pdf;base64,JVBE",
            filename: "a.pdf",
          },
          { type: "input_file", file_url: "https://example.com/b.pdf" },
          { type: "input_text", text: "[file omitted]" },
        ],
      },
      { type: "message", role: "assistant", content: "reading" },
      {
        type: "function_call",
        call_id: "c.1",
        name: "read",
        arguments: '{"path":"a"}',
      },
      { type: "function_call", call_id: "c2", name: "grep", arguments: "{bad" },
      {
        type: "function_call_output",
        call_id: "c.1",
        output: [
          { type: "input_text", text: "contents" },
          {
            type: "input_image",
            detail: "auto",
            image_url: "https://example.com/shot.png",
          },
        ],
      },
      {
        type: "function_call_output",
        call_id: "c2",
        output: MISSING_RESULT_TEXT,
      },
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "hurry" }],
      },
      { type: "message", role: "system", content: "now answer" },
      { type: "message", role: "assistant", content: "done  " },
    ],
  });
});

Deno.test("validateOpenAIResponses() reports each broken rule", () => {
  const tags = validateOpenAIResponses({
    input: [
      { type: "function_call_output", call_id: "x", output: "" },
      { type: "function_call", call_id: "c1", name: "n", arguments: "{}" },
      { type: "function_call", call_id: "c2", name: "n", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "" },
      { type: "function_call_output", call_id: "c1", output: "" },
      { type: "message", role: "assistant", content: "" },
      { type: "function_call_output", call_id: "c2", output: "" },
      { type: "function_call", call_id: "c1", name: "n", arguments: "{}" },
    ],
  }).map((v) => [v._tag, v.index, v.callId]);
  assert.deepEqual(tags, [
    ["ToolResultWithoutCall", 0, "x"],
    ["DuplicateToolResult", 4, "c1"],
    ["ToolCallNotAnswered", 2, "c2"],
    ["EmptyContent", 5, undefined],
    ["ToolResultWithoutCall", 6, "c2"],
    ["DuplicateToolCallId", 7, "c1"],
    ["ToolCallNotAnswered", 7, "c1"],
    ["ToolsNotDefined", 0, undefined],
  ]);
});

Deno.test("validateOpenAIResponses(): a call after outputs closes the calls before it", () => {
  const tags = validateOpenAIResponses({
    input: [
      { type: "function_call", call_id: "a", name: "n", arguments: "{}" },
      { type: "function_call_output", call_id: "a", output: "" },
      { type: "function_call", call_id: "b", name: "n", arguments: "{}" },
      { type: "function_call_output", call_id: "a", output: "" },
      { type: "function_call_output", call_id: "b", output: "" },
    ],
  }).map((v) => [v._tag, v.index, v.callId]);
  assert.deepEqual(tags, [
    ["ToolResultWithoutCall", 3, "a"],
    ["ToolsNotDefined", 0, undefined],
  ]);
});
