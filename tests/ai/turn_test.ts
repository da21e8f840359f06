import {
  type AssistantMessageEvent,
  checkTranscript,
  deriveMessages,
  Draft,
  isSurfaceEvent,
  makeJsonlStore,
  openWork,
  Session,
  type Session as SessionValue,
  type SessionEvent,
  type SessionHandle,
  SessionStore,
  type ToolResultEvent,
} from "@palimpsest/session";
import { eventTypeName } from "@palimpsest/session/schema";
import {
  interruptedTurnClosers,
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
} from "@palimpsest/session/internal";
import {
  compactIfNeeded,
  INVALID_ARGUMENTS,
  runTurn,
  type RunTurnOptions,
  TOOL_FAILED,
  TOOL_NOT_FOUND,
  type TurnError,
  type TurnOutcome,
} from "@palimpsest/session/ai";
import { Deferred, Effect, Fiber, Layer, Result, Schema } from "effect";
import { Tool, Toolkit } from "effect/ai";
import assert from "node:assert/strict";
import {
  call,
  finish,
  providerDown,
  scriptedModel,
  type StreamReply,
  tempStore,
  text,
} from "./_scripted.ts";
import { thenFails } from "../_helpers/then.ts";
import { toolResultMessageDraft } from "../_helpers/build.ts";
import { tempDir } from "../_helpers/store.ts";
import { newSession } from "./_session.ts";
import { Read } from "./_read_tool.ts";

const Broken = Tool.make("broken", {
  success: Schema.String,
  failure: Schema.String,
});
const Slow = Tool.make("slow", { success: Schema.String });
const tools = Toolkit.make(Read, Broken, Slow);

const model = { provider: "scripted", model: "test-1" };
const types = (session: SessionValue): string[] =>
  Result.getOrThrow(Session.events(session)).map(eventTypeName);
const eventsOf = (session: SessionValue, type: string): SessionEvent[] =>
  Result.getOrThrow(Session.events(session)).filter((e) => e.type === type);
const answers = (session: SessionValue): AssistantMessageEvent[] =>
  Result.getOrThrow(Session.events(session)).flatMap((e) =>
    isSurfaceEvent(e) && e.type === "assistant/message" ? [e] : []
  );
const results = (
  events: ReadonlyArray<SessionEvent>,
): ToolResultEvent[] =>
  events.flatMap((e) =>
    isSurfaceEvent(e) && e.type === "tool/result" ? [e] : []
  );

type Turn = (
  options?: Partial<RunTurnOptions<Toolkit.Tools<typeof tools>>>,
) => Effect.Effect<TurnOutcome, TurnError, SessionStore>;

interface Harness {
  /** Runs a turn on the session. */
  readonly turn: Turn;
  /** Opened when the slow tool starts. */
  readonly slowStarted: Deferred.Deferred<void>;
  /** The writer. */
  readonly handle: SessionHandle;
  /** The session as a new reader sees it on disk. */
  readonly reread: Effect.Effect<SessionValue, unknown, SessionStore>;
}

/** Runs `body` with a fresh store, the scripted model and the tools. */
const run = <A, E>(
  stream: ReadonlyArray<StreamReply>,
  body: (harness: Harness) => Effect.Effect<A, E, SessionStore>,
): Promise<A> => {
  const scripted = scriptedModel({ stream });
  return Effect.runPromise(
    Effect.gen(function* () {
      const slowStarted = yield* Deferred.make<void>();
      const handlers = tools.toLayer({
        read: ({ path }) => Effect.succeed(`contents of ${path}`),
        broken: () => Effect.fail("disk full"),
        slow: () =>
          Effect.andThen(
            Deferred.succeed(slowStarted, undefined),
            Effect.never,
          ),
      });
      const { store, handle } = yield* newSession();
      const toolkit = yield* Effect.provide(tools, handlers);
      const turn: Turn = (options) =>
        runTurn({ handle, toolkit, model, ...options }).pipe(
          Effect.provide(Layer.merge(scripted.layer, handlers)),
        );
      const reread = Effect.map(
        Effect.scoped(store.open("s")),
        (reader) => reader.session,
      );
      return yield* body({ turn, slowStarted, handle, reread }).pipe(
        Effect.ensuring(store.close(handle)),
      );
    }).pipe(Effect.scoped, Effect.provide(tempStore())),
  );
};

