/**
 * Claude Code compacts on its own when the context fills up, often while the
 * model is still at work (after tool results, before its next request). Such
 * an automatic compaction is recorded inside the turn, and the turn goes on
 * after it, ending as the file says (here at the next prompt); a compaction
 * after the model's answer, or a manual `/compact`, ends the turn first.
 */
import { deriveMessages, type SessionEvent } from "@palimpsest/session";
import { importSession } from "@palimpsest/session/import";
import { Effect } from "effect";
import * as path from "node:path";
import assert from "node:assert/strict";
import { peerLogs } from "./_peer_logs.ts";

/** The source line of every event, from the `import/lines` event. */
const linesOf = (events: ReadonlyArray<SessionEvent>): number[] => {
  const last = events[events.length - 1];
  const data = last?.data as { lines?: number[] } | undefined;
  return data?.lines ?? [];
};

const turnOf = (e: SessionEvent): number | undefined => {
  const data = e.data as { turn?: unknown };
  return typeof data.turn === "number" ? data.turn : undefined;
};

/** The turn structure: `start T`, `end T reason`, `compaction T`, `assistant T`. */
const outline = (events: ReadonlyArray<SessionEvent>): string[] =>
  events.flatMap((e) =>
    e.type === "turn/start"
      ? [`start ${turnOf(e)}`]
      : e.type === "turn/end"
      ? [`end ${turnOf(e)} ${e.data.reason.kind}`]
      : e.type === "compaction/start"
      ? [`compaction ${turnOf(e)}`]
      : e.type === "assistant/message"
      ? [`assistant ${turnOf(e)}`]
      : []
  );

const line = (value: Record<string, unknown>): string =>
  JSON.stringify({
    sessionId: "c1",
    timestamp: "2026-01-01T00:00:00Z",
    ...value,
  });

const assistant = (
  uuid: string,
  id: string,
  content: unknown[],
  stop: string,
) =>
  line({
    type: "assistant",
    uuid,
    message: { id, role: "assistant", model: "m", content, stop_reason: stop },
  });

/** A prompt, then (when `midTurn`) a tool call and its result, then a compaction. */
const session = (trigger: "auto" | "manual", midTurn: boolean): string =>
  [
    line({
      type: "user",
      uuid: "u1",
      message: { role: "user", content: "go" },
    }),
    midTurn
      ? assistant("a1", "m1", [{
        type: "tool_use",
        id: "t1",
        name: "Read",
        input: { path: "x" },
      }], "tool_use")
      : assistant("a1", "m1", [{ type: "text", text: "done" }], "end_turn"),
    ...(midTurn
      ? [line({
        type: "user",
        uuid: "r1",
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "t1", content: "x" }],
        },
      })]
      : []),
    line({
      type: "system",
      subtype: "compact_boundary",
      uuid: "b1",
      compactMetadata: { trigger, preTokens: 1000 },
    }),
    line({
      type: "user",
      uuid: "s1",
      isCompactSummary: true,
      message: { role: "user", content: "This session is being continued." },
    }),
    ...(midTurn
      ? [assistant("a2", "m2", [{ type: "text", text: "read it" }], "end_turn")]
      : []),
    line({
      type: "user",
      uuid: "u2",
      message: { role: "user", content: "next" },
    }),
    assistant("a3", "m3", [{ type: "text", text: "ok" }], "end_turn"),
    "",
  ].join("\n");

