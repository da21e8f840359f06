import assert from "node:assert/strict";
import {
  CONTINUATION_TEXT,
  MISSING_RESULT_TEXT,
  toGemini,
  validateGemini,
} from "@palimpsest/session/providers";
import { transcript } from "../_helpers/ai_fixture.ts";
import { fromModel } from "./_messages.ts";

Deno.test("toGemini() maps the fixture transcript", () => {
  assert.deepEqual(toGemini(transcript), {
    systemInstruction: { parts: [{ text: "be brief" }] },
    contents: [
      {
        role: "user",
        parts: [
          { text: "look" },
          { inlineData: { mimeType: "image/png", data: "iVBO" } },
          { inlineData: { mimeType: "image/bmp", data: "Qk0=" } },
          { inlineData: { mimeType: "application/pdf", data: "JVBE" } },
          { text: "[file omitted]" },
          { text: "[file omitted]" },
        ],
      },
      {
        role: "model",
        parts: [
          { text: "reading" },
          { functionCall: { id: "c.1", name: "read", args: { path: "a" } } },
          {
            functionCall: {
              id: "c2",
              name: "grep",
              args: { invalid_json_arguments: "{bad" },
            },
          },
        ],
      },
      {
        role: "user",
        parts: [
          {
            functionResponse: {
              id: "c.1",
              name: "read",
              response: { output: "contents\n[image omitted]" },
            },
          },
          {
            functionResponse: {
              id: "c2",
              name: "grep",
              response: { error: MISSING_RESULT_TEXT },
            },
          },
          { text: "hurry" },
          { text: "now answer" },
        ],
      },
      { role: "model", parts: [{ text: "done  " }] },
    ],
  });
});

Deno.test("toGemini() opens with the user and merges same-role turns", () => {
  assert.deepEqual(
    toGemini([
      fromModel("a0", [{ type: "text", text: "a" }]),
      fromModel("a1", [{ type: "text", text: "b" }]),
    ]).contents,
    [
      { role: "user", parts: [{ text: CONTINUATION_TEXT }] },
      { role: "model", parts: [{ text: "a" }, { text: "b" }] },
    ],
  );
});

Deno.test("validateGemini() reports each broken rule", () => {
  const call = (id: string, name = "n") => ({
    functionCall: { id, name, args: {} },
  });
  const response = (id: string, name = "n") => ({
    functionResponse: { id, name, response: { output: "" } },
  });
  const tags = validateGemini({
    contents: [
      { role: "model", parts: [call("c1"), call("c2")] },
      { role: "user", parts: [response("c1"), { text: "" }, response("c2")] },
      { role: "user", parts: [] },
      { role: "model", parts: [call("c1", "m")] },
      {
        role: "user",
        parts: [response("c1", "x"), response("c1", "m"), call("c9")],
      },
    ],
  }).map((v) => [v._tag, v.index, v.callId]);
  assert.deepEqual(tags, [
    ["FirstTurnNotUser", 0, undefined],
    ["EmptyContent", 1, undefined],
    // A response after other parts does not count as an answer.
    ["ToolResultWithoutCall", 1, "c2"],
    ["RolesNotAlternating", 2, undefined],
    ["EmptyContent", 2, undefined],
    ["DuplicateToolCallId", 3, "c1"],
    ["ToolResultNameMismatch", 4, "c1"],
    ["DuplicateToolResult", 4, "c1"],
    ["UnexpectedRole", 4, "c9"],
    ["ToolsNotDefined", 0, undefined],
  ]);
});
