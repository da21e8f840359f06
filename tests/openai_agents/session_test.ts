import {
  branches,
  layerJsonlStore,
  layerMemoryStore,
  SessionStore,
} from "@palimpsest/session";
import {
  makeAgentsSession,
  openAgentsSession,
} from "@palimpsest/session/openai-agents";
import type { AgentInputItem } from "@openai/agents";
import { MISSING_RESULT_TEXT } from "@palimpsest/session/providers";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { postgresTest } from "../_helpers/postgres.ts";
import { Effect, Layer } from "effect";
import { summaryModel } from "../_helpers/summary_model.ts";
import assert from "node:assert/strict";

const user = (text: string): AgentInputItem => ({
  role: "user",
  content: [{ type: "input_text", text }],
});
const answer = (text: string, id = "msg_1"): AgentInputItem => ({
  type: "message",
  id,
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, providerData: { annotations: [] } }],
});
const call = (callId: string, name = "add"): AgentInputItem => ({
  type: "function_call",
  id: `fc_${callId}`,
  callId,
  name,
  arguments: '{"a":1,"b":2}',
  status: "completed",
  providerData: { kept: true },
});
const result = (callId: string, output = "3"): AgentInputItem => ({
  type: "function_call_result",
  callId,
  name: "add",
  status: "completed",
  output: { type: "text", text: output },
});
const reasoning: AgentInputItem = {
  type: "reasoning",
  id: "rs_1",
  content: [{ type: "input_text", text: "thinking" }],
  providerData: { encryptedContent: "opaque==" },
};

const turn: AgentInputItem[] = [
  user("add 1 and 2, twice"),
  reasoning,
  call("c1"),
  call("c2"),
  result("c1"),
  result("c2"),
  {
    type: "hosted_tool_call",
    id: "ws_1",
    name: "web_search_call",
    status: "completed",
    providerData: { action: { type: "search", query: "1 + 2" } },
  },
  answer("3 and 3"),
];

const layers = {
  memory: () => layerMemoryStore(),
  jsonl: () => layerJsonlStore({ root: Deno.makeTempDirSync() }),
};

for (const [name, layer] of Object.entries(layers)) {
  Deno.test(`openai-agents (${name}): items read back as they were added, after a reopen`, async () => {
    const store = layer();
    // The memory store lives as long as its layer: keep one built.
    const built = await Effect.runPromise(
      Layer.build(store).pipe(Effect.scoped),
    );
    void built;
    const shared = name === "memory" ? Layer.succeedContext(built) : store;
    const first = await openAgentsSession(shared, { sessionId: "chat" });
    await first.addItems(turn.slice(0, 4));
    await first.addItems(turn.slice(4));
    assert.deepEqual(await first.getItems(), turn);
    assert.deepEqual(await first.getItems(2), turn.slice(-2));
    assert.deepEqual(await first.getItems(0), []);
    assert.equal(await first.getSessionId(), "chat");
    await first.close();
    const again = await openAgentsSession(shared, { sessionId: "chat" });
    assert.deepEqual(await again.getItems(), turn);
    await again.close();
  });
}

postgresTest(
  "openai-agents (postgres): items, a pop and a clear, read back after a reopen",
  async (url) => {
    const store = layerPostgresStore({ url });
    const first = await openAgentsSession(store, { sessionId: "chat" });
    await first.addItems(turn);
    assert.deepEqual(await first.popItem(), turn.at(-1));
    await first.close();
    const again = await openAgentsSession(store, { sessionId: "chat" });
    assert.deepEqual(await again.getItems(), turn.slice(0, -1));
    await again.clearSession();
    await again.addItems([user("afresh")]);
    await again.close();
    const third = await openAgentsSession(store, { sessionId: "chat" });
    assert.deepEqual(await third.getItems(), [user("afresh")]);
    await third.close();
  },
);

const withSession = <A>(
  f: (
    session: Effect.Success<ReturnType<typeof makeAgentsSession>>,
  ) => Promise<A>,
  options?: Partial<Parameters<typeof makeAgentsSession>[0]>,
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const session = yield* makeAgentsSession({
          sessionId: "chat",
          ...options,
        });
        return yield* Effect.promise(() => f(session));
      }),
    ).pipe(Effect.provide(layerMemoryStore())),
  );

