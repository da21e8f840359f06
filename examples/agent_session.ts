/**
 * A scripted agent session with no network: appends a turn with a tool
 * call, replaces the tool result and prints the surface and the derived
 * messages.
 *
 * @module
 */
import {
  deriveMessagesWithSources,
  type EventDraft,
  Session,
  SessionSeq,
  surfaceNodes,
} from "@palimpsest/session";
import { Effect } from "effect";

const text = (text: string) => [{ type: "text" as const, text }];
const model = { kind: "model" as const, provider: "scripted", model: "demo-1" };

const program = Effect.gen(function* () {
  let session = Session.make({
    id: "demo",
    createdAt: 0,
    isSeeded: false,
  });
  const step = function* (label: string, drafts: ReadonlyArray<EventDraft>) {
    session = yield* Session.appendAll(session, drafts);
    yield* Effect.log(
      `${label}: log has ${Session.nextSeq(session)} events, surface ${
        JSON.stringify(surfaceNodes(session.surface))
      }`,
    );
  };

  yield* step("user asks", [
    { type: "turn/start", data: { turn: 0 } },
    { type: "step/start", data: { turn: 0, step: 0 } },
    {
      type: "user/message",
      surfaceOp: "append",
      data: {
        id: "u0",
        role: "user",
        content: text("What is in notes.txt?"),
        source: { kind: "user" },
      },
    },
  ]);
  yield* step("model calls a tool", [
    {
      type: "assistant/message",
      surfaceOp: "append",
      data: {
        turn: 0,
        step: 0,
        stream: [],
        message: {
          id: "a0",
          role: "assistant",
          content: [
            ...text("Let me read it."),
            {
              type: "tool-call",
              id: "call-1",
              name: "read",
              arguments: '{"path":"notes.txt"}',
            },
          ],
          source: model,
        },
      },
    },
    {
      type: "tool/call",
      data: {
        turn: 0,
        step: 0,
        callId: "call-1",
        name: "read",
        arguments: '{"path":"notes.txt"}',
      },
    },
  ]);
  const callSeq = SessionSeq.make(Session.nextSeq(session) - 1);
  const result = (content: string) => ({
    turn: 0,
    step: 0,
    message: {
      id: "t1",
      role: "user" as const,
      content: [
        {
          type: "tool-result" as const,
          toolCallId: "call-1",
          content: text(content),
        },
      ] as const,
      source: { kind: "tool" as const, callId: "call-1" },
    },
  });
  yield* step("tool answers (huge)", [{
    type: "tool/result",
    surfaceOp: "append",
    sourceEventSeqs: [callSeq],
    data: result("x".repeat(50_000)),
  }]);
  const resultSeq = SessionSeq.make(Session.nextSeq(session) - 1);
  yield* step("prune the huge result", [{
    type: "tool/result",
    surfaceOp: { op: "replace", startSeq: resultSeq, endSeq: resultSeq },
    sourceEventSeqs: [resultSeq],
    data: result("xxxx[… 49,992 characters pruned …]xxxx"),
  }]);

  for (const { seq, message } of deriveMessagesWithSources(session.surface)) {
    const body = message.content.map((block) =>
      block.type === "text"
        ? block.text
        : block.type === "tool-call"
        ? `call ${block.name}(${block.arguments})`
        : block.type === "tool-result"
        ? `result ${
          JSON.stringify(
            block.content.map((c) => c.type === "text" ? c.text : c.type),
          )
        }`
        : block.type
    ).join(" | ");
    yield* Effect.log(`  seq ${seq} ${message.role}: ${body.slice(0, 100)}`);
  }
});

Effect.runSync(program);
