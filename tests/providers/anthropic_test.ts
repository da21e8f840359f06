import assert from "node:assert/strict";
import {
  anthropicToolId,
  CONTINUATION_TEXT,
  MISSING_RESULT_TEXT,
  toAnthropic,
  validateAnthropic,
} from "@palimpsest/session/providers";
import { transcript } from "../_helpers/ai_fixture.ts";
import { fromModel, fromUser } from "./_messages.ts";

Deno.test("toAnthropic() maps the fixture transcript", () => {
  const id = anthropicToolId("c.1");
  assert.deepEqual(toAnthropic(transcript), {
    system: "be brief",
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          {
            type: "image",
            source: { type: "base64", media_type: "image/png", data: "iVBO" },
          },
          { type: "text", text: "[image omitted]" },
          {
            type: "document",
            source: {
              type: "base64",
              media_type: "application/pdf",
              data: "JVBE",
            },
            title: "a.pdf",
          },
          {
            type: "document",
            source: { type: "url", url: "https://example.com/b.pdf" },
          },
          { type: "text", text: "[file omitted]" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "reading" },
          { type: "tool_use", id, name: "read", input: { path: "a" } },
          {
            type: "tool_use",
            id: "c2",
            name: "grep",
            input: { invalid_json_arguments: "{bad" },
          },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: id,
            content: [
              { type: "text", text: "contents" },
              {
                type: "image",
                source: { type: "url", url: "https://example.com/shot.png" },
              },
            ],
          },
          {
            type: "tool_result",
            tool_use_id: "c2",
            content: [{ type: "text", text: MISSING_RESULT_TEXT }],
            is_error: true,
          },
          { type: "text", text: "hurry" },
          { type: "text", text: "now answer" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "done" }] },
    ],
  });
});

Deno.test("toAnthropic() merges same-role turns and opens with the user", () => {
  const request = toAnthropic([
    fromModel("a0", [{ type: "text", text: "hello" }]),
    fromModel("a1", [{ type: "reasoning", text: "x" }]),
    fromModel("a2", [{ type: "text", text: "again" }]),
    fromUser("u3", " "),
  ]);
  assert.equal(request.system, undefined);
  assert.deepEqual(request.messages, [
    { role: "user", content: [{ type: "text", text: CONTINUATION_TEXT }] },
    {
      role: "assistant",
      content: [{ type: "text", text: "hello" }, {
        type: "text",
        text: "again",
      }],
    },
  ]);
});

Deno.test("anthropicToolId() keeps valid ids and maps others to distinct valid ids", () => {
  assert.equal(anthropicToolId("toolu_01-A"), "toolu_01-A");
  const a = anthropicToolId("a.b");
  const b = anthropicToolId("a:b");
  assert.match(a, /^[a-zA-Z0-9_-]+$/);
  assert.notEqual(a, b);
});

Deno.test("validateAnthropic() reports each broken rule", () => {
  const tags = validateAnthropic({
    messages: [
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "a.b", name: "n", input: {} }],
      },
      { role: "assistant", content: [] },
      {
        role: "user",
        content: [
          { type: "text", text: " " },
          { type: "tool_result", tool_use_id: "zz" },
        ],
      },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "a.b", name: "n", input: {} }],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "a.b" },
          { type: "tool_result", tool_use_id: "a.b" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "end " }] },
    ],
  }).map((v) => [v._tag, v.index, v.callId]);
  assert.deepEqual(tags, [
    ["FirstTurnNotUser", 0, undefined],
    ["InvalidToolCallId", 0, "a.b"],
    ["ToolCallNotAnswered", 0, "a.b"],
    ["RolesNotAlternating", 1, undefined],
    ["EmptyContent", 1, undefined],
    ["BlankText", 2, undefined],
    ["ToolResultNotFirst", 2, "zz"],
    ["ToolResultWithoutCall", 2, "zz"],
    ["DuplicateToolCallId", 3, "a.b"],
    ["InvalidToolCallId", 3, "a.b"],
    ["DuplicateToolResult", 4, "a.b"],
    ["TrailingWhitespace", 5, undefined],
    ["ToolsNotDefined", 0, undefined],
  ]);
});