Deno.test("runTurn records each step, runs the tool and cites its call", async () => {
  const outcome = await run(
    [
      {
        parts: [
          ...text("Reading it."),
          call("c1", "read", { path: "a.txt" }),
          finish("tool-calls"),
        ],
      },
      { parts: [...text("It says hello."), finish()] },
    ],
    ({ turn }) => turn({ input: "What is in a.txt?" }),
  );
  assert.equal(outcome.turn, 0);
  assert.equal(outcome.steps, 2);
  assert.equal(outcome.reason, "completed");
  assert.equal(outcome.stoppedBy, "model");
  assert.deepEqual(types(outcome.session), [
    "turn/start",
    "user/message",
    "step/start",
    "assistant/message",
    "tool/call",
    "tool/result",
    "step/end",
    "step/start",
    "assistant/message",
    "step/end",
    "turn/end",
  ]);
  const [callEvent] = eventsOf(outcome.session, "tool/call");
  const [result] = results(Result.getOrThrow(Session.events(outcome.session)));
  assert.ok(callEvent !== undefined && result !== undefined);
  assert.deepEqual(result.sourceEventSeqs, [callEvent.seq]);
  assert.deepEqual(callEvent.data, {
    turn: 0,
    step: 0,
    callId: "c1",
    name: "read",
    arguments: '{"path":"a.txt"}',
  });
  const [first] = answers(outcome.session);
  assert.ok(first !== undefined);
  assert.equal(first.data.stream.length, 5);
  assert.equal(first.data.interrupted, undefined);
  assert.deepEqual(first.data.message.source, { kind: "model", ...model });
  const messages = deriveMessages(outcome.session.surface);
  assert.deepEqual(checkTranscript(messages), []);
  assert.deepEqual(messages.at(2)?.content, [{
    type: "tool-result",
    toolCallId: "c1",
    content: [{ type: "text", text: "contents of a.txt" }],
  }]);
});

Deno.test("runTurn numbers turns after the last turn/start", async () => {
  const second = await run(
    [],
    ({ turn }) =>
      Effect.andThen(turn({ input: "one" }), turn({ input: "two" })),
  );
  assert.equal(second.turn, 1);
  assert.deepEqual(checkTranscript(deriveMessages(second.session.surface)), []);
});

Deno.test("a failing tool becomes an error result and the turn goes on", async () => {
  const outcome = await run(
    [
      {
        parts: [
          call("c1", "broken"),
          call("c2", "nope"),
          call("c3", "read", { file: 1 }),
          finish("tool-calls"),
        ],
      },
      { parts: [...text("Those failed."), finish()] },
    ],
    ({ turn }) => turn({ input: "go" }),
  );
  assert.equal(outcome.reason, "completed");
  const codes = results(Result.getOrThrow(Session.events(outcome.session))).map(
    (e) => [
      e.data.message.content[0].isError,
      e.data.error?.code,
    ],
  );
  assert.deepEqual(codes, [
    [true, TOOL_FAILED],
    [true, TOOL_NOT_FOUND],
    [true, INVALID_ARGUMENTS],
  ]);
  assert.deepEqual(
    checkTranscript(deriveMessages(outcome.session.surface)),
    [],
  );
});

Deno.test("a model that fails ends the turn with reason error and fails", async () => {
  const { error, session } = await run(
    [{ fail: providerDown() }],
    ({ turn }) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(turn({ input: "hi", retry: 0 }));
        const store = yield* SessionStore;
        const reread = yield* Effect.scoped(store.open("s"));
        return { error, session: reread.session };
      }),
  );
  thenFails(thenFails(error, "AiError").reason, "InternalProviderError");
  assert.deepEqual(types(session), [
    "turn/start",
    "user/message",
    "step/start",
    "assistant/attempt",
    "step/end",
    "turn/end",
  ]);
  const [end] = eventsOf(session, "turn/end");
  assert.deepEqual(end?.data, {
    turn: 0,
    reason: {
      kind: "error",
      error: {
        _tag: "AiError",
        reason: "InternalProviderError",
        message: error.message,
      },
    },
  });
});

Deno.test("an answer cut by a model error keeps its text and answers its calls", async () => {
  const { error, session } = await run(
    [{
      parts: [...text("Let me look."), call("c1", "read", { path: "x" })],
      thenFail: providerDown(),
    }],
    ({ turn, reread }) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(turn({ input: "hi", retry: 0 }));
        return { error, session: yield* reread };
      }),
  );
  thenFails(error, "AiError");
  const [message] = answers(session);
  assert.ok(message !== undefined);
  assert.equal(message.data.interrupted, true);
  const [closer] = results(Result.getOrThrow(Session.events(session)));
  assert.ok(closer !== undefined);
  assert.equal(closer.data.error?.code, TOOL_NOT_STARTED);
  assert.deepEqual(closer.sourceEventSeqs, [message.seq]);
  assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
});

