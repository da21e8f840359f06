import assert from "node:assert/strict";
import fc from "fast-check";
import { Result } from "effect";
import {
  checkTranscript,
  deriveMessages,
  type EventDraft,
  isSurfaceEvent,
  openWork,
  type SessionEvent,
  type ToolResultEvent,
} from "@palimpsest/session";
import {
  COMPACTION_ABANDONED,
  interruptedTurnClosers,
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
} from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { pairToolCalls } from "@palimpsest/session/providers";
import { encodeEventLine } from "@palimpsest/session/jsonl";
import { decodeEventResult } from "@palimpsest/session/schema";
import {
  assistantCallDraft,
  assistantMessageDraft,
  assistantTextDraft,
  drafts,
  toolCallDraft,
  toolResultDraft,
  turnBatches,
} from "../_helpers/build.ts";

/** Decodes drafts as a log: seq i, time 10 (i + 1). */
const given = (
  drafts: ReadonlyArray<EventDraft>,
): ReadonlyArray<SessionEvent> =>
  drafts.map((draft, seq) =>
    Result.getOrThrow(
      decodeEventResult({ ...draft, seq, time: 10 * (seq + 1) }),
    )
  );

const toolResult = (event: SessionEvent | undefined): ToolResultEvent => {
  if (
    event === undefined || !isSurfaceEvent(event) ||
    event.type !== "tool/result"
  ) {
    throw new Error(`Expected a tool/result but found ${event?.type}`);
  }
  return event;
};

const multiCall: EventDraft = assistantMessageDraft(0, 0, "a0", [
  { type: "tool-call", id: "c1", name: "t", arguments: "{}" },
  { type: "tool-call", id: "c2", name: "t", arguments: "{}" },
  { type: "tool-call", id: "c3", name: "t", arguments: "{}" },
], { kind: "model", provider: "p", model: "m" });

const openTurn: ReadonlyArray<EventDraft> = [
  { type: "turn/start", data: { turn: 0 } },
  { type: "step/start", data: { turn: 0, step: 0 } },
  drafts.user("u0", "q"),
  multiCall,
  toolCallDraft(0, 0, "c1"),
  toolResultDraft(0, 0, "c1"),
  toolCallDraft(0, 0, "c2"),
];

