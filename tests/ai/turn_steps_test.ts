/**
 * The turn loop's steps, each run alone on a turn's state: given a session
 * and a state `startTurn` built, when one step runs, then the events it
 * appended, the `TurnEvent`s it told and what it returned or failed with.
 */
import {
  Draft,
  layerMemoryStore,
  Session,
  type SessionHandle,
  SessionStore,
} from "@palimpsest/session";
import { eventTypeName } from "@palimpsest/session/schema";
import { TOOL_NOT_FOUND, type TurnEvent } from "@palimpsest/session/ai";
import { Effect, Layer, Result, type Scope } from "effect";
import type { Toolkit } from "effect/ai";
import type { Read as ReadTool } from "./_read_tool.ts";
import assert from "node:assert/strict";
import {
  call,
  finish,
  providerDown,
  scriptedModel,
  text,
} from "./_scripted.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";
import { newSession } from "./_session.ts";
import { readTools as tools, scriptedModelId as model } from "./_read_tool.ts";
import {
  beginStep,
  finishStep,
  recoverOpenWork,
  runCall,
  startTurn,
} from "../../src/ai/turn_steps.ts";
import { appendAnswer, recoverOverflow } from "../../src/ai/turn_request.ts";
import type { TimedPart } from "../../src/ai/record.ts";

const typesAfter = (handle: SessionHandle, from: number): string[] =>
  Result.getOrThrow(Session.events(handle.session))
    .filter((event) => event.seq >= from)
    .map(eventTypeName);

const timed = (
  chunks: ReadonlyArray<TimedPart["chunk"]>,
): ReadonlyArray<TimedPart> => chunks.map((chunk) => ({ time: 0, chunk }));

const layer = () =>
  Layer.mergeAll(
    layerMemoryStore(),
    scriptedModel({}).layer,
    tools.toLayer({ read: () => Effect.succeed("text") }),
  );

/** Runs `body` on a fresh session with the toolkit; it must succeed. */
const given = async <A, E>(
  body: (given: {
    readonly handle: SessionHandle;
    readonly told: TurnEvent[];
    readonly toolkit: Toolkit.WithHandler<{ readonly read: typeof ReadTool }>;
  }) => Effect.Effect<
    A,
    E,
    Layer.Success<ReturnType<typeof layer>> | Scope.Scope
  >,
): Promise<A & { readonly told: ReadonlyArray<TurnEvent> }> => {
  const program = Effect.gen(function* () {
    const { handle } = yield* newSession();
    const toolkit = yield* tools;
    const told: TurnEvent[] = [];
    return { ...(yield* body({ handle, told, toolkit })), told };
  });
  return await Effect.runPromise(
    Effect.scoped(program).pipe(Effect.provide(layer())),
  );
};

const onEvent = (told: TurnEvent[]) => (event: TurnEvent) =>
  Effect.sync(() => {
    told.push(event);
  });

Deno.test("finishStep ends the turn on an answer without calls, counting the steps", async () => {
  const { outcome, types, told } = await given(({ handle, told, toolkit }) =>
    Effect.gen(function* () {
      const state = yield* startTurn({
        handle,
        toolkit,
        model,
        input: "Hi",
        onEvent: onEvent(told),
      }, []);
      const step = yield* beginStep(state, 2);
      const from = Session.nextSeq(handle.session);
      const { answer } = yield* appendAnswer(
        state,
        2,
        timed([...text("Hello"), finish("length")]),
        false,
      );
      const outcome = yield* finishStep(state, step, answer);
      return { outcome, types: typesAfter(handle, from) };
    })
  );
  assert.deepEqual(types, ["assistant/message", "step/end", "turn/end"]);
  assert.equal(outcome?.steps, 3);
  assert.equal(outcome?.reason, "max-tokens");
  assert.equal(outcome?.stoppedBy, "model");
  assert.deepEqual(told.map((event) => event.type), [
    "turn-start",
    "step-start",
    "step-end",
    "turn-end",
  ]);
});

Deno.test("runCall answers an unknown tool with an error result; finishStep goes on", async () => {
  const { outcome, types, code, told } = await given((
    { handle, told, toolkit },
  ) =>
    Effect.gen(function* () {
      const state = yield* startTurn({
        handle,
        toolkit,
        model,
        onEvent: onEvent(told),
      }, []);
      const step = yield* beginStep(state, 0);
      const { answer } = yield* appendAnswer(
        state,
        0,
        timed([call("c1", "nope"), finish("tool-calls")]),
        false,
      );
      const from = Session.nextSeq(handle.session);
      yield* runCall(state, 0, answer, 0);
      const outcome = yield* finishStep(state, step, answer);
      const result = Result.getOrThrow(Session.events(handle.session))
        .find((event) => event.type === "tool/result");
      const code = result?.type === "tool/result"
        ? result.data.error?.code
        : undefined;
      return { outcome, types: typesAfter(handle, from), code };
    })
  );
  assert.equal(outcome, undefined);
  assert.deepEqual(types, ["tool/call", "tool/result", "step/end"]);
  assert.equal(code, TOOL_NOT_FOUND);
  assert.deepEqual(told.map((event) => event.type), [
    "turn-start",
    "step-start",
    "tool-call-start",
    "tool-call-end",
    "step-end",
  ]);
});

Deno.test("recoverOverflow without a compaction policy ends the turn with the error", async () => {
  const error = providerDown();
  const { exit, types } = await given(({ handle, toolkit }) =>
    Effect.gen(function* () {
      const state = yield* startTurn({ handle, toolkit, model }, []);
      yield* beginStep(state, 0);
      const from = Session.nextSeq(handle.session);
      const exit = yield* Effect.exit(recoverOverflow(state, {
        step: 0,
        error,
        messages: [],
        overflows: 0,
      }));
      return { exit, types: typesAfter(handle, from) };
    })
  );
  assert.equal(failureOf(exit), error);
  assert.deepEqual(types, ["step/end", "turn/end"]);
});

Deno.test("recoverOpenWork refuses a turn a crash left open and writes nothing", async () => {
  const { exit, wrote } = await given(({ handle }) =>
    Effect.gen(function* () {
      const store = yield* SessionStore;
      yield* store.append(handle, [Draft.turnStart(0)]);
      const before = Session.nextSeq(handle.session);
      const exit = yield* Effect.exit(recoverOpenWork(handle, "refuse"));
      return { exit, wrote: Session.nextSeq(handle.session) - before };
    })
  );
  thenFails(failureOf(exit), "TurnInProgress", { turn: 0, live: false });
  assert.equal(wrote, 0);
});
