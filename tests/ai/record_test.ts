import { recordAnswer, type TimedPart } from "@palimpsest/session/ai";
import { decodeEvent } from "@palimpsest/session/schema";
import { Effect } from "effect";
import fc from "fast-check";
import assert from "node:assert/strict";

const options = {
  turn: 2,
  step: 1,
  messageId: "a7",
  source: { kind: "model" as const, provider: "p", model: "m" },
};
const usage = { inputTokens: { total: 10 }, outputTokens: { total: 4 } };
const timed = (...chunks: TimedPart["chunk"][]): TimedPart[] =>
  chunks.map((chunk, i) => ({ time: 100 + i, chunk }));

Deno.test("recordAnswer builds blocks in start order and embeds every part", () => {
  const parts = timed(
    { type: "response-metadata", id: "r1" },
    { type: "reasoning-start", id: "r" },
    { type: "reasoning-delta", id: "r", delta: "think" },
    { type: "text-start", id: "t" },
    { type: "reasoning-delta", id: "r", delta: "ing" },
    { type: "text-delta", id: "t", delta: "Hel" },
    { type: "text-delta", id: "t", delta: "lo" },
    { type: "text-end", id: "t" },
    { type: "reasoning-end", id: "r" },
    { type: "text-start", id: "empty" },
    { type: "tool-call", id: "c1", name: "read", params: { path: "a" } },
    {
      type: "tool-call",
      id: "c2",
      name: "web",
      params: {},
      providerExecuted: true,
    },
    { type: "finish", reason: "tool-calls", usage },
  );
  const answer = recordAnswer(parts, options);
  assert.equal(answer.interrupted, false);
  assert.equal(answer.finishReason, "tool-calls");
  assert.deepEqual(answer.message?.content, [
    { type: "reasoning", text: "thinking" },
    { type: "text", text: "Hello" },
    { type: "tool-call", id: "c1", name: "read", arguments: '{"path":"a"}' },
  ]);
  assert.deepEqual(answer.calls.map((c) => c.id), ["c1"]);
  assert.deepEqual(answer.toolCallDrafts, [{
    type: "tool/call",
    data: {
      turn: 2,
      step: 1,
      callId: "c1",
      name: "read",
      arguments: '{"path":"a"}',
    },
  }]);
  assert.equal(answer.draft.type, "assistant/message");
  assert.deepEqual(answer.draft.data.stream, parts);
  assert.ok(answer.draft.type === "assistant/message");
  assert.deepEqual(answer.draft.data.usage, usage);
  assert.equal(answer.draft.data.interrupted, undefined);
});

Deno.test("recordAnswer marks an answer without a finish part as interrupted", () => {
  const answer = recordAnswer(
    timed({ type: "text-delta", id: "t", delta: "Half an ans" }),
    options,
  );
  assert.equal(answer.interrupted, true);
  assert.ok(answer.draft.type === "assistant/message");
  assert.equal(answer.draft.data.interrupted, true);
});

Deno.test("recordAnswer treats an error part or a cut as interrupted", () => {
  const withError = recordAnswer(
    timed(
      { type: "text-delta", id: "t", delta: "x" },
      { type: "error", error: { message: "boom" } },
      { type: "finish", reason: "error", usage },
    ),
    options,
  );
  assert.equal(withError.interrupted, true);
  const cut = recordAnswer(
    timed({ type: "text-delta", id: "t", delta: "x" }, {
      type: "finish",
      reason: "stop",
      usage,
    }),
    { ...options, cut: true },
  );
  assert.equal(cut.interrupted, true);
});

Deno.test("recordAnswer makes an attempt when no message came out", () => {
  const parts = timed({ type: "response-metadata", id: "r" }, {
    type: "text-start",
    id: "t",
  });
  const answer = recordAnswer(parts, options);
  assert.equal(answer.message, undefined);
  assert.deepEqual(answer.draft, {
    type: "assistant/attempt",
    data: { turn: 2, step: 1, stream: parts },
  });
});

Deno.test("recordAnswer drafts decode as events", async () => {
  const answer = recordAnswer(
    timed({ type: "text-delta", id: "t", delta: "ok" }, {
      type: "finish",
      reason: "stop",
      usage,
    }),
    options,
  );
  const event = await Effect.runPromise(
    decodeEvent({ ...answer.draft, seq: 0, time: 0 }),
  );
  assert.equal(event.type, "assistant/message");
  const attempt = recordAnswer([], options);
  const decoded = await Effect.runPromise(
    decodeEvent({ ...attempt.draft, seq: 1, time: 0 }),
  );
  assert.equal(decoded.type, "assistant/attempt");
});

