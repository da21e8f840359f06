// The test model from the installed package (`@palimpsest/session/testing`)
// under Node: a scripted model answers with a tool call, then with text,
// and `runTurn` records the turn in a temporary JSONL store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Effect, Schema } from "effect";
import { Tool, Toolkit } from "effect/ai";
import { checkTranscript, deriveMessages } from "@palimpsest/session";
import { turnAndReopen } from "./_turn.mjs";
import {
  finish,
  layerTempJsonlStore,
  scriptedModel,
  text,
  toolCall,
} from "@palimpsest/session/testing";

test("runs a turn with the scripted test model under Node", async () => {
  const Clock = Tool.make("clock", { success: Schema.String });
  const tools = Toolkit.make(Clock);
  const model = scriptedModel((prompt) =>
    prompt.content.at(-1)?.role === "tool"
      ? [...text("It is noon."), finish()]
      : [toolCall("c1", "clock"), finish("tool-calls")]
  );
  const { outcome, session } = await turnAndReopen(
    "t",
    {
      toolkit: tools,
      model: { provider: "scripted", model: "m" },
      input: "What time is it?",
    },
    model.layer,
    layerTempJsonlStore(),
    tools.toLayer({ clock: () => Effect.succeed("12:00") }),
  );
  assert.equal(outcome.reason, "completed");
  assert.equal(model.requests.length, 2);
  const messages = deriveMessages(session.surface);
  assert.deepEqual(messages.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
  assert.deepEqual(checkTranscript(messages), []);
});