Deno.test("openai-agents: popItem removes the last item by a rewind, and the log keeps it", async () => {
  await withSession(async (session) => {
    await session.addItems(turn);
    const popped = await session.popItem();
    assert.deepEqual(popped, turn.at(-1));
    assert.deepEqual(await session.getItems(), turn.slice(0, -1));
    // The popped answer rode alone on its message: nothing was appended again.
    // The hosted call shared the answer's message: appended again, then popped.
    assert.deepEqual(await session.popItem(), turn.at(-2));
    assert.deepEqual(await session.getItems(), turn.slice(0, -2));
    // The result of c2 goes: what the model sees answers c2 for it.
    assert.deepEqual(await session.popItem(), turn.at(-3));
    assert.deepEqual(await session.getItems(), [
      ...turn.slice(0, -3),
      {
        type: "function_call_result",
        callId: "c2",
        name: "add",
        status: "completed",
        output: MISSING_RESULT_TEXT,
      },
    ]);
    await session.addItems([answer("done", "msg_9")]);
    assert.deepEqual((await session.getItems()).slice(-1), [
      answer("done", "msg_9"),
    ]);
    const all = await Effect.runPromise(branches(session.handle.session));
    assert.ok(all.length >= 3);
  });
});

Deno.test("openai-agents: popItem inside a run of model items appends the rest again", async () => {
  await withSession(async (session) => {
    await session.addItems([user("q"), reasoning, answer("a")]);
    // The reasoning and the answer share one assistant message.
    assert.deepEqual(await session.popItem(), answer("a"));
    assert.deepEqual(await session.getItems(), [user("q"), reasoning]);
    assert.deepEqual(await session.popItem(), reasoning);
    assert.deepEqual(await session.popItem(), user("q"));
    assert.equal(await session.popItem(), undefined);
    assert.deepEqual(await session.getItems(), []);
  });
});

Deno.test("openai-agents: clearSession empties what the model sees and keeps the log", async () => {
  await withSession(async (session) => {
    await session.addItems(turn);
    const before = session.handle.session.surface.nextSeq;
    await session.clearSession();
    assert.deepEqual(await session.getItems(), []);
    assert.ok(session.handle.session.surface.nextSeq > before);
    await session.clearSession();
    await session.addItems([user("again")]);
    assert.deepEqual(await session.getItems(), [user("again")]);
  });
});

Deno.test("openai-agents: a call without its result is answered when read", async () => {
  await withSession(async (session) => {
    await session.addItems([user("q"), call("c1")]);
    const items = await session.getItems();
    assert.deepEqual(items.slice(0, 2), [user("q"), call("c1")]);
    assert.deepEqual(items[2], {
      type: "function_call_result",
      callId: "c1",
      name: "add",
      status: "completed",
      output: MISSING_RESULT_TEXT,
    });
  });
});

Deno.test("openai-agents: a result whose call is unknown is refused, nothing stored", async () => {
  await withSession(async (session) => {
    await session.addItems([user("q")]);
    const before = session.handle.session.surface.nextSeq;
    await assert.rejects(
      session.addItems([result("nope")]),
      (e: unknown) =>
        e instanceof Error && Reflect.get(e, "_tag") === "UnknownFunctionCall",
    );
    assert.equal(session.handle.session.surface.nextSeq, before);
  });
});

Deno.test("openai-agents: one writer per session", async () => {
  const outcome = await Effect.runPromise(
    Effect.scoped(Effect.gen(function* () {
      yield* makeAgentsSession({ sessionId: "chat" });
      return yield* Effect.result(makeAgentsSession({ sessionId: "chat" }));
    })).pipe(Effect.provide(layerJsonlStore({ root: Deno.makeTempDirSync() }))),
  );
  assert.equal(outcome._tag, "Failure");
  assert.equal(
    outcome._tag === "Failure" ? outcome.failure._tag : "",
    "SessionLocked",
  );
});

Deno.test("openai-agents: runCompaction puts a summary in place of the oldest items", async () => {
  const model = summaryModel("They added numbers.");
  await withSession(async (session) => {
    for (let i = 0; i < 6; i++) {
      await session.addItems([
        user(`question ${i} ${"x".repeat(200)}`),
        answer(`answer ${i} ${"y".repeat(200)}`, `msg_${i}`),
      ]);
    }
    const outcome = await session.runCompaction();
    assert.notEqual(outcome, null);
    const items = await session.getItems();
    assert.deepEqual(items[0], {
      role: "user",
      content: [{ type: "input_text", text: "They added numbers." }],
    });
    assert.ok(items.length < 12);
    assert.equal(await session.runCompaction(), null);
  }, { compaction: { model, maxTokens: 400, keepTokens: 150 } });
});

Deno.test("openai-agents: the store in context is the one used", async () => {
  const ids = await Effect.runPromise(
    Effect.scoped(Effect.gen(function* () {
      const session = yield* makeAgentsSession({ sessionId: "a" });
      yield* Effect.promise(() => session.addItems([user("hi")]));
      const store = yield* SessionStore;
      return yield* store.list();
    })).pipe(Effect.provide(layerMemoryStore())),
  );
  assert.deepEqual(ids, ["a"]);
});
