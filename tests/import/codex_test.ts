/**
 * Codex specifics: a compaction's replacement history becomes the surface
 * (roles kept, the encrypted `compaction` item opaque), a compaction without
 * one keeps what Codex keeps, a rollback drops the last user turns, messages
 * logged between a call and its output follow the output, a call without an
 * output is answered right after it as Codex does, and the source a message
 * gets from its role.
 */
import { branches, deriveMessages, type Message } from "@palimpsest/session";
import { importSession } from "@palimpsest/session/import";
import {
  pairToolCalls,
  toAnthropic,
  toGemini,
  toOpenAIChat,
  toOpenAIResponses,
} from "@palimpsest/session/providers";
import { Effect } from "effect";
import assert from "node:assert/strict";
import { blockLabel } from "./_labels.ts";

const meta =
  '{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"cx","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","cli_version":"0.99.0","model_provider":"openai","base_instructions":{"text":"You are Codex."}}}';
const item = (payload: unknown): string =>
  JSON.stringify({
    timestamp: "2026-01-01T00:00:01.000Z",
    type: "response_item",
    payload,
  });
const event = (payload: unknown): string =>
  JSON.stringify({
    timestamp: "2026-01-01T00:00:01.000Z",
    type: "event_msg",
    payload,
  });
const say = (role: string, text: string): string =>
  item({
    type: "message",
    role,
    content: [{
      type: role === "assistant" ? "output_text" : "input_text",
      text,
    }],
  });
const call = (id: string): string =>
  item({ type: "function_call", name: "sh", arguments: "{}", call_id: id });
const output = (id: string): string =>
  item({ type: "function_call_output", call_id: id, output: `out ${id}` });

