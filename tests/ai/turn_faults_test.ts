/**
 * The turn loop against answers that break its bookkeeping: call ids the
 * provider reuses (within one answer and across turns).
 */
import {
  checkTranscript,
  deriveMessages,
  isSurfaceEvent,
  Session,
  type Session as SessionValue,
} from "@palimpsest/session";
import { runTurn, type TurnOutcome } from "@palimpsest/session/ai";
import { Effect, Layer } from "effect";
import { Toolkit } from "effect/ai";
import assert from "node:assert/strict";
import {
  call,
  finish,
  scriptedModel,
  type StreamReply,
  tempStore,
  text,
} from "./_scripted.ts";
import { newSession } from "./_session.ts";
import { Read } from "./_read_tool.ts";

const tools = Toolkit.make(Read);
const model = { provider: "scripted", model: "test-1" };

/** Runs `turns` turns on one session; counts the tool's runs. */
const turns = async (
  stream: ReadonlyArray<StreamReply>,
  count: number,
): Promise<{
  outcomes: TurnOutcome[];
  session: SessionValue;
  runs: string[];
}> => {
  const runs: string[] = [];
  const handlers = tools.toLayer({
    read: ({ path }) =>
      Effect.sync(() => {
        runs.push(path);
        return `contents of ${path}`;
      }),
  });
  const scripted = scriptedModel({ stream });
  return await Effect.runPromise(
    Effect.gen(function* () {
      const { store, handle } = yield* newSession();
      const toolkit = yield* tools;
      const outcomes: TurnOutcome[] = [];
      for (let i = 0; i < count; i++) {
        outcomes.push(
          yield* runTurn({ handle, toolkit, model, input: `turn ${i}` }),
        );
      }
      const session = handle.session;
      yield* store.close(handle);
      return { outcomes, session, runs };
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(scripted.layer, tempStore(), handlers)),
    ),
  );
};

const callIds = (session: SessionValue) =>
  Session.events(session).flatMap((e) =>
    e.type === "tool/call" ? [e.data.callId] : []
  );

Deno.test("a call id the provider reuses in a later turn gets a fresh one and runs once", async () => {
  // Each turn: the model calls read with `call_0`, then answers.
  const turn = (path: string): StreamReply[] => [
    { parts: [call("call_0", "read", { path }), finish("tool-calls")] },
    { parts: [...text(`read ${path}`), finish("stop")] },
  ];
  const { outcomes, session, runs } = await turns(
    [...turn("a"), ...turn("b"), ...turn("c")],
    3,
  );
  assert.deepEqual(outcomes.map((o) => [o.steps, o.reason]), [
    [2, "completed"],
    [2, "completed"],
    [2, "completed"],
  ]);
  assert.deepEqual(runs, ["a", "b", "c"]);
  assert.deepEqual(callIds(session), ["call_0", "call_0_1", "call_0_2"]);
  assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
  // The message, its tool/call and the result carry the fresh id; the
  // stream keeps the provider's.
  const second =
    Session.events(session).filter((e) => e.type === "assistant/message")[2];
  assert.ok(second?.type === "assistant/message");
  assert.deepEqual(
    second.data.message.content.map((b) => b.type === "tool-call" && b.id),
    ["call_0_1"],
  );
  assert.deepEqual(
    second.data.stream.map((r) => JSON.stringify(r.chunk)).filter((c) =>
      c.includes('"tool-call"')
    ).map((c) => JSON.parse(c).id),
    ["call_0"],
  );
  const results = Session.events(session).flatMap((e) =>
    isSurfaceEvent(e) && e.type === "tool/result"
      ? [e.data.message.source.callId]
      : []
  );
  assert.deepEqual(results, ["call_0", "call_0_1", "call_0_2"]);
});

Deno.test("the same call id twice in one answer runs both calls", async () => {
  const { outcomes, session, runs } = await turns([
    {
      parts: [
        call("call_0", "read", { path: "a" }),
        call("call_0", "read", { path: "b" }),
        finish("tool-calls"),
      ],
    },
    { parts: [...text("both read"), finish("stop")] },
  ], 1);
  assert.equal(outcomes[0]?.steps, 2);
  assert.deepEqual(runs, ["a", "b"]);
  assert.deepEqual(callIds(session), ["call_0", "call_0_1"]);
  assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
});