Deno.test("runTurn stops at the step limit", async () => {
  const loop: StreamReply = {
    parts: [call("c", "read", { path: "a" }), finish("tool-calls")],
  };
  const outcome = await run(
    [loop, loop, loop],
    ({ turn }) => turn({ input: "go", maxSteps: 2 }),
  );
  assert.equal(outcome.steps, 2);
  assert.equal(outcome.stoppedBy, "step-limit");
  assert.equal(outcome.reason, "aborted");
  assert.deepEqual(eventsOf(outcome.session, "turn/end").map((e) => e.data), [
    { turn: 0, reason: { kind: "aborted" } },
  ]);
});

const interruptedThenRepaired = (
  stream: ReadonlyArray<StreamReply>,
  started: (harness: Harness) => Effect.Effect<void>,
) =>
  run(stream, (harness) =>
    Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(harness.turn({ input: "go" }));
      yield* started(harness);
      yield* Fiber.interrupt(fiber);
      const before = yield* harness.reread;
      const store = yield* SessionStore;
      const { closers, session } = yield* store.repair(harness.handle);
      return { before, closers, after: yield* harness.reread, session };
    }));

/**
 * The first result among `closers` answers with error `code`, and the
 * repaired log derives a clean transcript.
 */
const assertRepairedWith = (
  closers: ReadonlyArray<SessionEvent>,
  after: SessionValue,
  code: string,
): void => {
  const [closer] = results(closers);
  assert.ok(closer !== undefined);
  assert.equal(closer.data.error?.code, code);
  assert.deepEqual(checkTranscript(deriveMessages(after.surface)), []);
};

Deno.test("a turn interrupted mid-tool leaves a log that repair closes", async () => {
  const { before, closers, after } = await interruptedThenRepaired(
    [{ parts: [call("c1", "slow"), finish("tool-calls")] }],
    ({ slowStarted }) => Deferred.await(slowStarted),
  );
  assert.equal(types(before).at(-1), "tool/call");
  assert.deepEqual(closers.map((e) => e.type), [
    "tool/result",
    "step/end",
    "turn/end",
  ]);
  assertRepairedWith(closers, after, TOOL_OUTCOME_UNKNOWN);
});

Deno.test("a turn interrupted mid-answer keeps the cut answer and repairs clean", async () => {
  const latch = Effect.runSync(Deferred.make<void>());
  const { before, closers, after } = await interruptedThenRepaired(
    [{
      parts: [...text("Partial"), call("c9", "read", { path: "p" })],
      thenHang: latch,
    }],
    () => Deferred.await(latch),
  );
  const [message] = answers(before);
  assert.ok(message !== undefined);
  assert.equal(message.data.interrupted, true);
  assert.deepEqual(message.data.message.content[0], {
    type: "text",
    text: "Partial",
  });
  assertRepairedWith(closers, after, TOOL_NOT_STARTED);
});

Deno.test("a turn interrupted before any answer part records an attempt", async () => {
  const latch = Effect.runSync(Deferred.make<void>());
  const { before, after } = await interruptedThenRepaired(
    [{ parts: [], thenHang: latch }],
    () => Deferred.await(latch),
  );
  assert.equal(types(before).at(-1), "assistant/attempt");
  assert.equal(types(after).at(-1), "turn/end");
  assert.deepEqual(checkTranscript(deriveMessages(after.surface)), []);
});

/**
 * A JSONL store whose `append` number `cut` interrupts the calling fiber
 * instead of writing: the turn is stopped right before that durable write.
 */
const cuttingStore = (cut: number) =>
  Layer.effect(
    SessionStore,
    Effect.map(
      makeJsonlStore({ root: tempDir("palimpsest-cut-") }),
      (store): SessionStore => {
        let appends = 0;
        return {
          ...store,
          append: (handle, drafts) =>
            appends++ === cut ? Effect.interrupt : store.append(handle, drafts),
        };
      },
    ),
  );

