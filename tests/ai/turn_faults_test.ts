/**
 * The turn loop against answers that break its bookkeeping: call ids the
 * provider reuses (within one answer and across turns), and a stream that
 * stalls (the idle timeout, on the `TestClock`).
 */
import {
  checkTranscript,
  deriveMessages,
  isSurfaceEvent,
  Session,
  type Session as SessionValue,
} from "@palimpsest/session";
import { TOOL_NOT_STARTED } from "@palimpsest/session/internal";
import { runTurn, type TurnOutcome } from "@palimpsest/session/ai";
import {
  Deferred,
  type Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Result,
} from "effect";
import type { Response } from "effect/ai";
import { TestClock } from "effect/testing";
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
import { readTools as tools, scriptedModelId as model } from "./_read_tool.ts";

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
  Result.getOrThrow(Session.events(session)).flatMap((e) =>
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
    Result.getOrThrow(Session.events(session)).filter((e) =>
      e.type === "assistant/message"
    )[2];
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
  const results = Result.getOrThrow(Session.events(session)).flatMap((e) =>
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

/**
 * A turn whose answer streams `parts` then goes silent. Once it is silent
 * the clock moves by `early` (when given) and the turn is looked at after
 * a real pause (`doneEarly`), then by `advance`, and the turn is awaited.
 */
const stalled = (
  parts: ReadonlyArray<Response.StreamPartEncoded>,
  advance: Duration.Input,
  options: {
    readonly idleTimeout?: Duration.Input;
    readonly early?: Duration.Input;
  } = {},
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const latch = yield* Deferred.make<void>();
      const scripted = scriptedModel({
        stream: [{ parts, thenHang: latch }],
      });
      const { store, handle } = yield* newSession();
      const toolkit = yield* tools;
      const fiber = yield* Effect.forkChild(
        runTurn({
          handle,
          toolkit,
          model,
          input: "go",
          // One request: a stall cut by the timeout is otherwise retried.
          retry: 0,
          ...(options.idleTimeout === undefined
            ? {}
            : { idleTimeout: options.idleTimeout }),
        }).pipe(Effect.provide(scripted.layer)),
      );
      yield* Deferred.await(latch);
      let doneEarly = false;
      if (options.early !== undefined) {
        yield* TestClock.adjust(options.early);
        // Long enough for the cut answer's appends, were the turn cut.
        yield* Effect.promise(() =>
          new Promise<void>((resolve) => setTimeout(resolve, 200))
        );
        doneEarly = fiber.pollUnsafe() !== undefined;
      }
      yield* TestClock.adjust(advance);
      // A turn the timeout did not cut would wait forever: fail instead.
      const exit = yield* Effect.raceFirst(
        Fiber.await(fiber),
        Effect.andThen(
          Effect.promise(() =>
            new Promise<void>((resolve) => setTimeout(resolve, 10_000))
          ),
          Effect.die("the turn was not cut by the idle timeout"),
        ),
      );
      const session = handle.session;
      yield* store.close(handle);
      return { exit, session, doneEarly };
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(
        tempStore(),
        TestClock.layer(),
        tools.toLayer({ read: () => Effect.succeed("never") }),
      )),
    ),
  );

Deno.test("a stream silent for the idle timeout is cut and its calls are not run", async () => {
  const { exit, session } = await stalled(
    [...text("Reading"), call("c1", "read", { path: "a" })],
    "90 seconds",
    { idleTimeout: "90 seconds" },
  );
  assert.ok(Exit.isFailure(exit));
  const error = Exit.findErrorOption(exit);
  assert.ok(error._tag === "Some");
  assert.equal(error.value._tag, "AiError");
  assert.ok(error.value._tag === "AiError");
  assert.equal(error.value.reason._tag, "NetworkError");
  const events = Result.getOrThrow(Session.events(session));
  const answer = events.find((e) => e.type === "assistant/message");
  assert.ok(answer?.type === "assistant/message");
  assert.equal(answer.data.interrupted, true);
  const result = events.find((e) => e.type === "tool/result");
  assert.ok(result?.type === "tool/result");
  assert.equal(result.data.error?.code, TOOL_NOT_STARTED);
  assert.deepEqual(
    events.flatMap((e) => e.type === "turn/end" ? [e.data.reason.kind] : []),
    ["error"],
  );
  assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
});

Deno.test("the idle timeout is 5 minutes by default", async () => {
  const { exit, doneEarly } = await stalled([...text("Hm")], "1 second", {
    early: "299 seconds",
  });
  assert.equal(doneEarly, false);
  assert.ok(Exit.isFailure(exit));
});

Deno.test("the idle timeout counts the wait for the first part", async () => {
  const { exit, session } = await stalled([], "2 seconds", {
    idleTimeout: "2 seconds",
  });
  assert.ok(Exit.isFailure(exit));
  assert.ok(
    Result.getOrThrow(Session.events(session)).some((e) =>
      e.type === "assistant/attempt"
    ),
  );
});
