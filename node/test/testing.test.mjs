// The test model from the installed package (`@palimpsest/session/testing`)
// under Node: a scripted model answers with a tool call, then with text,
// and `runTurn` records the turn in a temporary JSONL store.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Effect, Layer, Schema } from "effect";
import { Tool, Toolkit } from "effect/ai";
import { checkTranscript, deriveMessages, SessionStore } from "@palimpsest/session";
import { runTurn } from "@palimpsest/session/ai";
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
  const program = Effect.gen(function* () {
    const store = yield* SessionStore;
    const handle = yield* store.create({ id: "t", createdAt: 0, isSeeded: false });
    const outcome = yield* runTurn({
      handle,
      toolkit: yield* tools,
      model: { provider: "scripted", model: "m" },
      input: "What time is it?",
    });
    const reopened = yield* store.open("t");
    return { outcome, session: reopened.session };
  });
  const { outcome, session } = await Effect.runPromise(
    Effect.scoped(program).pipe(Effect.provide(Layer.mergeAll(
      model.layer,
      layerTempJsonlStore(),
      tools.toLayer({ clock: () => Effect.succeed("12:00") }),
    ))),
  );
  assert.equal(outcome.reason, "completed");
  assert.equal(model.requests.length, 2);
  const messages = deriveMessages(session.surface);
  assert.deepEqual(messages.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
  assert.deepEqual(checkTranscript(messages), []);
});
