/**
 * Claude Code transcripts mirrored into a palimpsest session log: what the
 * Claude Agent SDK does with `query({ prompt, options: { sessionStore } })`,
 * here with the entries a short session writes (a prompt, a tool call and
 * its result, the answer), sent as the SDK sends them, one batch per entry.
 *
 * `deno run -A examples/claude_agent.ts` prints what the store loads back,
 * what the mirrored session derives, and the file to run the CLI on.
 *
 * With the SDK itself (it runs Claude Code, so the doc tests leave it out):
 *
 * ```ts ignore
 * import { query } from "@anthropic-ai/claude-agent-sdk";
 * const sessionStore = await openClaudeSessionStore(layerJsonlStore({ root }));
 * for await (const m of query({ prompt: "hi", options: { sessionStore } })) {}
 * await sessionStore.close();
 * ```
 *
 * @module
 */
import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import {
  deriveMessages,
  layerJsonlStore,
  SessionStore,
} from "@palimpsest/session";
import { openClaudeSessionStore } from "@palimpsest/session/claude-agent";
import { Effect } from "effect";

const at = (second: number) => `2026-01-01T00:00:0${second}.000Z`;
const common = {
  sessionId: "demo",
  cwd: "/work",
  version: "2.1.197",
  isSidechain: false,
};
const entries: SessionStoreEntry[] = [
  {
    type: "user",
    uuid: "u-1",
    parentUuid: null,
    timestamp: at(1),
    message: { role: "user", content: "What is in notes.txt?" },
    ...common,
  },
  {
    type: "assistant",
    uuid: "a-1",
    parentUuid: "u-1",
    timestamp: at(2),
    message: {
      id: "msg_1",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{
        type: "tool_use",
        id: "toolu_1",
        name: "Read",
        input: { file_path: "notes.txt" },
      }],
      stop_reason: "tool_use",
    },
    ...common,
  },
  {
    type: "user",
    uuid: "r-1",
    parentUuid: "a-1",
    timestamp: at(3),
    message: {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: "buy milk",
      }],
    },
    ...common,
  },
  {
    type: "assistant",
    uuid: "a-2",
    parentUuid: "r-1",
    timestamp: at(4),
    message: {
      id: "msg_2",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "It says: buy milk." }],
      stop_reason: "end_turn",
    },
    ...common,
  },
];

const root = Deno.makeTempDirSync({ prefix: "claude-agent-" });
const layer = layerJsonlStore({ root });
const key = { projectKey: "-work", sessionId: "demo" };
const store = await openClaudeSessionStore(layer);
for (const entry of entries) await store.append(key, [entry]);
const loaded = await store.load(key);
console.log(
  `loaded ${loaded?.length} entries, equal: ${
    JSON.stringify(loaded) === JSON.stringify(entries)
  }`,
);
console.log(
  `sessions: ${(await store.listSessions("-work")).map((s) => s.sessionId)}`,
);
await store.close();

// The mirrored session is a session of the store like any other.
const [id, messages] = await Effect.runPromise(
  Effect.scoped(Effect.gen(function* () {
    const sessions = yield* SessionStore;
    const [first = ""] = yield* sessions.list();
    const reader = yield* sessions.open(first);
    return [first, deriveMessages(reader.session.surface)] as const;
  })).pipe(Effect.provide(layer)),
);
for (const m of messages) {
  const text = m.content.map((b) =>
    b.type === "text"
      ? b.text
      : b.type === "tool-call"
      ? `call ${b.name}`
      : b.type
  ).join(" ");
  console.log(`${m.role}: ${text}`);
}
const file = [...Deno.readDirSync(root)].find((e) => e.name.endsWith(".jsonl"));
console.log(`session ${id}: ${root}/${file?.name}`);
console.log("(try: deno task cli derive <that file>, or view, or export)");