Deno.test("a turn interrupted before any of its writes leaves a log that repair closes", async () => {
  const script: ReadonlyArray<StreamReply> = [
    {
      parts: [
        ...text("Looking."),
        call("c1", "read", { path: "a" }),
        call("c2", "broken"),
        finish("tool-calls"),
      ],
    },
    { parts: [...text("Done."), finish()] },
  ];
  const handlers = tools.toLayer({
    read: ({ path }) => Effect.succeed(`contents of ${path}`),
    broken: () => Effect.fail("disk full"),
    slow: () => Effect.never,
  });
  let completed = false;
  // Write 0 creates nothing (the session exists); the turn's writes follow.
  for (let cut = 1; !completed; cut++) {
    const scripted = scriptedModel({ stream: script });
    const { exit, after } = await Effect.runPromise(
      Effect.gen(function* () {
        const { store, handle } = yield* newSession([]);
        const toolkit = yield* Effect.provide(tools, handlers);
        const exit = yield* Effect.exit(
          runTurn({ handle, toolkit, model, input: "go" }).pipe(
            Effect.provide(Layer.merge(scripted.layer, handlers)),
          ),
        );
        yield* store.repair(handle);
        yield* store.close(handle);
        const reader = yield* store.open("s");
        return { exit, after: reader.session };
      }).pipe(Effect.scoped, Effect.provide(cuttingStore(cut))),
    );
    completed = exit._tag === "Success";
    assert.deepEqual(
      interruptedTurnClosers(Result.getOrThrow(Session.events(after))),
      [],
      `cut ${cut}`,
    );
    assert.deepEqual(
      checkTranscript(deriveMessages(after.surface)),
      [],
      `cut ${cut}`,
    );
    assert.ok(cut < 50, "the turn never completed");
  }
});

/** Starts a turn, stops it while the slow tool runs: the turn stays open. */
const crashMidTool = (harness: Harness) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(harness.turn({ input: "go" }));
    yield* Deferred.await(harness.slowStarted);
    yield* Fiber.interrupt(fiber);
  });

/** Runs `body` once a turn calling the slow tool has crashed mid-tool. */
const afterCrash = <A, E>(
  body: (harness: Harness) => Effect.Effect<A, E, SessionStore>,
): Promise<A> =>
  run(
    [{ parts: [call("c1", "slow"), finish("tool-calls")] }],
    (harness) => Effect.andThen(crashMidTool(harness), body(harness)),
  );

Deno.test("runTurn on a crashed turn closes it first, as repair records it", async () => {
  const { outcome, expected, repairedAgain } = await afterCrash(
    (harness) =>
      Effect.gen(function* () {
        const expected = interruptedTurnClosers(
          Result.getOrThrow(Session.events(harness.handle.session)),
        );
        // The harness restarts and calls runTurn, nothing else.
        const outcome = yield* harness.turn({ input: "again" });
        const store = yield* SessionStore;
        const repairedAgain = yield* store.repair(harness.handle);
        return { outcome, expected, repairedAgain };
      }),
  );
  const events = Result.getOrThrow(Session.events(outcome.session));
  assert.deepEqual(openWork(events), { turns: [], compactions: [] });
  assert.deepEqual(
    checkTranscript(deriveMessages(outcome.session.surface)),
    [],
  );
  assert.deepEqual(repairedAgain.closers, []);
  // The new turn starts after the old one ended, never inside it.
  const newStart = events.findIndex((e) =>
    e.type === "turn/start" && e.data.turn === 1
  );
  const oldEnd = events.findIndex((e) =>
    e.type === "turn/end" && e.data.turn === 0
  );
  assert.ok(oldEnd >= 0 && oldEnd < newStart);
  assert.equal(outcome.turn, 1);
  assert.equal(outcome.reason, "completed");
  // Recorded as repair records it, and reported.
  assert.deepEqual(outcome.recovered.map((e) => e.type), [
    "tool/result",
    "step/end",
    "turn/end",
  ]);
  assert.deepEqual(
    outcome.recovered.map((e) => [e.type, e.data, e.sourceEventSeqs]),
    expected.map((e) => [e.type, e.data, e.sourceEventSeqs]),
  );
});

Deno.test("runTurn with onOpen refuse fails on a crashed turn and writes nothing", async () => {
  const { error, before, after } = await afterCrash(
    (harness) =>
      Effect.gen(function* () {
        const before = Session.nextSeq(harness.handle.session);
        const error = yield* Effect.flip(
          harness.turn({ input: "again", onOpen: "refuse" }),
        );
        return {
          error,
          before,
          after: Session.nextSeq(harness.handle.session),
        };
      }),
  );
  thenFails(error, "TurnInProgress", { turn: 0, startSeq: 0, live: false });
  assert.equal(after, before);
});

