/**
 * What a harness sees while a turn runs: `onEvent` and `streamTurn` report
 * each event as it happens, the outcome sums the usage the model reported,
 * and a per-turn `system` prompt is recorded in the log.
 */
import {
  deriveMessages,
  Draft,
  openWork,
  Session,
  type SessionHandle,
  SessionStore,
  setSystemPrompt,
} from "@palimpsest/session";
import { eventTypeName } from "@palimpsest/session/schema";
import {
  runTurn,
  type RunTurnOptions,
  streamTurn,
  type TurnEvent,
} from "@palimpsest/session/ai";
import {
  finish,
  layerTempJsonlStore,
  type Script,
  scriptedModel,
  text,
  toolCall,
} from "@palimpsest/session/testing";
import { Chunk, Effect, Exit, Layer, Result, Stream } from "effect";
import { AiError, type Toolkit } from "effect/ai";
import assert from "node:assert/strict";
import { thenFails } from "../_helpers/then.ts";
import { newSession } from "./_session.ts";
import {
  readHandlers as handlers,
  readTools as tools,
  scriptedModelId as model,
} from "./_read_tool.ts";

type Options = Omit<
  RunTurnOptions<Toolkit.Tools<typeof tools>>,
  "handle" | "toolkit" | "model"
>;

/** A fresh store and session, and a way to run turns on it. */
const run = <A, E>(
  script: Script,
  body: (h: {
    readonly handle: SessionHandle;
    readonly turn: (options: Options) => ReturnType<typeof runTurn>;
    readonly stream: (options: Options) => ReturnType<typeof streamTurn>;
  }) => Effect.Effect<A, E, SessionStore>,
) => {
  const scripted = scriptedModel(script);
  const services = Layer.mergeAll(scripted.layer, handlers);
  return Effect.runPromiseExit(
    Effect.gen(function* () {
      const { handle } = yield* newSession();
      const toolkit = yield* Effect.provide(tools, handlers);
      return yield* body({
        handle,
        turn: (options) => runTurn({ handle, toolkit, model, ...options }),
        stream: (options) => streamTurn({ handle, toolkit, model, ...options }),
      }).pipe(Effect.provide(services));
    }).pipe(Effect.scoped, Effect.provide(layerTempJsonlStore())),
  );
};

const ok = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value;
  return assert.fail(`Expected success, got ${String(exit.cause)}`);
};

/** Reads the file, then answers. */
const readThenAnswer: Script = (prompt) =>
  prompt.content.at(-1)?.role === "tool"
    ? [
      ...text("The file says hi."),
      finish("stop", { input: 20, output: 5 }),
    ]
    : [
      ...text("Reading."),
      toolCall("c1", "read", { path: "a.txt" }),
      finish("tool-calls", {
        input: 10,
        output: 2,
        cacheRead: 4,
        reasoning: 1,
      }),
    ];

Deno.test("runTurn reports each event as it happens, in order", async () => {
  const seen: Array<{ event: TurnEvent; logged: ReadonlyArray<string> }> = [];
  const outcome = ok(
    await run(readThenAnswer, ({ handle, turn }) =>
      turn({
        input: "Read a.txt",
        onEvent: (event) =>
          Effect.sync(() => {
            seen.push({
              event,
              logged: Result.getOrThrow(Session.events(handle.session)).map(
                eventTypeName,
              ),
            });
          }),
      })),
  );
  assert.deepEqual(seen.map((s) => s.event.type), [
    "turn-start",
    "step-start",
    "text-delta",
    "tool-call-start",
    "tool-call-end",
    "step-end",
    "step-start",
    "text-delta",
    "step-end",
    "turn-end",
  ]);
  const at = (i: number) => seen[i] ?? assert.fail(`no event ${i}`);
  // The text is reported while it streams: the answer is not in the log yet.
  assert.deepEqual(at(2).event, {
    type: "text-delta",
    turn: 0,
    step: 0,
    id: "t",
    delta: "Reading.",
  });
  assert.equal(at(2).logged.at(-1), "step/start");
  // The call is reported once durable, before the tool runs.
  const started = at(3).event;
  assert.equal(started.type, "tool-call-start");
  assert.equal(at(3).logged.at(-1), "tool/call");
  if (started.type === "tool-call-start") {
    assert.equal(
      Result.getOrThrow(Session.eventAt(outcome.session, started.seq))?.type,
      "tool/call",
    );
    assert.deepEqual(
      [started.callId, started.name, started.arguments],
      ["c1", "read", '{"path":"a.txt"}'],
    );
  }
  const ended = at(4).event;
  assert.equal(ended.type === "tool-call-end" && ended.isError, false);
  assert.equal(at(4).logged.at(-1), "tool/result");
  assert.deepEqual(at(5).event, {
    type: "step-end",
    turn: 0,
    step: 0,
    finishReason: "tool-calls",
    usage: {
      inputTokens: 10,
      outputTokens: 2,
      totalTokens: 12,
      cachedInputTokens: 4,
      reasoningTokens: 1,
    },
  });
  const last = at(9).event;
  assert.ok(last.type === "turn-end");
  assert.equal(last.outcome, outcome);
});