const importText = async (text: string) => {
  const dir = Deno.makeTempDirSync();
  try {
    const file = `${dir}/c.jsonl`;
    Deno.writeTextFileSync(file, text);
    return await Effect.runPromise(
      importSession(file, { from: "claude-code" }),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
};

Deno.test("an automatic compaction while the model is at work stays inside the turn, which goes on", async () => {
  // Given a prompt, a call and its result, then an automatic compaction,
  // and the model's answer after it
  const { events, report } = await importText(session("auto", true));
  // Then the compaction is in turn 0, the answer too, and turn 0 ends
  // completed when the next prompt opens turn 1
  assert.deepEqual(outline(events), [
    "start 0",
    "assistant 0",
    "compaction 0",
    "assistant 0",
    "end 0 completed",
    "start 1",
    "assistant 1",
    "end 1 completed",
  ]);
  assert.equal(report.compactions, 1);
  assert.equal(report.repairs, 0);
  assert.deepEqual(report.notCarried, []);
});

Deno.test("a manual compaction after the same work ends the turn at the boundary", async () => {
  const { events } = await importText(session("manual", true));
  assert.deepEqual(outline(events).slice(0, 4), [
    "start 0",
    "assistant 0",
    "end 0 interrupted",
    "compaction 0",
  ]);
});

Deno.test("an automatic compaction after the model's answer ends the turn first, as completed", async () => {
  const { events } = await importText(session("auto", false));
  assert.deepEqual(outline(events), [
    "start 0",
    "assistant 0",
    "end 0 completed",
    "compaction 0",
    "start 1",
    "assistant 1",
    "end 1 completed",
  ]);
});

Deno.test("the real automatic compaction (line 1256) happens inside its turn, which ends at the next prompt", async () => {
  const file = path.join(
    peerLogs(),
    "extra/claude-code/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
  );
  const { events } = await Effect.runPromise(
    importSession(file, { from: "claude-code" }),
  );
  const lines = linesOf(events);
  const at = events.findIndex((e) => e.type === "compaction/start");
  const compaction = events[at];
  assert.ok(compaction !== undefined);
  assert.equal(lines[compaction.seq], 1257);
  const turn = turnOf(compaction);
  const before = events.slice(0, at).findLast((e) =>
    e.type === "assistant/message"
  );
  const after = events.slice(at).find((e) => e.type === "assistant/message");
  assert.ok(before !== undefined && after !== undefined);
  // The model's last message before it and its first after it are one turn.
  assert.equal(turnOf(before), turn);
  assert.equal(turnOf(after), turn);
  const ends = events.filter((e) =>
    e.type === "turn/end" && turnOf(e) === turn
  );
  assert.equal(ends.length, 1);
  const end = ends[0];
  assert.ok(end !== undefined && end.type === "turn/end");
  assert.ok(end.seq > after.seq);
  assert.equal(end.data.reason.kind, "completed");
  // It ends where the next prompt opens the next turn.
  const next = events.find((e) =>
    e.type === "turn/start" && turnOf(e) === (turn ?? 0) + 1
  );
  assert.ok(next !== undefined);
  assert.equal(lines[end.seq], lines[next.seq]);
});

const realSession = new URL(
  "../fixtures/import/claude-code/real-session.jsonl",
  import.meta.url,
).pathname;

Deno.test("a compaction's preserved segment follows its summary on the surface, as Claude Code sends it, and the report says so", async () => {
  const { session, report } = await Effect.runPromise(
    importSession(realSession, { from: "claude-code" }),
  );
  const texts = deriveMessages(session.surface).map((m) =>
    m.content.flatMap((b) => b.type === "text" ? [b.text] : []).join("")
  );
  assert.match(texts[0] ?? "", /^This session is being continued/);
  // The preserved message, written before the boundary, comes next; then
  // the lines after the summary, which continue from it (no rewind).
  assert.equal(texts[1], "No response requested.");
  assert.ok(texts.includes("Thanks."));
  const kept = report.synthesized.find((e) =>
    e.kind === "user/compact-summary"
  );
  assert.match(kept?.note ?? "", /preserved segment \(lines \d+-\d+\)/);
  assert.ok(!report.synthesized.some((e) => /rewind/.test(e.note)));
  assert.ok(!report.notCarried.some((e) => e.kind === "mode"));
});

Deno.test("a preserved segment that is not in the file is reported, and nothing is kept after the summary", async () => {
  const lines = Deno.readTextFileSync(realSession).split("\n").filter((l) =>
    l !== ""
  );
  const boundary = lines.findIndex((l) => l.includes('"compact_boundary"'));
  const head: string = JSON.parse(lines[boundary] ?? "{}").compactMetadata
    .preservedSegment.headUuid;
  const dir = Deno.makeTempDirSync();
  try {
    const file = path.join(dir, "cut.jsonl");
    Deno.writeTextFileSync(
      file,
      lines.filter((l) =>
        !l.startsWith(`{"parentUuid"`) || !l.includes(`"uuid":"${head}"`)
      )
        .join("\n") + "\n",
    );
    const { session, report } = await Effect.runPromise(
      importSession(file, { from: "claude-code" }),
    );
    assert.ok(
      report.notCarried.some((e) =>
        e.kind === "system/compact_boundary" && e.note.includes(head)
      ),
    );
    const texts = deriveMessages(session.surface).map((m) =>
      m.content.flatMap((b) => b.type === "text" ? [b.text] : []).join("")
    );
    assert.ok(!texts.includes("No response requested."));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
