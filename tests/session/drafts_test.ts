import {
  checkTranscript,
  deriveMessages,
  Draft,
  type EventDraft,
  Session,
  type SessionEvent,
  SessionSeq,
  type ToolCallEvent,
} from "@palimpsest/session";
import { Effect, Result } from "effect";
import fc from "fast-check";
import assert from "node:assert/strict";

const empty = (): Session =>
  Session.make({ id: "drafts", createdAt: 0, isSeeded: false });

const appendAll = (
  session: Session,
  drafts: ReadonlyArray<EventDraft>,
): Session => Effect.runSync(Session.appendAll(session, drafts));

const isToolCall = (e: SessionEvent): e is ToolCallEvent =>
  e.type === "tool/call";

/** Appends drafts and returns the session and the events they became. */
const given = (
  session: Session,
  drafts: ReadonlyArray<EventDraft>,
): { session: Session; events: ReadonlyArray<SessionEvent> } => {
  const from = Session.nextSeq(session);
  const next = appendAll(session, drafts);
  return {
    session: next,
    events: Result.getOrThrow(Session.events(next, from)),
  };
};

const answerWithCall = Draft.assistant({
  turn: 0,
  step: 0,
  provider: "scripted",
  model: "m1",
  content: "Reading it.",
  toolCalls: [{ id: "c1", name: "read", arguments: { path: "notes.txt" } }],
});

Deno.test("Draft", async (t) => {
  await t.step(
    "a whole turn built from drafts folds and passes the transcript check",
    () => {
      const start = given(empty(), [
        Draft.system("Be terse."),
        Draft.turnStart(0),
        Draft.user("What is in notes.txt?"),
        Draft.stepStart(0, 0),
        answerWithCall,
        ...Draft.toolCalls(answerWithCall),
      ]);
      const [call] = start.events.filter(isToolCall);
      assert.ok(call !== undefined);
      const end = given(start.session, [
        Draft.toolResult(call, "three lines"),
        Draft.stepEnd(0, 0),
        Draft.turnEnd(0, "completed"),
      ]);
      const messages = deriveMessages(end.session.surface);
      assert.deepEqual(messages.map((m) => m.role), [
        "system",
        "user",
        "assistant",
        "user",
      ]);
      assert.deepEqual(checkTranscript(messages), []);
    },
  );

  await t.step("a tool result cites its call's seq, id, turn and step", () => {
    const { session, events } = given(empty(), [
      Draft.turnStart(3),
      Draft.stepStart(3, 2),
      ...Draft.toolCalls(
        Draft.assistant({
          turn: 3,
          step: 2,
          provider: "p",
          model: "m",
          toolCalls: [{ id: "c9", name: "ls", arguments: "{}" }],
        }),
      ),
    ]);
    const [call] = events.filter(isToolCall);
    assert.ok(call !== undefined);
    const draft = Draft.toolResult(call, "a b c");
    assert.deepEqual(draft.sourceEventSeqs, [call.seq]);
    assert.equal(draft.data.turn, 3);
    assert.equal(draft.data.step, 2);
    assert.equal(draft.data.message.content[0].toolCallId, "c9");
    assert.deepEqual(draft.data.message.source, { kind: "tool", callId: "c9" });
    const after = appendAll(session, [draft]);
    const appended = Result.getOrThrow(
      Session.eventAt(after, SessionSeq.make(call.seq + 1)),
    );
    assert.deepEqual(appended?.sourceEventSeqs, [call.seq]);
  });

  await t.step(
    "an assistant draft carries no sources and its type refuses them",
    () => {
      assert.equal("sourceEventSeqs" in answerWithCall, false);
      // @ts-expect-error: an assistant message never cites.
      const refused: EventDraft = {
        ...answerWithCall,
        sourceEventSeqs: [SessionSeq.make(0)],
      };
      void refused;
    },
  );

  await t.step(
    "an assistant's tool calls become tool-call blocks and tool/call records alike",
    () => {
      const blocks = answerWithCall.data.message.content;
      assert.deepEqual(blocks[1], {
        type: "tool-call",
        id: "c1",
        name: "read",
        arguments: '{"path":"notes.txt"}',
      });
      assert.deepEqual(Draft.toolCalls(answerWithCall), [
        Draft.toolCall({
          turn: 0,
          step: 0,
          callId: "c1",
          name: "read",
          arguments: '{"path":"notes.txt"}',
        }),
      ]);
    },
  );

  await t.step("a tool error marks the block isError and decodes", () => {
    const { session, events } = given(empty(), [
      Draft.toolCall({
        turn: 0,
        step: 0,
        callId: "c1",
        name: "x",
        arguments: {},
      }),
    ]);
    const [call] = events.filter(isToolCall);
    assert.ok(call !== undefined);
    const draft = Draft.toolResult(call, "boom", {
      error: { name: "Crash", code: "E1" },
    });
    assert.equal(draft.data.message.content[0].isError, true);
    assert.deepEqual(draft.data.error, { name: "Crash", code: "E1" });
    appendAll(session, [draft]);
  });

  await t.step(
    "an empty system prompt keeps its node and derives no message",
    () => {
      const session = appendAll(empty(), [Draft.system("")]);
      assert.equal(session.surface.length, 1);
      assert.deepEqual(deriveMessages(session.surface), []);
    },
  );

  await t.step(
    "ids are deterministic: the same message gets the same id, another a different one",
    () => {
      assert.equal(Draft.user("hi").data.id, Draft.user("hi").data.id);
      assert.notEqual(Draft.user("hi").data.id, Draft.user("ho").data.id);
      assert.equal(Draft.user("hi", { id: "u7" }).data.id, "u7");
      const a = Draft.assistant({
        turn: 0,
        step: 0,
        provider: "p",
        model: "m",
        content: "x",
      });
      const b = Draft.assistant({
        turn: 0,
        step: 1,
        provider: "p",
        model: "m",
        content: "x",
      });
      assert.notEqual(a.data.message.id, b.data.message.id);
    },
  );

  await t.step(
    "every user text appends, and its id depends on the text alone",
    () => {
      fc.assert(
        fc.property(fc.string(), (text) => {
          const draft = Draft.user(text);
          assert.equal(draft.data.id, Draft.user(text).data.id);
          assert.match(draft.data.id, /^user-[0-9a-f]{8}$/);
          appendAll(empty(), [draft]);
        }),
      );
    },
  );

  await t.step(
    "callsIn picks the tool/call events, in order, from appended events",
    () => {
      const { events } = given(empty(), [
        Draft.turnStart(0),
        Draft.toolCall({
          turn: 0,
          step: 0,
          callId: "a",
          name: "x",
          arguments: {},
        }),
        Draft.user("between"),
        Draft.toolCall({
          turn: 0,
          step: 0,
          callId: "b",
          name: "x",
          arguments: {},
        }),
      ]);
      assert.deepEqual(
        Draft.callsIn(events).map((e) => [e.seq, e.data.callId]),
        [
          [1, "a"],
          [3, "b"],
        ],
      );
    },
  );

  await t.step("turnEnd takes a reason kind or a reason", () => {
    assert.deepEqual(Draft.turnEnd(1, "aborted").data, {
      turn: 1,
      reason: { kind: "aborted" },
    });
    assert.deepEqual(
      Draft.turnEnd(1, { kind: "max-tokens" }).data.reason,
      { kind: "max-tokens" },
    );
  });
});
