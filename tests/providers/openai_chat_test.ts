import assert from "node:assert/strict";
import {
  MISSING_RESULT_TEXT,
  toOpenAIChat,
  validateOpenAIChat,
} from "@palimpsest/session/providers";
import { transcript } from "../_helpers/ai_fixture.ts";

/** A tool call of a Chat Completions assistant message. */
const functionCall = (id: string, name: string, args: string) => ({
  id,
  type: "function" as const,
  function: { name, arguments: args },
});

Deno.test("toOpenAIChat() maps the fixture transcript", () => {
  assert.deepEqual(toOpenAIChat(transcript), {
    messages: [
      { role: "system", content: "be brief" },
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          {
            type: "image_url",
            image_url: { url: "data:image/png;base64,iVBO" },
          },
          {
            type: "image_url",
            image_url: { url: "data:image/bmp;base64,Qk0=" },
          },
          {
            type: "file",
            file: {
              file_data: "data:application/pdf;base64,JVBE",
              filename: "a.pdf",
            },
          },
          { type: "text", text: "[file omitted]" },
          { type: "text", text: "[file omitted]" },
        ],
      },
      {
        role: "assistant",
        content: "reading",
        tool_calls: [
          functionCall("c.1", "read", '{"path":"a"}'),
          functionCall("c2", "grep", "{bad"),
        ],
      },
      {
        role: "tool",
        tool_call_id: "c.1",
        content: "contents\n\n[image omitted]",
      },
      { role: "tool", tool_call_id: "c2", content: MISSING_RESULT_TEXT },
      { role: "user", content: [{ type: "text", text: "hurry" }] },
      { role: "system", content: "now answer" },
      { role: "assistant", content: "done  " },
    ],
  });
});

Deno.test("validateOpenAIChat() reports each broken rule", () => {
  const tags = validateOpenAIChat({
    messages: [
      { role: "tool", tool_call_id: "x", content: "" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          functionCall("c1", "n", "{}"),
          functionCall("c2", "n", "{}"),
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "" },
      { role: "tool", tool_call_id: "c1", content: "" },
      { role: "user", content: [] },
      { role: "tool", tool_call_id: "c2", content: "" },
      {
        role: "assistant",
        content: null,
        tool_calls: [functionCall("c1", "n", "{}")],
      },
      { role: "assistant", content: null },
    ],
  }).map((v) => [v._tag, v.index, v.callId]);
  assert.deepEqual(tags, [
    ["ToolResultWithoutCall", 0, "x"],
    ["DuplicateToolResult", 3, "c1"],
    ["ToolCallNotAnswered", 1, "c2"],
    ["EmptyContent", 4, undefined],
    ["ToolResultWithoutCall", 5, "c2"],
    ["DuplicateToolCallId", 6, "c1"],
    ["ToolCallNotAnswered", 6, "c1"],
    ["AssistantWithoutContent", 7, undefined],
    ["ToolsNotDefined", 0, undefined],
  ]);
});