Deno.test("interruptedTurnClosers", async (t) => {
  await t.step(
    "closes calls, the step and the turn, citing their sources",
    () => {
      const events = given(openTurn);
      const closers = interruptedTurnClosers(events);
      assert.deepEqual(closers.map((e) => [e.type, e.seq]), [
        ["tool/result", 7],
        ["tool/result", 8],
        ["step/end", 9],
        ["turn/end", 10],
      ]);
      const [first, second, , end] = closers;
      const unknown = toolResult(first);
      const notStarted = toolResult(second);
      assert.equal(unknown.data.error?.code, TOOL_OUTCOME_UNKNOWN);
      assert.deepEqual(unknown.sourceEventSeqs, [6]);
      assert.equal(unknown.data.message.id, "repair-c2");
      assert.equal(unknown.data.message.content[0].isError, true);
      assert.equal(unknown.surfaceOp, "append");
      assert.equal(notStarted.data.error?.code, TOOL_NOT_STARTED);
      assert.deepEqual(notStarted.sourceEventSeqs, [3]);
      assert.deepEqual(end?.data, { turn: 0, reason: { kind: "interrupted" } });
      for (const closer of closers) assert.equal(closer.time, 70);
    },
  );
  await t.step("closers decode, replay and leave a clean transcript", () => {
    const events = given(openTurn);
    const closers = interruptedTurnClosers(events);
    for (const closer of closers) {
      const line = encodeEventLine(closer);
      assert.deepEqual(
        Result.getOrThrow(decodeEventResult(JSON.parse(line))),
        closer,
      );
    }
    const before = Result.getOrThrow(replayResult(events));
    assert.equal(checkTranscript(deriveMessages(before)).length, 2);
    const after = Result.getOrThrow(replayResult(closers, before));
    assert.deepEqual(checkTranscript(deriveMessages(after)), []);
    assert.deepEqual(interruptedTurnClosers([...events, ...closers]), []);
  });
  await t.step("repairing twice gives the same bytes", () => {
    const a = interruptedTurnClosers(given(openTurn)).map((e) =>
      encodeEventLine(e)
    );
    const b = interruptedTurnClosers(given(openTurn)).map((e) =>
      encodeEventLine(e)
    );
    assert.deepEqual(a, b);
  });
  await t.step("a closed turn, or no turn, needs nothing", () => {
    assert.deepEqual(interruptedTurnClosers([]), []);
    assert.deepEqual(
      interruptedTurnClosers(given([drafts.user("u", "x")])),
      [],
    );
    assert.deepEqual(interruptedTurnClosers(given(turnBatches(0).flat())), []);
  });
  await t.step("a closed step gets no step/end", () => {
    const events = given([
      { type: "turn/start", data: { turn: 3 } },
      { type: "step/start", data: { turn: 3, step: 1 } },
      assistantCallDraft(3, 1, "k"),
      { type: "step/end", data: { turn: 3, step: 1 } },
    ]);
    assert.deepEqual(interruptedTurnClosers(events).map((e) => e.type), [
      "tool/result",
      "turn/end",
    ]);
  });
  await t.step("a turn left open under a later turn is closed too", () => {
    // 0.2's runTurn started turn 1 inside the crashed turn 0. The call of
    // turn 0 is followed by turn 1's answers, so no appended result can
    // answer it (pairing does); the turn itself is closed.
    const events = given([
      { type: "turn/start", data: { turn: 0 } },
      { type: "step/start", data: { turn: 0, step: 0 } },
      assistantCallDraft(0, 0, "old"),
      ...turnBatches(1).flat(),
    ]);
    const closers = interruptedTurnClosers(events);
    assert.deepEqual(closers.map((e) => [e.type, e.data]), [
      ["step/end", { turn: 0, step: 0 }],
      ["turn/end", { turn: 0, reason: { kind: "interrupted" } }],
    ]);
    assert.deepEqual(openWork([...events, ...closers]), {
      turns: [],
      compactions: [],
    });
  });
  await t.step("an open compaction is closed as abandoned", () => {
    const events = given([
      drafts.user("u0", "q"),
      { type: "compaction/start", data: { compactionId: "k", turn: null } },
    ]);
    assert.deepEqual(openWork(events).compactions, [
      { compactionId: "k", startSeq: 1 },
    ]);
    const closers = interruptedTurnClosers(events);
    assert.deepEqual(closers.map((e) => [e.type, e.seq, e.time, e.data]), [
      ["compaction/end", 2, 20, {
        compactionId: "k",
        error: { _tag: COMPACTION_ABANDONED },
      }],
    ]);
    assert.deepEqual(interruptedTurnClosers([...events, ...closers]), []);
  });
  await t.step("live work is left open", () => {
    const events = given([
      { type: "turn/start", data: { turn: 0 } },
      { type: "step/start", data: { turn: 0, step: 0 } },
      { type: "compaction/start", data: { compactionId: "k", turn: 0 } },
    ]);
    const live = { turns: new Set([0]), compactions: new Set(["k"]) };
    assert.deepEqual(interruptedTurnClosers(events, { live }), []);
    assert.deepEqual(
      interruptedTurnClosers(events, { turns: false }).map((e) => e.type),
      ["compaction/end"],
    );
  });
  await t.step(
    "every cut of the workload repairs to a clean transcript",
    () => {
      const workload = [0, 1, 2].flatMap((turn) => turnBatches(turn).flat());
      const all = given(workload);
      fc.assert(
        fc.property(fc.integer({ min: 0, max: all.length }), (cut) => {
          const prefix = all.slice(0, cut);
          const closers = interruptedTurnClosers(prefix);
          const surface = Result.getOrThrow(
            replayResult([...prefix, ...closers]),
          );
          assert.deepEqual(checkTranscript(deriveMessages(surface)), []);
          assert.deepEqual(interruptedTurnClosers([...prefix, ...closers]), []);
        }),
        { numRuns: all.length + 1 },
      );
    },
  );
});

/** Step 0 issues call c1 and ends unanswered; step 1 has started. */
const callThenStep1: ReadonlyArray<EventDraft> = [
  { type: "turn/start", data: { turn: 0 } },
  { type: "step/start", data: { turn: 0, step: 0 } },
  assistantCallDraft(0, 0, "c1"),
  { type: "step/end", data: { turn: 0, step: 0 } },
  { type: "step/start", data: { turn: 0, step: 1 } },
];

Deno.test("repair keeps its promise when a later assistant message follows an orphan call", () => {
  // turn/start, step/start, assistant(call c1), step/end, step/start,
  // assistant(text): c1 cannot be answered by appending (the result would
  // come after the text message), so repair closes the turn without adding
  // a result that would be an unknown one.
  const events = given([...callThenStep1, assistantTextDraft(0, 1, "a1")]);
  const closers = interruptedTurnClosers(events);
  assert.deepEqual(closers.map((e) => e.type), ["step/end", "turn/end"]);
  const surface = replayResult([...events, ...closers]);
  assert.ok(Result.isSuccess(surface));
  const messages = deriveMessages(surface.success);
  assert.deepEqual(checkTranscript(messages), [{
    _tag: "UnansweredToolCall",
    callId: "c1",
    messageIndex: 0,
    blockIndex: 1,
    nextAssistantIndex: 1,
  }]);
  assert.deepEqual(checkTranscript(pairToolCalls(messages).messages), []);
});

Deno.test("repair answers the open calls of the last assistant message only", () => {
  const events = given([
    ...callThenStep1,
    assistantCallDraft(0, 1, "c2"),
    toolCallDraft(0, 1, "c2"),
  ]);
  const closers = interruptedTurnClosers(events);
  assert.deepEqual(closers.map((e) => e.type), [
    "tool/result",
    "step/end",
    "turn/end",
  ]);
  assert.equal(toolResult(closers[0]).data.message.source.callId, "c2");
  assert.deepEqual(closers[0]?.sourceEventSeqs, [6]);
});
