/**
 * `@palimpsest/session/testing`: the scripted model serves both methods
 * from one function of the prompt and takes literal parts as written; the
 * temporary JSONL store leaves nothing behind.
 */
import { SessionStore } from "@palimpsest/session";
import {
  finish,
  layerMemoryStore,
  layerTempJsonlStore,
  reasoning,
  scriptedModel,
  text,
} from "@palimpsest/session/testing";
import { Chunk, Effect, Stream } from "effect";
import { AiError, LanguageModel } from "effect/ai";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";

Deno.test("literal stream parts compile as written, with or without as const", async () => {
  const plain = scriptedModel(() => [
    { type: "text-delta", id: "t", delta: "plain" },
    {
      type: "finish",
      reason: "stop",
      usage: { inputTokens: {}, outputTokens: {} },
    },
  ]);
  const frozen = scriptedModel(() =>
    [
      { type: "text-delta", id: "t", delta: "frozen" },
      {
        type: "finish",
        reason: "stop",
        usage: { inputTokens: { total: 1 }, outputTokens: {} },
      },
    ] as const
  );
  const textOf = (layer: typeof plain.layer) =>
    Effect.runPromise(
      LanguageModel.generateText({ prompt: "hi" }).pipe(
        Effect.map((r) => r.text),
        Effect.provide(layer),
      ),
    );
  assert.equal(await textOf(plain.layer), "plain");
  assert.equal(await textOf(frozen.layer), "frozen");
});

Deno.test("one script serves streamText and generateText and keeps every request", async () => {
  const model = scriptedModel((prompt, request) => [
    ...reasoning("thinking"),
    ...text(`${request.method} ${request.index} of ${prompt.content.length}`),
    finish("length", { input: 3, output: 2 }),
  ]);
  const program = Effect.gen(function* () {
    const whole = yield* LanguageModel.generateText({ prompt: "a" });
    const parts = yield* Stream.runCollect(
      LanguageModel.streamText({ prompt: "b" }),
    );
    return { whole, parts: Chunk.toReadonlyArray(Chunk.fromIterable(parts)) };
  });
  const { whole, parts } = await Effect.runPromise(
    program.pipe(Effect.provide(model.layer)),
  );
  assert.equal(whole.text, "generateText 0 of 1");
  assert.equal(whole.reasoningText, "thinking");
  assert.deepEqual(whole.content.map((p) => p.type), [
    "reasoning",
    "text",
    "finish",
  ]);
  assert.equal(whole.finishReason, "length");
  assert.equal(whole.usage.inputTokens.total, 3);
  assert.deepEqual(parts.map((p) => p.type), [
    "reasoning-start",
    "reasoning-delta",
    "reasoning-end",
    "text-start",
    "text-delta",
    "text-end",
    "finish",
  ]);
  assert.deepEqual(
    model.requests.map((r) => [r.method, r.index]),
    [["generateText", 0], ["streamText", 1]],
  );
});

Deno.test("a text reply streams as text and a stop finish; a failing script fails the request", async () => {
  const down = AiError.make({
    module: "Test",
    method: "streamText",
    reason: new AiError.InternalProviderError({ description: "overloaded" }),
  });
  const model = scriptedModel((_, request) =>
    request.index === 0 ? "Hello." : Effect.fail(down)
  );
  const first = await Effect.runPromise(
    Stream.runCollect(LanguageModel.streamText({ prompt: "a" })).pipe(
      Effect.provide(model.layer),
    ),
  );
  assert.deepEqual(
    Chunk.toReadonlyArray(Chunk.fromIterable(first)).map((p) => p.type),
    ["text-start", "text-delta", "text-end", "finish"],
  );
  const second = await Effect.runPromise(
    Effect.flip(LanguageModel.generateText({ prompt: "b" })).pipe(
      Effect.provide(model.layer),
    ),
  );
  assert.equal(second._tag, "AiError");
});

Deno.test("the temporary JSONL store removes its folder when released", async () => {
  const before = new Set(fs.readdirSync(os.tmpdir()));
  const made = await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* SessionStore;
      yield* Effect.scoped(
        store.create({ id: "s", createdAt: 0, isSeeded: false }),
      );
      const during = fs.readdirSync(os.tmpdir()).filter((f) =>
        !before.has(f) && f.startsWith("palimpsest-testing-check-")
      );
      return { ids: yield* store.list(), during };
    }).pipe(Effect.provide(layerTempJsonlStore("palimpsest-testing-check-"))),
  );
  assert.deepEqual(made.ids, ["s"]);
  assert.equal(made.during.length, 1);
  assert.ok(!fs.existsSync(`${os.tmpdir()}/${made.during[0]}`));
});

Deno.test("the memory store is re-exported for tests", async () => {
  const ids = await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* SessionStore;
      yield* Effect.scoped(
        store.create({ id: "m", createdAt: 0, isSeeded: false }),
      );
      return yield* store.list();
    }).pipe(Effect.provide(layerMemoryStore())),
  );
  assert.deepEqual(ids, ["m"]);
});