Deno.test("the outcome sums the usage the model reported over the steps", async () => {
  const outcome = ok(
    await run(readThenAnswer, ({ turn }) => turn({ input: "Read a.txt" })),
  );
  assert.deepEqual(outcome.usage, {
    inputTokens: 30,
    outputTokens: 7,
    totalTokens: 37,
    cachedInputTokens: 4,
    reasoningTokens: 1,
  });
});

Deno.test("a model that reports no usage gives an empty usage", async () => {
  const outcome = ok(
    await run(
      () => [...text("Hi."), finish("stop")],
      ({ turn }) => turn({ input: "Hi" }),
    ),
  );
  assert.deepEqual(outcome.usage, {});
});

const big = (handle: SessionHandle) =>
  Effect.flatMap(SessionStore, (store) =>
    store.append(handle, [
      Draft.user("x".repeat(2_000), { id: "u0" }),
      Draft.user("y".repeat(2_000), { id: "u1" }),
    ]));

/**
 * A turn over the big history with a 300-token budget, so it compacts first:
 * the summary model answers `summary`, and each turn event goes to `onEvent`.
 */
const compactingTurn = async (
  summary: string,
  onEvent: (event: TurnEvent) => void,
) =>
  ok(
    await run(
      (_, request) => request.method === "generateText" ? summary : "Done.",
      ({ handle, turn }) =>
        Effect.andThen(
          big(handle),
          turn({
            input: "go on",
            compaction: { maxTokens: 300 },
            onEvent: (event) => Effect.sync(() => onEvent(event)),
          }),
        ),
    ),
  );

Deno.test("runTurn reports a compaction as started and done", async () => {
  const types: string[] = [];
  const outcome = await compactingTurn("Short summary.", (event) => {
    types.push(event.type);
  });
  assert.deepEqual(types.slice(0, 4), [
    "turn-start",
    "step-start",
    "compaction-start",
    "compaction-done",
  ]);
  assert.deepEqual(
    outcome.compactions.map((c) => [c.compacted, c.compactionId]),
    [[true, "c5"]],
  );
});

Deno.test("runTurn reports a refused compaction with its reason", async () => {
  const events: TurnEvent[] = [];
  const outcome = await compactingTurn("   ", (event) => {
    events.push(event);
  });
  const refusal = events.find((e) => e.type === "compaction-refused");
  assert.ok(refusal?.type === "compaction-refused");
  assert.ok(refusal.report.refused !== undefined);
  thenFails(refusal.report.refused, "EmptySummary", { compactionId: "c5" });
  assert.equal(outcome.compactions[0], refusal.report);
  assert.ok(events.some((e) => e.type === "compaction-start"));
});

Deno.test("streamTurn streams the turn's events and ends with its outcome", async () => {
  const events = ok(
    await run(
      readThenAnswer,
      ({ stream }) => Stream.runCollect(stream({ input: "Read a.txt" })),
    ),
  );
  const all = Chunk.toReadonlyArray(Chunk.fromIterable(events));
  assert.deepEqual(
    all.flatMap((e) => e.type === "text-delta" ? [e.delta] : []),
    ["Reading.", "The file says hi."],
  );
  const last = all.at(-1);
  assert.ok(last?.type === "turn-end");
  assert.equal(last.outcome.steps, 2);
  assert.equal(last.outcome.usage.inputTokens, 30);
});

Deno.test("streamTurn fails with the model's error", async () => {
  const down = AiError.make({
    module: "Test",
    method: "streamText",
    reason: new AiError.InternalProviderError({ description: "overloaded" }),
  });
  const exit = await run(
    () => Effect.fail(down),
    ({ stream }) => Stream.runCollect(stream({ input: "Hi" })),
  );
  assert.ok(Exit.isFailure(exit));
  const error = Exit.findErrorOption(exit);
  assert.ok(error._tag === "Some");
  thenFails(error.value, "AiError");
});

