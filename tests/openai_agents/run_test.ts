/**
 * The real `@openai/agents` runner on an `AgentsSession` kept in a JSONL
 * store, against a loopback Responses server: a multi-turn run with tools,
 * and a process killed (SIGKILL) while its tool runs, resumed by another
 * process whose request is valid by the published schema and paired.
 */
import {
  checkTranscript,
  deriveMessages,
  layerJsonlStore,
  SessionStore,
} from "@palimpsest/session";
import { modelItems } from "@palimpsest/session/openai-agents";
import type { AgentInputItem } from "@openai/agents";
import { Effect } from "effect";
import { summaryModel } from "../_helpers/summary_model.ts";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runTurn } from "./_agent.ts";
import { type Received, serveResponses } from "./_responses_server.ts";
import { denoOk } from "../_helpers/deno_run.ts";
import { spawnLineProcess } from "../_helpers/line_process.ts";

const AGENT = fileURLToPath(new URL("./_agent.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The stored session, read back: its surface as items and messages. */
const stored = (root: string, id: string) =>
  Effect.runPromise(
    Effect.scoped(Effect.gen(function* () {
      const store = yield* SessionStore;
      const handle = yield* store.open(id);
      return handle.session;
    })).pipe(Effect.provide(layerJsonlStore({ root }))),
  );

const assertValid = (requests: ReadonlyArray<Received>): void => {
  for (const [i, request] of requests.entries()) {
    assert.deepEqual(request.errors, [], `request ${i} by the schema`);
    assert.deepEqual(request.unpaired, [], `request ${i} paired`);
  }
};

/** A user message, a function call and its output, as the wire names them. */
const TOOL_TURN = ["user", "function_call", "function_call_output"];

/** An item's role, or its type. */
const kind = (item: AgentInputItem): string =>
  "role" in item ? item.role : item.type;

/** The `type` (or role) of each input item of a request. */
const shape = (request: Received | undefined): string[] => {
  const input = request?.body["input"];
  return (Array.isArray(input) ? input : []).map((item) =>
    String(
      item.type === "message" || item.type === undefined
        ? item.role
        : item.type,
    )
  );
};

Deno.test("openai-agents: a multi-turn run with tools, each request valid and paired", async () => {
  const server = serveResponses([
    { call: { id: "call_1", name: "add", args: '{"a":2,"b":3}' } },
    { text: "5" },
    { call: { id: "call_2", name: "add", args: '{"a":5,"b":4}' } },
    { text: "9" },
  ]);
  try {
    const root = Deno.makeTempDirSync();
    assert.equal(
      await runTurn(server.baseURL, root, "chat", "Add 2 and 3."),
      "5",
    );
    assert.equal(
      await runTurn(server.baseURL, root, "chat", "Now add 4."),
      "9",
    );
    assert.equal(server.requests.length, 4);
    assertValid(server.requests);
    // The second turn's last request holds the whole history, from the store.
    assert.deepEqual(shape(server.requests[3]), [
      ...TOOL_TURN,
      "assistant",
      ...TOOL_TURN,
    ]);
    const session = await stored(root, "chat");
    assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
    assert.deepEqual(
      modelItems(session).map(kind),
      [
        "user",
        "function_call",
        "function_call_result",
        "assistant",
        "user",
        "function_call",
        "function_call_result",
        "assistant",
      ],
    );
  } finally {
    await server.close();
  }
});

Deno.test("openai-agents: the runner compacts the session after a turn, and the next request is valid", async () => {
  const server = serveResponses([
    { text: `First answer. ${"x".repeat(400)}` },
    { call: { id: "call_1", name: "add", args: '{"a":1,"b":1}' } },
    { text: "2" },
  ]);
  const model = summaryModel("Earlier: a long answer.");
  const compaction = { model, maxTokens: 120, keepTokens: 10 };
  try {
    const root = Deno.makeTempDirSync();
    const long = `Tell me a long story. ${"y".repeat(400)}`;
    await runTurn(server.baseURL, root, "chat", long, false, compaction);
    assert.equal(
      await runTurn(
        server.baseURL,
        root,
        "chat",
        "Add 1 and 1.",
        false,
        compaction,
      ),
      "2",
    );
    assertValid(server.requests);
    const input = server.requests[1]?.body["input"];
    assert.deepEqual(Array.isArray(input) ? input[0] : undefined, {
      role: "user",
      content: [{ type: "input_text", text: "Earlier: a long answer." }],
    });
  } finally {
    await server.close();
  }
});

Deno.test("openai-agents: a run killed while its tool runs, then a resume in a new process", async () => {
  const server = serveResponses([
    { call: { id: "call_1", name: "add", args: '{"a":1,"b":2}' } },
    { text: "3" },
    { call: { id: "call_2", name: "add", args: '{"a":3,"b":3}' } },
    { text: "Resumed." },
  ]);
  const root = Deno.makeTempDirSync();
  const agent = (input: string, ...rest: string[]) => [
    "run",
    "-A",
    `--config=${ROOT}deno.json`,
    AGENT,
    root,
    server.baseURL,
    "chat",
    input,
    ...rest,
  ];
  try {
    assert.equal(JSON.parse(await denoOk(agent("Add 1 and 2."))), "3");
    const child = spawnLineProcess(
      Deno.execPath(),
      agent("Add 3 and 3.", "hang"),
    );
    assert.equal(await child.line(), "TOOL RUNNING");
    child.kill("SIGKILL");
    assert.equal((await child.status).signal, "SIGKILL");
    // The SDK stores a run's items when the run ends: the killed run left
    // the first run's items, whole, and its writer claim.
    assert.deepEqual(modelItems(await stored(root, "chat")).map(kind), [
      "user",
      "function_call",
      "function_call_result",
      "assistant",
    ]);
    // A new process takes the dead writer's session over and runs on it.
    assert.equal(JSON.parse(await denoOk(agent("Go on."))), "Resumed.");
    assert.equal(server.requests.length, 4);
    assertValid(server.requests);
    assert.deepEqual(shape(server.requests[3]), [
      ...TOOL_TURN,
      "assistant",
      "user",
    ]);
    const session = await stored(root, "chat");
    assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
    assert.equal(modelItems(session).length, 6);
  } finally {
    await server.close();
  }
});
