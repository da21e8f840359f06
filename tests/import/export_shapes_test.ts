/**
 * Each exporter records a compaction and a system prompt the tool's own
 * way: given a session with a system prompt, a compacted turn and a kept
 * one, when it is exported, then pi has a `compaction` entry whose first
 * kept entry is in the file, Claude Code a `compact_boundary` with no
 * parent followed by the `isCompactSummary` message, Codex a `compacted`
 * line whose replacement history ends in the summary; Codex carries the
 * system prompt as its base instructions, the others say they cannot.
 */
import { compact, Draft, Session, SessionSeq } from "@palimpsest/session";
import { exportSession } from "@palimpsest/session/import";
import { Effect } from "effect";
import assert from "node:assert/strict";

const session = Effect.runSync(Effect.gen(function* () {
  const empty = Session.make({ id: "shapes", createdAt: 0, isSeeded: false });
  const s = yield* Session.appendAll(empty, [
    Draft.system("be brief"),
    Draft.user("first question"),
    Draft.user("second question"),
  ]);
  return yield* compact(s, {
    startSeq: SessionSeq.make(1),
    endSeq: SessionSeq.make(1),
    summary: "the first question was asked",
    compactionId: "c1",
  });
}));

const records = (to: "pi" | "claude-code" | "codex") => {
  const exported = Effect.runSync(exportSession(session, { to }));
  return {
    exported,
    lines: exported.lines.map((l): Record<string, unknown> => JSON.parse(l)),
  };
};

Deno.test("pi gets a compaction entry whose first kept entry is in the file, and no system prompt", () => {
  const { exported, lines } = records("pi");
  assert.deepEqual([lines[0]?.type, lines[0]?.version], ["session", 3]);
  const compaction = lines.find((r) => r.type === "compaction");
  assert.equal(compaction?.summary, "the first question was asked");
  assert.ok(lines.some((r) => r.id === compaction?.firstKeptEntryId));
  assert.ok(exported.notCarried.some((n) => /system prompt/.test(n.note)));
});

Deno.test("Claude Code gets a compact boundary with no parent, then the summary", () => {
  const { exported, lines } = records("claude-code");
  const at = lines.findIndex((r) => r.subtype === "compact_boundary");
  assert.equal(lines[at]?.parentUuid, null);
  assert.equal(lines[at + 1]?.isCompactSummary, true);
  assert.equal(lines[at + 1]?.parentUuid, lines[at]?.uuid);
  assert.ok(lines.every((r) => r.sessionId === exported.id));
  assert.ok(exported.notCarried.some((n) => /system prompt/.test(n.note)));
});

Deno.test("Codex gets a compacted line whose replacement history ends in the summary, and the system prompt as base instructions", () => {
  const { exported, lines } = records("codex");
  const meta = lines[0];
  assert.equal(meta?.type, "session_meta");
  assert.deepEqual(
    Reflect.get(Object(meta?.payload), "base_instructions"),
    { text: "be brief" },
  );
  const compacted = lines.find((r) => r.type === "compacted");
  const history: unknown = Reflect.get(
    Object(compacted?.payload),
    "replacement_history",
  );
  assert.ok(Array.isArray(history));
  assert.match(JSON.stringify(history.at(-1)), /the first question was asked/);
  assert.deepEqual(exported.notCarried, []);
});