Deno.test("a system option is recorded in the log once per change", async () => {
  const outcome = ok(
    await run(() => "Done.", ({ turn }) =>
      Effect.gen(function* () {
        yield* turn({ system: "Be brief.", input: "one" });
        yield* turn({ system: "Be brief.", input: "two" });
        return yield* turn({ system: "Be thorough.", input: "three" });
      })),
  );
  const events = Result.getOrThrow(Session.events(outcome.session));
  const systems = events.filter((e) => e.type === "system/message");
  assert.equal(systems.length, 2);
  // Recorded right after the turn's turn/start, before its input.
  assert.deepEqual(
    events.slice(0, 3).map((e) => e.type),
    ["turn/start", "system/message", "user/message"],
  );
  const [first] = deriveMessages(outcome.session.surface);
  assert.deepEqual(first, {
    id: `system-${systems[1]?.seq}`,
    role: "system",
    content: [{ type: "text", text: "Be thorough." }],
    source: { kind: "plugin", plugin: "system-prompt" },
  });
  // A user input's id still names its own seq.
  const user = events.find((e) => e.type === "user/message");
  assert.equal(
    user?.type === "user/message" && user.data.id,
    `user-${user?.seq}`,
  );
});

Deno.test("every request of a turn is sent with the turn's system prompt", async () => {
  const firsts: string[] = [];
  ok(
    await run(
      (prompt, request) => {
        const head = prompt.content[0];
        firsts.push(head?.role === "system" ? head.content : "(none)");
        return readThenAnswer(prompt, request);
      },
      ({ handle, turn }) =>
        Effect.andThen(
          Effect.flatMap(SessionStore, (store) =>
            store.update(handle, (s) => setSystemPrompt(s, "Old."))),
          turn({ system: "New.", input: "Read a.txt" }),
        ),
    ),
  );
  assert.deepEqual(firsts, ["New.", "New."]);
});

Deno.test("a system option gives a session without a system head one, before its first message", async () => {
  const prompts: string[] = [];
  const outcome = ok(
    await run((prompt) => {
      const head = prompt.content[0];
      prompts.push(head?.role === "system" ? head.content : "(none)");
      return "Done.";
    }, ({ handle, turn }) =>
      Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* store.append(handle, [Draft.user("hello", { id: "u0" })]);
        return yield* turn({ system: "Be brief.", input: "again" });
      })),
  );
  assert.deepEqual(prompts, ["Be brief."]);
  const messages = deriveMessages(outcome.session.surface);
  assert.deepEqual(messages.map((m) => m.role), [
    "system",
    "user",
    "user",
    "assistant",
  ]);
  const prepended = Result.getOrThrow(Session.events(outcome.session)).find((
    e,
  ) => e.type === "system/message");
  assert.equal(
    prepended?.type === "system/message" && prepended.surfaceOp,
    "prepend",
  );
});

Deno.test("stopping a turn's stream interrupts the turn; the next turn closes it", async () => {
  const outcome = ok(
    // The first turn's request never answers: the turn is still open when
    // the stream stops (whether or not its request went out by then).
    await run(
      (prompt, request) =>
        JSON.stringify(prompt).includes("Again")
          ? readThenAnswer(prompt, request)
          : Effect.never,
      ({ handle, stream, turn }) =>
        Effect.gen(function* () {
          const first = yield* Stream.runCollect(
            Stream.take(stream({ input: "Read a.txt" }), 2),
          );
          const seen = Chunk.toReadonlyArray(Chunk.fromIterable(first)).map((
            e,
          ) => e.type);
          assert.deepEqual(seen, ["turn-start", "step-start"]);
          assert.deepEqual(
            openWork(Result.getOrThrow(Session.events(handle.session))).turns
              .map((t) => t.turn),
            [0],
          );
          return yield* turn({ input: "Again" });
        }),
    ),
  );
  assert.ok(outcome.recovered.some((e) => e.type === "turn/end"));
  assert.equal(outcome.turn, 1);
  assert.deepEqual(
    openWork(Result.getOrThrow(Session.events(outcome.session))),
    {
      turns: [],
      compactions: [],
    },
  );
});