Deno.test("recordAnswer keeps every part and rebuilds each block's text from its deltas", () => {
  const delta = fc.record({
    kind: fc.constantFrom("text", "reasoning"),
    id: fc.constantFrom("a", "b"),
    delta: fc.string({ maxLength: 6 }),
  });
  fc.assert(
    fc.property(
      fc.array(delta, { maxLength: 30 }),
      fc.boolean(),
      (deltas, finished) => {
        const chunks: TimedPart["chunk"][] = deltas.map((d) =>
          d.kind === "text"
            ? { type: "text-delta", id: d.id, delta: d.delta }
            : { type: "reasoning-delta", id: d.id, delta: d.delta }
        );
        if (finished) chunks.push({ type: "finish", reason: "stop", usage });
        const parts = timed(...chunks);
        const answer = recordAnswer(parts, options);
        assert.deepEqual(answer.draft.data.stream, parts);
        assert.equal(answer.interrupted, !finished);
        // Expected blocks: one per (kind, id) in first-seen order, text joined.
        const order: string[] = [];
        const texts = new Map<string, string>();
        for (const d of deltas) {
          const key = `${d.kind}:${d.id}`;
          if (!texts.has(key)) order.push(key);
          texts.set(key, (texts.get(key) ?? "") + d.delta);
        }
        const expected = order.flatMap((key) => {
          const text = texts.get(key) ?? "";
          const [kind] = key.split(":");
          return text === "" ? [] : [
            kind === "text"
              ? { type: "text", text }
              : { type: "reasoning", text },
          ];
        });
        assert.deepEqual(answer.message?.content ?? [], expected);
        assert.equal(
          answer.draft.type,
          expected.length === 0 ? "assistant/attempt" : "assistant/message",
        );
      },
    ),
  );
});

Deno.test("recordAnswer gives a reused call id a fresh one and keeps the provider's", () => {
  const long = "x".repeat(64);
  const answer = recordAnswer(
    timed(
      { type: "tool-call", id: "call_0", name: "read", params: {} },
      { type: "tool-call", id: "call_0", name: "read", params: {} },
      { type: "tool-call", id: "new", name: "read", params: {} },
      { type: "tool-call", id: long, name: "read", params: {} },
      { type: "finish", reason: "tool-calls", usage },
    ),
    { ...options, usedCallIds: new Set(["call_0", "call_0_1", long]) },
  );
  assert.deepEqual(answer.calls.map((c) => c.id), [
    "call_0_2",
    "call_0_3",
    "new",
    `${"x".repeat(62)}_1`,
  ]);
  assert.deepEqual(answer.providerCallIds, ["call_0", "call_0", "new", long]);
  assert.deepEqual(
    answer.toolCallDrafts.map((d) => JSON.parse(JSON.stringify(d.data)).callId),
    answer.calls.map((c) => c.id),
  );
  assert.ok(answer.draft.type === "assistant/message");
  assert.deepEqual(
    answer.draft.data.stream.slice(0, 4).map((r) =>
      JSON.parse(JSON.stringify(r.chunk)).id
    ),
    ["call_0", "call_0", "new", long],
  );
});

Deno.test("recordAnswer's call ids are new and distinct, and kept when they were new", () => {
  const id = fc.constantFrom<string>(
    "call_0",
    "call_0_1",
    "c",
    "c_1",
    "",
    "_1",
  );
  fc.assert(fc.property(
    fc.array(id, { maxLength: 8 }),
    fc.uniqueArray(id, { maxLength: 4 }),
    (ids, used) => {
      const answer = recordAnswer(
        timed(
          ...ids.map((id): TimedPart["chunk"] => ({
            type: "tool-call",
            id,
            name: "read",
            params: {},
          })),
          { type: "finish", reason: "tool-calls", usage },
        ),
        { ...options, usedCallIds: new Set(used) },
      );
      const got = answer.calls.map((c) => c.id);
      assert.equal(new Set(got).size, ids.length);
      assert.ok(got.every((g) => !used.includes(g)));
      assert.deepEqual(answer.providerCallIds, ids);
      for (const [i, provider] of ids.entries()) {
        const fresh = !used.includes(provider) &&
          !ids.slice(0, i).includes(provider);
        if (fresh) assert.equal(got[i], provider);
      }
    },
  ));
});
