// The agent SDK entry points from the installed package under Node: an
// OpenAI Agents SDK `Session` (`@palimpsest/session/openai-agents`) and a
// Claude Agent SDK `SessionStore` (`@palimpsest/session/claude-agent`) on a
// JSONL store. Both import only their SDK's types, so neither SDK is
// installed here.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { layerJsonlStore } from "@palimpsest/session";
import { openAgentsSession } from "@palimpsest/session/openai-agents";
import { openClaudeSessionStore } from "@palimpsest/session/claude-agent";

const scratch = () => fs.mkdtempSync(path.join(os.tmpdir(), "agent-sdks-"));

test("an Agents SDK session keeps its items, pops one, and reopens", async () => {
  const root = scratch();
  const user = { role: "user", content: "What is 2 + 2?" };
  const answer = {
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text: "4" }],
  };
  const session = await openAgentsSession(layerJsonlStore({ root }), { sessionId: "chat" });
  await session.addItems([user, answer]);
  assert.deepEqual(await session.popItem(), answer);
  await session.close();
  const again = await openAgentsSession(layerJsonlStore({ root }), { sessionId: "chat" });
  assert.deepEqual(await again.getItems(), [user]);
  await again.close();
});

test("a Claude Agent SDK store loads what it was given", async () => {
  const store = await openClaudeSessionStore(layerJsonlStore({ root: scratch() }));
  const key = { projectKey: "p", sessionId: "s" };
  const entries = [
    { type: "user", uuid: "u1", message: { role: "user", content: "hi" } },
    { type: "custom-title", customTitle: "t" },
  ];
  await store.append(key, entries);
  assert.deepEqual(await store.load(key), entries);
  assert.deepEqual((await store.listSessions("p")).map((s) => s.sessionId), ["s"]);
  await store.close();
});
