/**
 * The Codex importer's steps one at a time: given a state, when a payload,
 * then the state and the events the builder holds.
 */
import assert from "node:assert/strict";
import { makeBuilder } from "../../src/import/builder.ts";
import { eventMsg, flush, responseItem } from "../../src/import/codex.ts";
import {
  type CodexState,
  codexState,
  turnContext,
} from "../../src/import/codex_state.ts";
import { succeeds, T, types } from "./_steps.ts";

/** Codex's `function_call` `c1` at `line`. */
const callC1 = (s: CodexState, line: number) =>
  responseItem(
    s,
    {
      type: "function_call",
      call_id: "c1",
      name: "shell",
      arguments: "{}",
    },
    line,
    T,
    "response_item/function_call",
  );

Deno.test("codex steps: output items gather into one pending message that flush emits", () => {
  const s = codexState(makeBuilder());
  succeeds(responseItem(
    s,
    {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "looking" }],
    },
    1,
    T,
    "response_item/message",
  ));
  succeeds(callC1(s, 2));
  assert.deepEqual(types(s), []);
  assert.deepEqual(s.pending?.content.map((b) => b.type), [
    "text",
    "tool-call",
  ]);
  succeeds(flush(s));
  assert.equal(s.pending, undefined);
  assert.equal(s.modelOutputInTurn, true);
  assert.deepEqual(types(s).filter((t) => t === "assistant/message"), [
    "assistant/message",
  ]);
  assert.deepEqual([...s.b.openCalls], ["c1"]);
});

Deno.test("codex steps: a message logged while a call waits is held until the output", () => {
  const s = codexState(makeBuilder());
  succeeds(callC1(s, 1));
  succeeds(responseItem(
    s,
    {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "and then?" }],
    },
    2,
    T,
    "response_item/message",
  ));
  assert.equal(s.held.length, 1);
  assert.equal(types(s).includes("user/message"), false);
  succeeds(responseItem(
    s,
    {
      type: "function_call_output",
      call_id: "c1",
      output: "done",
    },
    3,
    T,
    "response_item/function_call_output",
  ));
  assert.deepEqual(s.held, []);
  const after = types(s).slice(types(s).indexOf("tool/result"));
  assert.deepEqual(after.filter((t) => t.endsWith("/message")), [
    "user/message",
  ]);
});

Deno.test("codex steps: turn_context records a model change only", () => {
  const s = codexState(makeBuilder());
  succeeds(turnContext(s, { model: "gpt-5" }, 1, T, "turn_context"));
  assert.deepEqual(s.model, { provider: "openai", model: "gpt-5" });
  assert.deepEqual(types(s), ["request/context"]);
  succeeds(turnContext(s, { model: "gpt-5" }, 2, T, "turn_context"));
  assert.deepEqual(types(s), ["request/context"]);
  assert.deepEqual(s.b.skipped.get("turn_context")?.lines, [2]);
});

Deno.test("codex steps: task_started makes turns explicit and opens one", () => {
  const s = codexState(makeBuilder());
  succeeds(
    eventMsg(s, { type: "task_started" }, 1, T, "event_msg/task_started"),
  );
  assert.equal(s.explicitTurns, true);
  assert.equal(s.b.turn, 0);
  assert.deepEqual(types(s), ["turn/start"]);
  succeeds(
    eventMsg(s, { type: "task_complete" }, 2, T, "event_msg/task_complete"),
  );
  assert.equal(s.b.turn, undefined);
  assert.deepEqual(types(s), ["turn/start", "turn/end"]);
});
