/**
 * A session's answer as the AI SDK's UI message stream, read from the log:
 * live from another process's turn, or after it ended, the same chunks; the
 * AI SDK's own parser and message reader accept them.
 */
import { layerJsonlStore } from "@palimpsest/session";
import {
  uiMessageChunks,
  uiStreamResponse,
} from "../../src/ai_sdk/ui_stream.ts";
import {
  parseJsonEventStream,
  readUIMessageStream,
  type UIMessage,
  type UIMessageChunk,
  uiMessageChunkSchema,
} from "ai";
import { Effect, Stream } from "effect";
import assert from "node:assert/strict";
import { tempDir } from "../_helpers/store.ts";
import { startAgent } from "../_helpers/partial_child.ts";

const chunksOf = (root: string) =>
  Effect.runPromise(
    Stream.runCollect(uiMessageChunks("s", { fromSeq: 0 })).pipe(
      Effect.provide(layerJsonlStore({ root })),
    ),
  );

/** The UI message the AI SDK's client builds from the SSE response. */
const readAsClient = async (response: Response): Promise<UIMessage> => {
  const body = response.body;
  assert.ok(body !== null);
  const parsed = parseJsonEventStream({
    stream: body,
    schema: uiMessageChunkSchema,
  })
    .pipeThrough(
      new TransformStream<
        { success: boolean; value?: UIMessageChunk },
        UIMessageChunk
      >({
        transform(result, controller) {
          assert.ok(result.success, JSON.stringify(result));
          if (result.value !== undefined) controller.enqueue(result.value);
        },
      }),
    );
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream: parsed })) {
    last = message;
  }
  assert.ok(last !== undefined);
  return last;
};

Deno.test("a live answer from another process and the finished one give the same UI chunks, which the AI SDK reads", async () => {
  const root = tempDir("palimpsest-ui-");
  const agent = await startAgent(root, "s", "sent 20");
  // Connected mid-answer (the model has sent 20 parts).
  const live = await chunksOf(root);
  await agent.done;
  const finished = await chunksOf(root);
  assert.deepEqual(live, finished);
  const types = live.map((c) => c.type);
  assert.equal(types[0], "start");
  assert.equal(types.at(-1), "finish");
  assert.equal(types.filter((t) => t === "start-step").length, 2);
  // Each text part says exactly what the settled answer says.
  const text = live.flatMap((c) => c.type === "text-delta" ? [c.delta] : [])
    .join("");
  assert.match(text, /^say0 say1 .*say79 done0 .*done119 $/);
  assert.equal(
    live.filter((c) => c.type === "tool-input-available").length,
    1,
  );
  assert.equal(
    live.filter((c) => c.type === "tool-output-available").length,
    1,
  );
  const message = await readAsClient(
    uiStreamResponse(
      uiMessageChunks("s", { fromSeq: 0 }).pipe(
        Stream.provide(layerJsonlStore({ root })),
      ),
    ),
  );
  const parts = message.parts.map((p) => p.type);
  assert.ok(parts.includes("reasoning"));
  assert.ok(parts.includes("tool-note"));
  assert.equal(
    message.parts.flatMap((p) => p.type === "text" ? [p.text] : []).join(""),
    text,
  );
});
