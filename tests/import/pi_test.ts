/**
 * pi specifics: a compaction that keeps everything still sends its summary
 * first, as pi builds its context; summaries are wrapped as pi sends them.
 */
import { branches, deriveMessages, Session } from "@palimpsest/session";
import {
  type ImportedSession,
  importSession,
} from "@palimpsest/session/import";
import { Effect, Result } from "effect";
import assert from "node:assert/strict";
import { assertRepairsClean } from "./_clean_transcript.ts";
import { blockLabel } from "./_labels.ts";

const entry = (
  id: string,
  parentId: string | null,
  message: Record<string, unknown>,
) =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message,
  });
const assistant = (content: unknown[], stopReason: string) => ({
  role: "assistant",
  content,
  provider: "anthropic",
  model: "m",
  stopReason,
});

/** `lines` written to a pi session file and imported. */
const importLines = async (
  lines: ReadonlyArray<string>,
): Promise<ImportedSession> => {
  const dir = Deno.makeTempDirSync();
  try {
    const file = `${dir}/pi.jsonl`;
    Deno.writeTextFileSync(file, `${lines.join("\n")}\n`);
    return await Effect.runPromise(importSession(file, { from: "pi" }));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
};

/** The session header, a prompt and the assistant's call `c1` to `ls`. */
const listFilesCall: ReadonlyArray<string> = [
  '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}',
  entry("u1", null, { role: "user", content: "list files" }),
  entry(
    "a1",
    "u1",
    assistant([{
      type: "toolCall",
      id: "c1",
      name: "ls",
      arguments: {},
    }], "toolUse"),
  ),
];

Deno.test("a compaction keeping everything from the first entry puts the summary first, then the kept entries", async () => {
  const lines = [
    ...listFilesCall,
    entry("r1", "a1", {
      role: "toolResult",
      toolCallId: "c1",
      toolName: "ls",
      content: [{ type: "text", text: "a.txt" }],
      isError: false,
    }),
    entry("a2", "r1", assistant([{ type: "text", text: "one file" }], "stop")),
    JSON.stringify({
      type: "compaction",
      id: "k1",
      parentId: "a2",
      timestamp: "2026-01-01T00:00:02.000Z",
      summary: "listed files",
      firstKeptEntryId: "u1",
      tokensBefore: 10,
    }),
    entry("u2", "k1", { role: "user", content: "thanks" }),
    entry("a3", "u2", assistant([{ type: "text", text: "welcome" }], "stop")),
  ];
  const { session, events, report } = await importLines(lines);
  const texts = deriveMessages(session.surface).map((m) =>
    m.content.map((c) => blockLabel(c)).join("|")
  );
  assert.deepEqual(texts, [
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\nlisted files\n</summary>",
    "list files",
    "call c1",
    "result c1",
    "one file",
    "thanks",
    "welcome",
  ]);
  assert.equal(report.compactions, 1);
  assertRepairsClean(events);
});

Deno.test("a compaction over a call with no result closes the turn first: no replacement shadows an unanswered call", async () => {
  const lines = [
    ...listFilesCall,
    JSON.stringify({
      type: "compaction",
      id: "k1",
      parentId: "a1",
      timestamp: "2026-01-01T00:00:02.000Z",
      summary: "listed files",
      tokensBefore: 10,
    }),
    entry("u2", "k1", { role: "user", content: "thanks" }),
  ];
  const { session, events, report } = await importLines(lines);
  assert.equal(report.compactions, 1);
  // The call is answered (an error result) before the compaction starts.
  const result = events.find((e) => e.type === "tool/result");
  const start = events.find((e) => e.type === "compaction/start");
  assert.ok(result !== undefined && start !== undefined);
  assert.ok(result.seq < start.seq);
  assert.ok(report.synthesized.some((n) => n.note.includes('"c1"')));
  assert.deepEqual(
    deriveMessages(session.surface).map((m) =>
      m.content.map((c) => blockLabel(c)).join("|")
    ).slice(-1),
    ["thanks"],
  );
  assertRepairsClean(events);
});

const header =
  '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}';
const said = (id: string, parentId: string | null, text: string) =>
  entry(id, parentId, { role: "user", content: text });
const answered = (id: string, parentId: string, text: string) =>
  entry(id, parentId, assistant([{ type: "text", text }], "stop"));
/** u1 a1 u2 a2, a line each after the header (lines 2 to 5). */
const twoTurns = [
  header,
  said("u1", null, "one"),
  answered("a1", "u1", "A1"),
  said("u2", "a1", "two"),
  answered("a2", "u2", "A2"),
];

Deno.test("every branch of a pi tree is imported: each goes on by a rewind, a branch summary carries its own, the last entry's branch is current", async () => {
  const { session, report } = await importLines([
    ...twoTurns,
    // Back to right after a1, with a summary of the branch left.
    JSON.stringify({
      type: "branch_summary",
      id: "s1",
      parentId: "a1",
      timestamp: "2026-01-01T00:00:02.000Z",
      fromId: "a2",
      summary: "tried two",
    }),
    said("u3", "s1", "three"),
    answered("a3", "u3", "A3"),
    // Back to the tip of the first branch.
    said("u4", "a2", "four"),
    answered("a4", "u4", "A4"),
  ]);
  assert.deepEqual(report.branches, []);
  const list = Effect.runSync(branches(session));
  assert.deepEqual(
    list.map((b) => [b.firstUserText?.slice(-29), b.current]),
    [["one", false], ["<summary>\ntried two</summary>", false], [
      "four",
      true,
    ]],
  );
  // What pi would send for the last entry: the path u1 a1 u2 a2 u4 a4.
  assert.deepEqual(
    deriveMessages(session.surface).map((m) => m.id),
    ["u1", "a1", "u2", "a2", "u4", "a4"],
  );
  assertRepairsClean(Result.getOrThrow(Session.events(session)));
});

Deno.test("a pi branch that starts with no user message is left out and reported", async () => {
  const { session, report } = await importLines([
    ...twoTurns,
    // An answer regenerated from u2's parent: no user message to carry it.
    answered("b2", "a1", "B2"),
    said("u3", "b2", "three"),
  ]);
  assert.deepEqual(report.branches, [{ fromLine: 3, lines: [6, 7] }]);
  assert.equal(Effect.runSync(branches(session)).length, 1);
  assert.deepEqual(
    deriveMessages(session.surface).map((m) => m.id),
    ["u1", "a1", "u2", "a2"],
  );
});

Deno.test("a pi fork names its parent: found beside it with the entry the fork leaves it at, or reported not found with its path", async () => {
  const fixtures = new URL("../fixtures/import/pi/", import.meta.url).pathname;
  const fork = `${fixtures}real-fork.jsonl`;
  const parent: string = JSON.parse(
    Deno.readTextFileSync(fork).split("\n")[0] ?? "{}",
  ).parentSession;
  const beside = await Effect.runPromise(importSession(fork, { from: "pi" }));
  const found = beside.report.notCarried.find((e) => e.kind === "session");
  assert.ok(found?.note.includes(JSON.stringify(parent)));
  assert.ok(found?.note.includes("real-session.jsonl"));
  assert.match(found?.note ?? "", /at its entry "[0-9a-f]+"/);
  // pi copied the parent's history into the fork: it is imported once.
  const texts = (s: ImportedSession) =>
    deriveMessages(s.session.surface).flatMap((m) =>
      m.content.flatMap((b) => b.type === "text" ? [`${m.role}:${b.text}`] : [])
    );
  assert.deepEqual(texts(beside), [
    "user:Read note.txt and tell me what it says.",
    "assistant:The note says hello.",
    "user:Thanks.",
    "assistant:Noted.",
  ]);
  // Alone, the fork is imported the same and its parent reported missing.
  const dir = Deno.makeTempDirSync();
  try {
    Deno.copyFileSync(fork, `${dir}/fork.jsonl`);
    const alone = await Effect.runPromise(
      importSession(`${dir}/fork.jsonl`, { from: "pi" }),
    );
    const missing = alone.report.notCarried.find((e) => e.kind === "session");
    assert.ok(missing?.note.includes(JSON.stringify(parent)));
    assert.match(missing?.note ?? "", /not found/);
    assert.deepEqual(texts(alone), texts(beside));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
