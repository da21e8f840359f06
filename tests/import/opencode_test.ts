/**
 * opencode specifics, on small synthetic `opencode export` documents: parts
 * taken in id order and cut into steps at `step-start`, calls then results
 * in call order, a tool error as an error result, reasoning and its
 * provider metadata, provider and model recorded, the step's tokens as
 * usage, a call left `running` answered right after its step in opencode's
 * words, one left `pending` at the end closed by the library's repair, an
 * errored answer left out, bookkeeping parts counted by kind, a completed
 * compaction replacing the history (an unfinished one keeping it), and the
 * refusals of a document that is no export.
 */
import type { SessionEvent } from "@palimpsest/session";
import { interruptedTurnClosers } from "@palimpsest/session/internal";
import { importSession } from "@palimpsest/session/import";
import { Effect } from "effect";
import assert from "node:assert/strict";
import { assertRepairsClean } from "./_clean_transcript.ts";
import { codexItems } from "./_oracle.ts";
import { opencodeOracle } from "./_opencode_oracle.ts";

const session = {
  id: "ses_1",
  version: "1.1.34",
  directory: "/w",
  title: "t",
  time: { created: 1000, updated: 9000 },
};

const user = (id: string, at: number, parts: unknown[]) => ({
  info: { id, sessionID: "ses_1", role: "user", time: { created: at } },
  parts,
});
const assistant = (
  id: string,
  at: number,
  parts: unknown[],
  extra: Record<string, unknown> = {},
) => ({
  info: {
    id,
    sessionID: "ses_1",
    role: "assistant",
    time: { created: at },
    parentID: "msg_01",
    providerID: "anthropic",
    modelID: "claude-x",
    ...extra,
  },
  parts,
});
const text = (id: string, t: string, more: Record<string, unknown> = {}) => ({
  id,
  type: "text",
  text: t,
  ...more,
});
const stepStart = (id: string) => ({ id, type: "step-start", snapshot: "h" });
const tokens = {
  input: 10,
  output: 2,
  reasoning: 0,
  cache: { read: 0, write: 0 },
};
const stepFinish = (id: string) => ({
  id,
  type: "step-finish",
  reason: "stop",
  cost: 0,
  tokens,
});
const tool = (id: string, callID: string, state: Record<string, unknown>) => ({
  id,
  type: "tool",
  callID,
  tool: "sh",
  state,
});

/** A session whose parts are listed out of order, as exports list them. */
const doc = {
  info: session,
  messages: [
    user("msg_01", 2000, [
      { id: "prt_102", type: "file", mime: "text/plain", url: "file:///a" },
      text("prt_101", "hi"),
    ]),
    assistant("msg_02", 3000, [
      stepFinish("prt_206"),
      tool("prt_205", "c2", {
        status: "error",
        input: {},
        error: "boom",
        time: { start: 3100, end: 3200 },
      }),
      {
        id: "prt_202",
        type: "reasoning",
        text: "thinking",
        metadata: { anthropic: { signature: "sig" } },
        time: { start: 3000 },
      },
      stepStart("prt_201"),
      text("prt_203", "let me look"),
      tool("prt_204", "c1", {
        status: "completed",
        input: { path: "a" },
        output: "A",
        title: "",
        metadata: {},
        time: { start: 3100, end: 3150 },
      }),
      { id: "prt_207", type: "snapshot", snapshot: "h" },
      stepStart("prt_208"),
      tool("prt_209", "c3", {
        status: "running",
        input: { q: 1 },
        time: { start: 3300 },
      }),
      stepFinish("prt_210"),
      stepStart("prt_211"),
      text("prt_212", "done"),
      stepFinish("prt_213"),
    ], { finish: "stop" }),
    user("msg_03", 4000, [text("prt_301", "again")]),
    assistant("msg_04", 5000, [stepStart("prt_401"), text("prt_402", "half")], {
      error: { name: "APIError", data: { message: "overloaded" } },
    }),
    assistant("msg_05", 6000, [
      stepStart("prt_501"),
      tool("prt_502", "c4", { status: "pending", input: {}, raw: "" }),
    ]),
  ],
};

