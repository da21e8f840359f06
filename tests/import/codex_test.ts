/**
 * Codex specifics the fixtures' message lists do not show: the messages of
 * a compaction's replacement history after the first cite the compaction,
 * and the source a message gets from its role.
 */
import { importSession } from "@palimpsest/session/import";
import { Effect } from "effect";
import assert from "node:assert/strict";

Deno.test("the replacement history after its first message cites the compaction's start", async () => {
  const file = new URL(
    "../fixtures/import/codex/compacted.jsonl",
    import.meta.url,
  ).pathname;
  const { events } = await Effect.runPromise(
    importSession(file, { from: "codex" }),
  );
  const start = events.find((e) => e.type === "compaction/start");
  const history = events.find((e) =>
    e.type === "user/message" && e.data.id === "codex-L4-history"
  );
  assert.equal(start?.data.compactionId, "codex-L4");
  assert.deepEqual(history?.sourceEventSeqs, [start?.seq]);
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
