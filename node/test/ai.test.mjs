// The turn loop from the installed package (`@palimpsest/session/ai`) under
// Node: one turn with a scripted `LanguageModel` that calls a tool, then
// answers, recorded in a JSONL session.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Effect, Layer, Schema, Stream } from "effect";
import { LanguageModel, Tool, Toolkit } from "effect/ai";
import {
  checkTranscript,
  deriveMessages,
  layerJsonlStore,
  SessionStore,
} from "@palimpsest/session";
import { readSessionFile } from "@palimpsest/session/jsonl";
import { runTurn } from "@palimpsest/session/ai";
import { toOpenAIChat } from "@palimpsest/session/providers";

const usage = { inputTokens: {}, outputTokens: {} };
// Each streamed request takes the next answer; every prompt is kept.
const scriptedModel = (answers) => {
  const prompts = [];
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () => Effect.succeed([{ type: "text", text: "summary" }]),
      streamText: (options) =>
        Stream.unwrap(Effect.sync(() => {
          prompts.push(options.prompt);
          return Stream.fromIterable(answers[prompts.length - 1] ?? []);
        })),
    }),
  );
  return { layer, prompts };
};

test("runs a turn with a tool call and a scripted model under Node", async () => {
  const Clock = Tool.make("clock", { success: Schema.String });
  const tools = Toolkit.make(Clock);
  const model = scriptedModel([
    [
      { type: "tool-call", id: "c1", name: "clock", params: {} },
      { type: "finish", reason: "tool-calls", usage },
    ],
    [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "It is noon." },
      { type: "text-end", id: "t" },
      { type: "finish", reason: "stop", usage },
    ],
  ]);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-node-ai-"));
  const program = Effect.gen(function* () {
    const store = yield* SessionStore;
    const handle = yield* store.create({ id: "agent", createdAt: 0, isSeeded: false });
    const toolkit = yield* tools;
    const outcome = yield* runTurn({
      handle,
      toolkit,
      model: { provider: "scripted", model: "m" },
      input: "What time is it?",
    });
    yield* store.close(handle);
    return outcome;
  });
  const outcome = await Effect.runPromise(
    Effect.scoped(program).pipe(Effect.provide(Layer.mergeAll(
      model.layer,
      layerJsonlStore({ root }),
      tools.toLayer({ clock: () => Effect.succeed("12:00") }),
    ))),
  );
  assert.equal(outcome.reason, "completed");
  assert.equal(outcome.steps, 2);
  assert.equal(model.prompts.length, 2);

  // The log on disk holds the whole turn; the transcript is well formed.
  const log = await Effect.runPromise(readSessionFile(path.join(root, "agent.jsonl")));
  const messages = deriveMessages(log.session.surface);
  assert.deepEqual(checkTranscript(messages), []);
  const types = log.events.map((e) => e.type);
  assert.equal(types[0], "turn/start");
  assert.equal(types.at(-1), "turn/end");
  assert.ok(types.includes("tool/result"));
  const chat = toOpenAIChat(messages).messages;
  assert.equal(chat.at(-1).content, "It is noon.");
  assert.ok(chat.some((m) => m.role === "tool" && m.content.includes("12:00")));
});