const imported = async (content: string, recover = false) => {
  const dir = Deno.makeTempDirSync();
  try {
    const file = `${dir}/export.json`;
    Deno.writeTextFileSync(file, content);
    return await Effect.runPromise(
      Effect.result(importSession(file, { from: "opencode", recover })),
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
};

const ok = async (content: string) => {
  const result = await imported(content);
  assert.equal(result._tag, "Success");
  return result.success;
};

/** The 1-based line on which `"id": "<id>"` is written. */
const lineOf = (content: string, id: string): number =>
  content.split("\n").findIndex((l) => l.includes(`"id": "${id}"`)) + 1;

const shape = (events: ReadonlyArray<SessionEvent>): string[] =>
  assertRepairsClean(events).messages.map((m) =>
    `${m.role} ${m.id}: ` +
    m.content.map((b) =>
      b.type === "text" || b.type === "reasoning"
        ? `${b.type} ${b.text}`
        : b.type === "tool-call"
        ? `call ${b.id} ${b.arguments}`
        : b.type === "tool-result"
        ? `result ${b.toolCallId}${b.isError === true ? " error" : ""} ${
          b.content.map((c) => c.type === "text" ? c.text : c.type).join()
        }`
        : b.type
    ).join(" | ")
  );

Deno.test("an export imports as opencode sends it: steps, calls then results, a tool error, a running call answered, a pending one left to repair", async () => {
  const content = JSON.stringify(doc, null, 2);
  const { events, report, session: s } = await ok(content);
  assert.deepEqual(shape(events), [
    "user msg_01: text hi",
    'assistant msg_02: reasoning thinking | text let me look | call c1 {"path":"a"} | call c2 {}',
    "user result-c1: result c1 A",
    "user result-c2: result c2 error boom",
    'assistant msg_02#2: call c3 {"q":1}',
    "user repair-c3: result c3 error [Tool execution was interrupted]",
    "assistant msg_02#3: text done",
    "user msg_03: text again",
    "assistant msg_05: call c4 {}",
    // Closed by the library's repair, in its own words.
    "user repair-c4: result c4 error The session was interrupted before this tool call started; it did not run.",
  ]);
  const answers = events.flatMap((e) =>
    e.type === "assistant/message" ? [e.data] : []
  );
  assert.deepEqual(
    answers.map((d) => [d.message.source.provider, d.message.source.model]),
    Array(4).fill(["anthropic", "claude-x"]),
  );
  assert.deepEqual(answers[0]?.usage, tokens);
  assert.deepEqual(answers[0]?.stream.map((r) => r.chunk), [{
    type: "reasoning",
    part: "prt_202",
    metadata: { anthropic: { signature: "sig" } },
  }]);
  // The pending call at the end leaves the turn open for repair.
  assert.equal(report.openTurn, true);
  assert.equal(report.repairs, 1);
  const closers = interruptedTurnClosers(events);
  assert.deepEqual(
    closers.flatMap((e) =>
      e.type === "tool/result" ? [e.data.message.source.callId] : []
    ),
    ["c4"],
  );
  // Bookkeeping counted by kind; the errored answer reported by its line.
  const skipped = Object.fromEntries(
    report.skipped.map((k) => [k.kind, k.count]),
  );
  assert.deepEqual(skipped, {
    "part/step-start": 5,
    "part/step-finish": 3,
    "part/snapshot": 1,
    "part/file (text/plain)": 1,
  });
  assert.deepEqual(
    report.notCarried.map((e) => [e.line, e.kind]),
    [[lineOf(content, "msg_04"), "message/assistant"]],
  );
  assert.deepEqual(report.opaque.map((k) => [k.kind, k.lines]), [
    ["part/reasoning", [lineOf(content, "prt_202")]],
  ]);
  assert.equal(report.formatVersion, "1.1.34");
  assert.equal(report.lines, content.split("\n").length);
  assert.equal(s.header.id, "ses_1");
  assert.deepEqual(s.header.meta?.importedFrom, {
    tool: "opencode",
    file: "export.json",
    version: "1.1.34",
    cwd: "/w",
    title: "t",
  });
  // Every event maps to the line of the part it came from.
  const lines = events[events.length - 1]?.data as { lines: number[] };
  const c1 = events.find((e) =>
    e.type === "tool/result" && e.data.message.source.callId === "c1"
  );
  assert.equal(lines.lines[c1?.seq ?? -1], lineOf(content, "prt_204"));
});

Deno.test("a pruned output is what opencode sends, the original kept in meta; an interrupted tool's output is a result; an aborted answer ends its turn", async () => {
  const content = JSON.stringify({
    info: session,
    messages: [
      user("msg_01", 2000, [text("prt_101", "go")]),
      assistant("msg_02", 3000, [
        stepStart("prt_201"),
        tool("prt_202", "c1", {
          status: "completed",
          input: {},
          output: "long output",
          title: "",
          metadata: {},
          time: { start: 1, end: 2, compacted: 3 },
        }),
        tool("prt_203", "c2", {
          status: "error",
          input: {},
          error: "aborted",
          metadata: { interrupted: true, output: "partial" },
          time: { start: 1, end: 2 },
        }),
        stepFinish("prt_204"),
        stepStart("prt_205"),
        text("prt_206", "stopp"),
      ], { error: { name: "MessageAbortedError", data: { message: "x" } } }),
    ],
  });
  const { events, report } = await ok(content);
  assert.deepEqual(shape(events), [
    "user msg_01: text go",
    "assistant msg_02: call c1 {} | call c2 {}",
    "user result-c1: result c1 [Old tool result content cleared]",
    "user result-c2: result c2 partial",
    "assistant msg_02#2: text stopp",
  ]);
  const c1 = events.find((e) =>
    e.type === "tool/result" && e.data.message.source.callId === "c1"
  );
  assert.equal(
    c1?.type === "tool/result"
      ? Reflect.get(Object(c1.data.meta), "output")
      : 0,
    "long output",
  );
  const last = events.filter((e) => e.type === "assistant/message").pop();
  assert.equal(
    last?.type === "assistant/message" ? last.data.interrupted : false,
    true,
  );
  assert.equal(report.openTurn, false);
  const end = events.find((e) => e.type === "turn/end");
  assert.equal(
    end?.type === "turn/end" ? end.data.reason.kind : "",
    "interrupted",
  );
});

Deno.test("a document that is no export is refused: not JSON by its line, no messages, nothing under recover", async () => {
  const torn = await imported('{\n  "info": {},\n  "messages": [\n}\n');
  assert.equal(torn._tag, "Failure");
  assert.equal(torn.failure._tag, "ImportLineNotJson");
  assert.equal("line" in torn.failure ? torn.failure.line : 0, 4);
  const empty = await imported("{}\n");
  assert.equal(empty._tag, "Failure");
  assert.equal(empty.failure._tag, "ImportNotASession");
  const recovered = await imported("[not json\n", true);
  assert.equal(recovered._tag, "Failure");
  assert.equal(recovered.failure._tag, "ImportNoSession");
});

/** The derived messages as opencode items, and what opencode sends. */
const versusOpencode = (events: ReadonlyArray<SessionEvent>, d: unknown) => [
  codexItems(assertRepairsClean(events).messages),
  opencodeOracle(d).filter((i) => !(i.k === "reasoning" && i.text === "")),
];

Deno.test("a compaction whose summary completed replaces everything before it; one that never completed keeps the history", async () => {
  const head = [
    user("msg_01", 2000, [text("prt_101", "first")]),
    assistant("msg_02", 3000, [
      stepStart("prt_201"),
      tool("prt_202", "c1", {
        status: "completed",
        input: {},
        output: "out",
        title: "",
        metadata: {},
        time: { start: 1, end: 2 },
      }),
      stepFinish("prt_203"),
      stepStart("prt_204"),
      text("prt_205", "answer"),
    ], { finish: "stop" }),
    user("msg_03", 4000, [{ id: "prt_301", type: "compaction", auto: true }]),
  ];
  const tail = [
    user("msg_05", 6000, [
      text("prt_501", "Continue if you have next steps", { synthetic: true }),
    ]),
    assistant("msg_06", 7000, [stepStart("prt_601"), text("prt_602", "ok")], {
      finish: "stop",
    }),
  ];
  const summary = (extra: Record<string, unknown>) =>
    assistant("msg_04", 5000, [
      stepStart("prt_401"),
      text("prt_402", "we listed the files"),
    ], { parentID: "msg_03", summary: true, ...extra });

  const done = {
    info: session,
    messages: [...head, summary({ finish: "stop" }), ...tail],
  };
  const compacted = await ok(JSON.stringify(done, null, 2));
  assert.deepEqual(shape(compacted.events), [
    "user msg_03: text What did we do so far?",
    "assistant msg_04: text we listed the files",
    "user msg_05: text Continue if you have next steps",
    "assistant msg_06: text ok",
  ]);
  assert.equal(compacted.report.compactions, 1);
  const [ours, theirs] = versusOpencode(compacted.events, done);
  assert.deepEqual(ours, theirs);
  // The question cites every node it replaced.
  const question = compacted.events.find((e) =>
    e.type === "user/message" && e.data.id === "msg_03"
  );
  const replaced = compacted.events.filter((e) =>
    ["user/message", "assistant/message", "tool/result"].includes(
      String(e.type),
    ) &&
    e.seq < (question?.seq ?? 0)
  ).map((e) => e.seq);
  assert.equal(replaced.length, 4);
  const cited: ReadonlyArray<number> = question?.type === "user/message"
    ? question.sourceEventSeqs ?? []
    : [];
  for (const seq of replaced) assert.ok(cited.includes(seq), `cites ${seq}`);

  const failed = {
    info: session,
    messages: [
      ...head,
      summary({ error: { name: "APIError", data: { message: "x" } } }),
      ...tail,
    ],
  };
  const kept = await ok(JSON.stringify(failed, null, 2));
  assert.equal(kept.report.compactions, 0);
  assert.deepEqual(shape(kept.events).map((l) => l.split(":")[0]), [
    "user msg_01",
    "assistant msg_02",
    "user result-c1",
    "assistant msg_02#2",
    "user msg_03",
    "user msg_05",
    "assistant msg_06",
  ]);
  const [ours2, theirs2] = versusOpencode(kept.events, failed);
  assert.deepEqual(ours2, theirs2);
  assert.deepEqual(kept.report.notCarried.map((e) => e.kind), [
    "part/compaction",
    "message/assistant",
  ]);
});
