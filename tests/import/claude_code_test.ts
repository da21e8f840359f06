/**
 * Claude Code lines that carry nothing the model saw (titles, the
 * permission mode, attachment records, a subagent's sidechain) are
 * summarised by kind in the report, never listed one by one as not carried
 * over; a prompt typed after a rewind goes on by a rewind.
 */
import { branches, deriveMessages } from "@palimpsest/session";
import { formatImportReport, importSession } from "@palimpsest/session/import";
import { Effect } from "effect";
import assert from "node:assert/strict";
import { withTempFile } from "../_helpers/temp_file.ts";
import { claudeAssistant, claudeUser } from "./_claude.ts";

Deno.test("known lines the model never saw are counted by kind, not listed as not carried over", async () => {
  const line = (value: Record<string, unknown>) =>
    JSON.stringify({
      sessionId: "c1",
      timestamp: "2026-01-01T00:00:00Z",
      ...value,
    });
  const lines = [
    line({ type: "ai-title", title: "t" }),
    line({ type: "permission-mode", mode: "default" }),
    line(claudeUser("u1", "hi")),
    line({ type: "attachment", attachment: { type: "file" } }),
    ...[1, 2, 3].map((i) =>
      line(claudeUser(`s${i}`, "sub", { isSidechain: true }))
    ),
    line(claudeAssistant("a1", "hello")),
  ];
  await withTempFile("c.jsonl", `${lines.join("\n")}\n`, async (file) => {
    const { report } = await Effect.runPromise(
      importSession(file, { from: "claude-code" }),
    );
    assert.deepEqual(report.notCarried, []);
    assert.deepEqual(
      report.skipped.map((s) => [s.kind, s.count]).sort(),
      [
        ["ai-title", 1],
        ["attachment", 1],
        ["permission-mode", 1],
        ["user (sidechain)", 3],
      ],
    );
    assert.match(
      formatImportReport(report),
      /user \(sidechain\) x3 .*lines 5-7/,
    );
  });
});

Deno.test("a subagent's own transcript, sidechain from its first message, is imported as its conversation", async () => {
  const lines = [
    claudeUser("s1", "summarise"),
    claudeAssistant("s2", "summary", { parentUuid: "s1" }),
  ].map((l) =>
    JSON.stringify({ sessionId: "c1", isSidechain: true, agentId: "a", ...l })
  );
  await withTempFile("agent-a.jsonl", `${lines.join("\n")}\n`, async (file) => {
    const { report } = await Effect.runPromise(
      importSession(file, { from: "claude-code" }),
    );
    assert.equal(report.surface, 2);
    assert.deepEqual(report.skipped, []);
  });
});

Deno.test("a prompt typed after a Claude Code rewind goes on by a rewind: the abandoned lines stay in the log as a branch", async () => {
  const file = new URL(
    "../fixtures/import/claude-code/rewind.jsonl",
    import.meta.url,
  ).pathname;
  const { session } = await Effect.runPromise(
    importSession(file, { from: "claude-code" }),
  );
  const list = Effect.runSync(branches(session));
  assert.deepEqual(
    list.map((b) => [b.firstUserText, b.leavesAt, b.current]),
    [["name a colour", undefined, false], ["a warm one", 5, true]],
  );
  // The abandoned prompt and answer are in the log, off the surface.
  assert.deepEqual(
    deriveMessages(session.surface).map((m) => m.id),
    ["u-1", "msg_1", "u-3", "msg_3"],
  );
});