const imported = async (lines: ReadonlyArray<string>) => {
  const dir = Deno.makeTempDirSync();
  try {
    const file = `${dir}/rollout.jsonl`;
    Deno.writeTextFileSync(file, `${[meta, ...lines].join("\n")}\n`);
    return await Effect.runPromise(importSession(file, { from: "codex" }));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
};

const shape = (messages: ReadonlyArray<Message>) =>
  messages.map((m) => [
    m.role,
    m.content.map((c) => blockLabel(c, true)).join("|"),
  ]);

Deno.test("a replacement history becomes the surface, roles kept, its first message citing what it replaced", async () => {
  const { session, events } = await imported([
    say("user", "first task"),
    say("assistant", "done one"),
    JSON.stringify({
      timestamp: "2026-01-01T00:00:03.000Z",
      type: "compacted",
      payload: {
        message: "",
        replacement_history: [
          JSON.parse(say("user", "first task")).payload,
          JSON.parse(say("assistant", "done one")).payload,
          JSON.parse(say("developer", "rules")).payload,
          { type: "compaction", encrypted_content: "ENCRYPTED" },
        ],
      },
    }),
  ]);
  const messages = deriveMessages(session.surface);
  assert.deepEqual(shape(messages), [
    ["system", "You are Codex."],
    ["user", "first task"],
    ["assistant", "done one"],
    ["user", "rules"],
    ["user", ""],
  ]);
  const start = events.find((e) => e.type === "compaction/start");
  const replacing = events.find((e) =>
    e.type === "user/message" && typeof e.surfaceOp === "object"
  );
  // The first history message replaces the old surface and cites it.
  assert.ok(start !== undefined && replacing?.type === "user/message");
  const cited: ReadonlyArray<number> = replacing.sourceEventSeqs ?? [];
  assert.ok(cited.includes(start.seq));
  // seqs 1..: the old user and assistant messages.
  const old = events.filter((e) =>
    (e.type === "user/message" || e.type === "assistant/message") &&
    e.seq < start.seq
  ).map((e) => e.seq);
  assert.equal(old.length, 2);
  for (const seq of old) assert.ok(cited.includes(seq));
  const developer = events.find((e) =>
    e.type === "user/message" && e.data.content[0]?.type === "text" &&
    e.data.content[0].text === "rules"
  );
  assert.deepEqual(developer?.sourceEventSeqs, [start.seq]);
  // The encrypted item goes back to OpenAI Responses unchanged, and nowhere else.
  const responses = toOpenAIResponses(messages).input;
  assert.deepEqual(responses[responses.length - 1], {
    type: "compaction",
    encrypted_content: "ENCRYPTED",
  });
  for (
    const other of [
      toAnthropic(messages),
      toGemini(messages),
      toOpenAIChat(messages),
    ]
  ) {
    assert.ok(!JSON.stringify(other).includes("ENCRYPTED"));
  }
});

Deno.test("a compaction without a replacement history keeps the newest typed user messages, then the summary", async () => {
  const { session } = await imported([
    say("developer", "permissions"),
    say("user", "<environment_context>cwd</environment_context>"),
    say("user", "x".repeat(80_000)),
    say("assistant", "ok"),
    say("user", "second"),
    say("assistant", "ok"),
    JSON.stringify({
      timestamp: "2026-01-01T00:00:03.000Z",
      type: "compacted",
      payload: { message: "the summary" },
    }),
  ]);
  const kept = shape(deriveMessages(session.surface));
  // 20k tokens of four bytes: "second" (2 tokens) whole, the long one cut.
  assert.deepEqual(kept, [
    ["system", "You are Codex."],
    ["user", "x".repeat((20_000 - 2) * 4)],
    ["user", "second"],
    ["user", "the summary"],
  ]);
});

Deno.test("thread_rolled_back drops the last user turns from the surface", async () => {
  const { session } = await imported([
    say("user", "one"),
    say("assistant", "a1"),
    say("user", "two"),
    say("assistant", "a2"),
    say("user", "three"),
    say("assistant", "a3"),
    event({ type: "thread_rolled_back", num_turns: 2 }),
    say("user", "again"),
  ]);
  const messages = deriveMessages(session.surface);
  assert.deepEqual(
    toOpenAIResponses(messages).input.map((i) =>
      i.type === "message" ? i.content : i.type
    ),
    [
      [{ type: "input_text", text: "one" }],
      "a1",
      [{ type: "input_text", text: "again" }],
    ],
  );
  // A rewind: the dropped turns stay in the log as a branch.
  const list = Effect.runSync(branches(session));
  assert.equal(list.length, 2);
  assert.deepEqual(list[0]?.turns, [0, 1, 2]);
  assert.equal(list[1]?.current, true);
});

Deno.test("a message logged between a call and its output follows the output; a call without one is answered right after it", async () => {
  const { session, report } = await imported([
    event({ type: "task_started" }),
    say("user", "go"),
    call("c1"),
    call("c2"),
    say("developer", "approved"),
    output("c1"),
    output("c2"),
    call("c3"),
    say("developer", "late"),
    say("system", "not sent"),
    say("assistant", "next answer"),
    event({ type: "task_complete" }),
  ]);
  const messages = deriveMessages(session.surface);
  assert.deepEqual(pairToolCalls(messages).repairs, []);
  assert.deepEqual(shape(messages).slice(1), [
    ["user", "go"],
    ["assistant", "call c1|call c2"],
    ["user", "result c1 out c1"],
    ["user", "result c2 out c2"],
    ["user", "approved"],
    ["assistant", "call c3"],
    ["user", "result c3 aborted"],
    ["user", "late"],
    ["assistant", "next answer"],
  ]);
  assert.deepEqual(report.skipped.map((s) => s.kind), [
    "response_item/message/system",
  ]);
  assert.equal(report.repairs, 1);
});

Deno.test("a developer message comes from the codex/developer plugin, a user message from the user", async () => {
  const file = new URL("../fixtures/import/codex/turns.jsonl", import.meta.url)
    .pathname;
  const { events } = await Effect.runPromise(
    importSession(file, { from: "codex" }),
  );
  const sources = events.flatMap((e) =>
    e.type === "user/message" ? [e.data.source] : []
  );
  assert.deepEqual(sources, [
    { kind: "plugin", plugin: "codex/developer" },
    { kind: "user" },
    { kind: "user" },
  ]);
});

Deno.test("without turn events, each message the person typed after model output opens a turn", async () => {
  const { events } = await imported([
    say("user", "<environment_context>cwd</environment_context>"),
    say("user", "first"),
    call("c1"),
    output("c1"),
    say("developer", "a note"),
    say("assistant", "done"),
    say("user", "second"),
    call("c2"),
    output("c2"),
    say("assistant", "done again"),
  ]);
  const turns = events.flatMap((e) =>
    e.type === "turn/start" ? [e.data.turn] : []
  );
  assert.deepEqual(turns, [0, 1]);
  const ends = events.flatMap((e) =>
    e.type === "turn/end" ? [[e.data.turn, e.data.reason.kind]] : []
  );
  assert.deepEqual(ends, [[0, "completed"], [1, "completed"]]);
});

Deno.test("hosted tool items are kept opaque in the stream and reported by kind; ghost snapshots are counted", async () => {
  const { events, report } = await imported([
    say("user", "find the tool"),
    item({ type: "tool_search_call", call_id: "t1", arguments: { q: "x" } }),
    item({ type: "tool_search_output", call_id: "t1", tools: [] }),
    item({ type: "web_search_call", status: "completed" }),
    say("assistant", "found"),
    item({ type: "ghost_snapshot", ghost_commit: {} }),
  ]);
  assert.deepEqual(report.notCarried, []);
  assert.deepEqual(report.opaque.map((o) => [o.kind, o.count]), [
    ["response_item/tool_search_call", 1],
    ["response_item/tool_search_output", 1],
    ["response_item/web_search_call", 1],
  ]);
  assert.deepEqual(report.skipped.map((s) => [s.kind, s.count]), [
    ["response_item/ghost_snapshot", 1],
  ]);
  const assistant = events.find((e) => e.type === "assistant/message");
  assert.deepEqual(
    assistant?.type === "assistant/message"
      ? assistant.data.stream.map((c) => Reflect.get(Object(c.chunk), "type"))
      : [],
    ["tool_search_call", "tool_search_output", "web_search_call"],
  );
});
