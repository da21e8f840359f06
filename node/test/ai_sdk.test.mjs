// The AI SDK entry point from the installed package
// (`@palimpsest/session/ai-sdk`) under Node: a provider model of the AI SDK's
// interface (`LanguageModelV4`, written here by hand, as a provider package
// would give it) runs a turn of `runTurn`, and the log's messages come back
// as the AI SDK's `ModelMessage[]`.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { deriveMessages, layerJsonlStore } from "@palimpsest/session";
import { layerAiSdkModel, toModelMessages } from "@palimpsest/session/ai-sdk";
import { turnAndReopen } from "./_turn.mjs";

const usage = {
  inputTokens: { total: 7, noCache: 7, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 3, text: 3, reasoning: 0 },
};

// One streamed answer, as a provider's doStream returns it.
const providerModel = () => {
  const calls = [];
  return {
    calls,
    model: {
      specificationVersion: "v4",
      provider: "loopback",
      modelId: "m-1",
      supportedUrls: {},
      doGenerate: () => Promise.reject(new Error("not used")),
      doStream: (options) => {
        calls.push(options);
        const parts = [
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "Hello from Node." },
          { type: "text-end", id: "t" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
        ];
        return Promise.resolve({
          stream: new ReadableStream({
            start(controller) {
              for (const part of parts) controller.enqueue(part);
              controller.close();
            },
          }),
        });
      },
    },
  };
};

test("runs a turn on an AI SDK provider model and gives back ModelMessage[]", async () => {
  const provider = providerModel();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-node-ai-sdk-"));
  const { outcome, session } = await turnAndReopen(
    "sdk",
    { model: { provider: "loopback", model: "m-1" }, input: "Say hello." },
    layerAiSdkModel(provider.model),
    layerJsonlStore({ root }),
  );
  assert.equal(outcome.reason, "completed");
  assert.equal(provider.calls.length, 1);
  assert.deepEqual(provider.calls[0].prompt, [{
    role: "user",
    content: [{ type: "text", text: "Say hello." }],
  }]);
  const messages = toModelMessages(deriveMessages(session.surface));
  assert.deepEqual(messages.map((m) => m.role), ["user", "assistant"]);
  const last = messages.at(-1);
  const text = typeof last.content === "string"
    ? last.content
    : last.content.map((p) => p.text ?? "").join("");
  assert.equal(text, "Hello from Node.");
});