Deno.test("runTurn refuses to start while another turn runs on the handle", async () => {
  const { error, openTurns } = await run(
    [{ parts: [call("c1", "slow"), finish("tool-calls")] }],
    (harness) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(harness.turn({ input: "go" }));
        yield* Deferred.await(harness.slowStarted);
        const error = yield* Effect.flip(harness.turn({ input: "again" }));
        const store = yield* SessionStore;
        // A running turn is live: repair leaves it open too.
        const { closers } = yield* store.repair(harness.handle);
        const openTurns =
          openWork(Result.getOrThrow(Session.events(harness.handle.session)))
            .turns;
        yield* Fiber.interrupt(fiber);
        assert.deepEqual(closers, []);
        return { error, openTurns };
      }),
  );
  thenFails(error, "TurnInProgress", { turn: 0, startSeq: 0, live: true });
  assert.deepEqual(openTurns.map((t) => t.turn), [0]);
});

Deno.test("runTurn closes a compaction a crash left open and compacts again", async () => {
  const outcome = await run(
    [],
    ({ turn, handle }) =>
      Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* store.append(handle, [
          Draft.user("x".repeat(2_000), { id: "u0" }),
          Draft.user("y".repeat(2_000), { id: "u1" }),
          // What a process killed while the model wrote the summary leaves.
          { type: "compaction/start", data: { compactionId: "c2", turn: 0 } },
        ]);
        return yield* turn({ input: "go on", compaction: { maxTokens: 300 } });
      }),
  );
  assert.equal(outcome.session.surface.replacements, 1);
  assert.deepEqual(
    openWork(Result.getOrThrow(Session.events(outcome.session))),
    {
      turns: [],
      compactions: [],
    },
  );
  assert.deepEqual(outcome.recovered.map((e) => [e.type, e.data]), [
    ["compaction/end", { compactionId: "c2", error: { _tag: "Abandoned" } }],
  ]);
  assert.deepEqual(
    outcome.compactions.map((c) => [c.step, c.compacted, c.refused]),
    [[0, true, undefined]],
  );
});

Deno.test("a compaction held by a running compaction is reported in the turn's outcome", async () => {
  const latch = Effect.runSync(Deferred.make<void>());
  const scripted = scriptedModel({ text: [{ hang: latch }] });
  const outcome = await Effect.runPromise(
    Effect.gen(function* () {
      const { store, handle } = yield* newSession();
      yield* store.append(handle, [
        Draft.user("x".repeat(2_000), { id: "u0" }),
        Draft.user("y".repeat(2_000), { id: "u1" }),
      ]);
      const compaction = { maxTokens: 300 };
      const running = yield* Effect.forkChild(
        compactIfNeeded({ handle, ...compaction }),
      );
      yield* Deferred.await(latch);
      const toolkit = yield* Toolkit.empty;
      const outcome = yield* runTurn({
        handle,
        toolkit,
        model,
        input: "go on",
        compaction,
      });
      yield* Fiber.interrupt(running);
      return outcome;
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.merge(scripted.layer, tempStore())),
    ),
  );
  assert.deepEqual(outcome.recovered, []);
  const [report] = outcome.compactions;
  assert.ok(report?.refused !== undefined);
  thenFails(report.refused, "CompactionInProgress", {
    compactionId: "c2",
    live: true,
  });
});

Deno.test("runTurn reports each result the pairing pass leaves out of a request", async () => {
  const late = toolResultMessageDraft(0, 0, "r-ghost", {
    type: "tool-result",
    toolCallId: "ghost",
    content: [{ type: "text", text: "late" }],
  });
  const { clean, repaired } = await run(
    [{ parts: [...text("One."), finish()] }, {
      parts: [...text("Two."), finish()],
    }],
    ({ turn, handle }) =>
      Effect.gen(function* () {
        const clean = yield* turn({ input: "first" });
        const store = yield* SessionStore;
        yield* store.append(handle, [late]);
        const repaired = yield* turn({ input: "second" });
        return { clean, repaired };
      }),
  );
  assert.deepEqual(clean.repairs, []);
  // The result answers no call the model saw: left out, and said so.
  const messages = deriveMessages(repaired.session.surface);
  const ghost = messages.findIndex((m) => m.id === "r-ghost");
  assert.ok(ghost > 0);
  assert.deepEqual(repaired.repairs, [{
    step: 0,
    repairs: [{
      _tag: "DroppedToolResult",
      callId: "ghost",
      reason: "unknown",
      messageIndex: ghost,
      blockIndex: 0,
    }],
  }]);
});
