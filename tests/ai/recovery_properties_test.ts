/**
 * The law: no public operation writes a log that `store.repair` cannot
 * make clean.
 *
 * A harness runs random sequences of the library's operations on one
 * session: user messages appended through `Draft`, turns it writes itself
 * through `Draft` (closing an open turn first, as the docs ask), `runTurn`
 * with a scripted model (tool calls, failing requests, overloaded ones it
 * retries, compaction with good, empty, oversized, failing and overloaded
 * summaries), `compactIfNeeded`, prunes,
 * system-prompt changes and `store.repair`. Crashes fall between and
 * inside them: a crash drops the handle without closing anything and
 * reopens the session; a cut stops an operation at one of its store writes,
 * either as an interruption (finalizers run and write) or as a death
 * (nothing written after the cut, as under SIGKILL). After the sequence,
 * `store.repair` leaves a clean transcript (`checkTranscript` of the
 * derived messages finds nothing; `pairToolCalls` neither synthesizes nor
 * drops anything, and moves a result only where the harness appended a
 * message between a call and its answer), nothing open
 * (`openWork`), and a second repair appends nothing. Along the way: no
 * operation dies with a defect, and a `runTurn` that succeeds leaves no
 * turn open (it never nests).
 */
import {
  checkTranscript,
  deriveMessages,
  Draft,
  type EventDraft,
  isSurfaceEvent,
  makeMemoryStore,
  openWork,
  pruneToolResult,
  Session,
  type SessionHandle,
  SessionStore,
  setSystemPrompt,
  StorageError,
} from "@palimpsest/session";
import { compactIfNeeded, runTurn } from "@palimpsest/session/ai";
import { pairToolCalls } from "@palimpsest/session/providers";
import { Cause, Effect, Exit, Layer, Result, Schedule, Stream } from "effect";
import { AiError, LanguageModel, type Response } from "effect/ai";
import fc from "fast-check";
import assert from "node:assert/strict";
import { readTools as tools } from "./_read_tool.ts";

const SEED = 20261203;
/** Sequences checked per run of the suite. */
export const RUNS = 300;

const handlers = tools.toLayer({
  read: ({ path }) => Effect.succeed(`contents of ${path} `.repeat(60)),
});

const usage = { inputTokens: {}, outputTokens: {} };

/** One reply of the scripted model to a streamed request. */
type Reply =
  | "text"
  | "call"
  | "two-calls"
  | "fail"
  | "overflow"
  | "overloaded";
/** One reply to a summary request. */
type Summary = "good" | "empty" | "blank" | "huge" | "fail" | "overloaded";
/** Up to `maxLength` replies to summary requests, of every kind. */
const summariesArb = (maxLength: number): fc.Arbitrary<Array<Summary>> =>
  fc.array(
    fc.constantFrom<Summary>(
      "good",
      "empty",
      "blank",
      "huge",
      "fail",
      "overloaded",
    ),
    { maxLength },
  );

const partsOf = (
  reply: Reply,
  n: number,
): ReadonlyArray<Response.StreamPartEncoded> => {
  const call = (id: string): Response.StreamPartEncoded => ({
    type: "tool-call",
    id,
    name: "read",
    params: { path: `f${id}` },
  });
  switch (reply) {
    case "call":
      return [call(`k${n}`), { type: "finish", reason: "tool-calls", usage }];
    case "two-calls":
      return [
        { type: "text-delta", id: "t", delta: "Reading both." },
        call(`k${n}a`),
        call(`k${n}b`),
        { type: "finish", reason: "tool-calls", usage },
      ];
    default:
      return [
        { type: "text-delta", id: "t", delta: `Answer ${n}. `.repeat(40) },
        { type: "finish", reason: "stop", usage },
      ];
  }
};

const modelError = (description: string) =>
  AiError.make({
    module: "Scripted",
    method: "streamText",
    reason: new AiError.InvalidRequestError({ description }),
  });

/** A provider too busy to answer (HTTP 529): retried. */
const overloaded = () =>
  AiError.make({
    module: "Scripted",
    method: "streamText",
    reason: new AiError.InternalProviderError({
      description: "overloaded",
      http: { response: { status: 529, headers: {} } },
    }),
  });

/** Retries without waiting, so the sequences stay fast. */
const retry = Schedule.recurs(2);

/** Numbers answers across models, so call ids are unique as providers make them. */
let answers = 0;

/** A model that plays the queued replies; past them it answers in text. */
const scripted = (
  replies: Reply[],
  summaries: Summary[],
): Layer.Layer<LanguageModel.LanguageModel> => {
  return Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () =>
        Effect.suspend(() => {
          const summary = summaries.shift() ?? "good";
          switch (summary) {
            case "fail":
              return Effect.fail(modelError("summary refused"));
            case "overloaded":
              return Effect.fail(overloaded());
            case "empty":
              return Effect.succeed([{ type: "text" as const, text: "" }]);
            case "blank":
              return Effect.succeed([{ type: "text" as const, text: " \n " }]);
            case "huge":
              return Effect.succeed([{
                type: "text" as const,
                text: "s".repeat(50_000),
              }]);
            default:
              return Effect.succeed([{ type: "text" as const, text: "Sum." }]);
          }
        }),
      streamText: () =>
        Stream.unwrap(Effect.sync(() => {
          const reply = replies.shift() ?? "text";
          const n = ++answers;
          if (reply === "fail") return Stream.fail(modelError("refused"));
          if (reply === "overloaded") return Stream.fail(overloaded());
          if (reply === "overflow") {
            return Stream.fail(modelError("prompt is too long"));
          }
          return Stream.fromIterable(partsOf(reply, n));
        })),
    }),
  );
};

/** How an operation is stopped at one of its writes. */
interface Cut {
  /** The write (0-based, counted within the operation) that is stopped. */
  readonly at: number;
  /** `interrupt`: finalizers run; `die`: nothing is written after. */
  readonly how: "interrupt" | "die";
}

type Op =
  | { readonly kind: "user"; readonly text: string }
  | {
    readonly kind: "own-turn";
    readonly calls: number;
    readonly cut: Cut | undefined;
  }
  | {
    readonly kind: "turn";
    readonly replies: Reply[];
    readonly summaries: Summary[];
    readonly budget: boolean;
    readonly cut: Cut | undefined;
  }
  | {
    readonly kind: "compact";
    readonly summaries: Summary[];
    readonly cut: Cut | undefined;
  }
  | { readonly kind: "prune" }
  | { readonly kind: "system"; readonly text: string }
  | { readonly kind: "repair" }
  | { readonly kind: "crash" };

const cutArb: fc.Arbitrary<Cut | undefined> = fc.option(
  fc.record({
    at: fc.nat({ max: 12 }),
    how: fc.constantFrom("interrupt" as const, "die" as const),
  }),
  { nil: undefined, freq: 2 },
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("user" as const), text: fc.string() }),
  fc.record({
    kind: fc.constant("own-turn" as const),
    calls: fc.nat({ max: 2 }),
    cut: cutArb,
  }),
  {
    arbitrary: fc.record({
      kind: fc.constant("turn" as const),
      replies: fc.array(
        fc.constantFrom<Reply>(
          "text",
          "call",
          "two-calls",
          "fail",
          "overflow",
          "overloaded",
        ),
        { maxLength: 4 },
      ),
      summaries: summariesArb(3),
      budget: fc.boolean(),
      cut: cutArb,
    }),
    weight: 4,
  },
  fc.record({
    kind: fc.constant("compact" as const),
    summaries: summariesArb(2),
    cut: cutArb,
  }),
  fc.constant({ kind: "prune" as const }),
  fc.record({ kind: fc.constant("system" as const), text: fc.string() }),
  fc.constant({ kind: "repair" as const }),
  { arbitrary: fc.constant({ kind: "crash" as const }), weight: 2 },
);

/** What the sequences exercised, so the law is not checked on easy logs. */
const seen = {
  sequences: 0,
  operations: 0,
  crashes: 0,
  interruptCuts: 0,
  deathCuts: 0,
  turnsRecovered: 0,
  compactionsAbandonedClosed: 0,
  emptySummaries: 0,
  compacted: 0,
  finalClosers: 0,
  events: 0,
  retries: 0,
};

/** The session's writer, the store, and the cut in force. */
interface Harness {
  handle: SessionHandle;
  cut: Cut | undefined;
  writes: number;
  dead: boolean;
}

/**
 * A store whose writes go through the harness's cut: the cut write is an
 * interruption; after a death every write fails, as nothing can write after
 * SIGKILL.
 */
const cutting = (store: SessionStore, h: Harness): SessionStore => {
  const gate = <A, E, R>(write: Effect.Effect<A, E, R>) =>
    Effect.suspend((): Effect.Effect<A, E | StorageError, R> => {
      if (h.dead) {
        return Effect.fail(
          new StorageError({
            operation: "append",
            id: "s",
            code: undefined,
            cause: "dead",
          }),
        );
      }
      const cut = h.cut;
      if (cut !== undefined && h.writes++ === cut.at) {
        if (cut.how === "die") h.dead = true;
        if (cut.how === "die") seen.deathCuts++;
        else seen.interruptCuts++;
        return Effect.interrupt;
      }
      return write;
    });
  return {
    ...store,
    append: (handle, drafts) => gate(store.append(handle, drafts)),
    appendEvents: (handle, events) => gate(store.appendEvents(handle, events)),
    update: (handle, op) => gate(store.update(handle, op)),
    repair: (handle) => gate(store.repair(handle)),
  };
};

const budgetPolicy = { maxTokens: 400, keepTokens: 150 };

/** A turn the harness writes itself, one batch per record. */
const ownTurn = (session: Session, calls: number) => {
  let turn = 0;
  for (const e of Result.getOrThrow(Session.events(session))) {
    if (e.type === "turn/start") turn = e.data.turn + 1;
  }
  const ids = Array.from({ length: calls }, (_, i) => `own${turn}-${i}`);
  const answer = Draft.assistant({
    id: `own-a${turn}`,
    turn,
    step: 0,
    provider: "p",
    model: "m",
    content: "On it.",
    toolCalls: ids.map((id) => ({ id, name: "read", arguments: "{}" })),
  });
  const batches: EventDraft[][] = [
    [Draft.turnStart(turn), Draft.user("do it", { id: `own-u${turn}` })],
    [Draft.stepStart(turn, 0)],
    [answer],
  ];
  return { turn, batches, answer };
};

/** How an operation ended, as far as the law cares. */
interface Settled {
  /** It died with a defect: what the cause says. */
  readonly defect: string | undefined;
  /** It was interrupted (a cut). */
  readonly interrupted: boolean;
}

const settle = <A, E>(exit: Exit.Exit<A, E>): Settled => ({
  defect: Exit.isFailure(exit) && Cause.hasDies(exit.cause)
    ? Cause.pretty(exit.cause)
    : undefined,
  interrupted: Exit.isFailure(exit) && Cause.hasInterrupts(exit.cause),
});

const fine: Settled = { defect: undefined, interrupted: false };

const runOp = (
  op: Op,
  h: Harness,
  store: SessionStore,
): Effect.Effect<Settled> =>
  Effect.gen(function* () {
    h.cut = "cut" in op ? op.cut : undefined;
    h.writes = 0;
    const s = cutting(store, h);
    const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.provideService(effect, SessionStore, s);
    const handle = h.handle;
    switch (op.kind) {
      case "user":
        return settle(
          yield* Effect.exit(
            s.append(handle, [
              Draft.user(op.text, {
                id: `u${Session.nextSeq(handle.session)}`,
              }),
            ]),
          ),
        );
      case "own-turn": {
        // A harness that writes its own turns closes an open one first.
        if (
          openWork(Result.getOrThrow(Session.events(handle.session))).turns
            .length > 0
        ) {
          const repaired = yield* Effect.exit(s.repair(handle));
          if (Exit.isFailure(repaired)) return settle(repaired);
        }
        const { turn, batches, answer } = ownTurn(handle.session, op.calls);
        for (const batch of batches) {
          const done = yield* Effect.exit(s.append(handle, batch));
          if (Exit.isFailure(done)) return settle(done);
        }
        // Each call: its tool/call, then its result citing it.
        for (const draft of Draft.toolCalls(answer)) {
          const called = yield* Effect.exit(s.append(handle, [draft]));
          if (Exit.isFailure(called)) return settle(called);
          const callEvent = Result.getOrThrow(Session.events(handle.session))
            .at(-1);
          if (callEvent?.type !== "tool/call") return fine;
          const answered = yield* Effect.exit(
            s.append(handle, [Draft.toolResult(callEvent, "ok")]),
          );
          if (Exit.isFailure(answered)) return settle(answered);
        }
        return settle(
          yield* Effect.exit(
            s.append(handle, [
              Draft.stepEnd(turn, 0),
              Draft.turnEnd(turn, "completed"),
            ]),
          ),
        );
      }
      case "turn": {
        const exit = yield* Effect.exit(
          provide(Effect.gen(function* () {
            const toolkit = yield* tools;
            return yield* runTurn({
              handle,
              toolkit,
              model: { provider: "scripted", model: "m" },
              input: "go",
              maxSteps: 3,
              retry,
              onEvent: (event) =>
                Effect.sync(() => {
                  if (event.type === "model-retry") seen.retries++;
                }),
              ...(op.budget ? { compaction: budgetPolicy } : {}),
            });
          })).pipe(
            Effect.provide(
              Layer.merge(
                scripted([...op.replies], [...op.summaries]),
                handlers,
              ),
            ),
          ),
        );
        if (Exit.isSuccess(exit)) {
          // A turn that ends leaves nothing open: it never nested.
          assert.deepEqual(
            openWork(Result.getOrThrow(Session.events(exit.value.session)))
              .turns,
            [],
          );
          const { recovered, compactions } = exit.value;
          if (recovered.some((e) => e.type === "turn/end")) {
            seen.turnsRecovered++;
          }
          seen.compactionsAbandonedClosed += recovered.filter((e) =>
            e.type === "compaction/end"
          ).length;
          for (const c of compactions) {
            if (c.compacted) seen.compacted++;
            if (c.refused?._tag === "EmptySummary") seen.emptySummaries++;
          }
        }
        return settle(exit);
      }
      case "compact": {
        const exit = yield* Effect.exit(
          provide(compactIfNeeded({ handle, ...budgetPolicy, retry })).pipe(
            Effect.provide(scripted([], [...op.summaries])),
          ),
        );
        if (Exit.isSuccess(exit)) {
          seen.compactionsAbandonedClosed += exit.value.recovered.length;
          if (exit.value.compacted) seen.compacted++;
        } else if (
          Exit.findErrorOption(exit).pipe((e) =>
            e._tag === "Some" && e.value._tag === "EmptySummary"
          )
        ) {
          seen.emptySummaries++;
        }
        return settle(exit);
      }
      case "prune": {
        const target = Result.getOrThrow(Session.events(handle.session))
          .findLast((e) =>
            isSurfaceEvent(e) && e.type === "tool/result" &&
            handle.session.surface.length > 0
          );
        if (target === undefined) return fine;
        return settle(
          yield* Effect.exit(
            s.update(handle, (session) =>
              pruneToolResult(session, target.seq, [{
                type: "text",
                text: "[pruned]",
              }])),
          ),
        );
      }
      case "system":
        return settle(
          yield* Effect.exit(
            s.update(handle, (session) => setSystemPrompt(session, op.text)),
          ),
        );
      case "repair": {
        const exit = yield* Effect.exit(s.repair(handle));
        if (Exit.isSuccess(exit)) {
          seen.compactionsAbandonedClosed +=
            exit.value.closers.filter((e) => e.type === "compaction/end")
              .length;
        }
        return settle(exit);
      }
      case "crash":
        return fine;
    }
  });

/** Drops the handle (a crash closes nothing) and opens the session again. */
const reopen = (h: Harness) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    yield* store.close(h.handle);
    h.handle = yield* store.open("s", { mode: "write" });
    h.dead = false;
  });

const checkSequence = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const h: Harness = {
      handle: yield* store.create({ id: "s", createdAt: 0, isSeeded: false }),
      cut: undefined,
      writes: 0,
      dead: false,
    };
    seen.sequences++;
    for (const op of ops) {
      seen.operations++;
      if (op.kind === "crash") seen.crashes++;
      const settled = yield* runOp(op, h, store);
      if (settled.defect !== undefined) {
        assert.fail(`${op.kind} died: ${settled.defect}`);
      }
      if (op.kind === "crash" || h.dead || settled.interrupted) {
        yield* reopen(h);
      }
    }
    yield* reopen(h);
    const { closers } = yield* store.repair(h.handle);
    seen.finalClosers += closers.length;
    seen.compactionsAbandonedClosed += closers.filter((e) =>
      e.type === "compaction/end"
    ).length;
    const session = h.handle.session;
    const messages = deriveMessages(session.surface);
    assert.deepEqual(checkTranscript(messages), []);
    // Pairing invents and drops nothing. It may move a result next to its
    // call when the harness appended a user message between them (repair
    // appends, so the closer lands after that message).
    assert.deepEqual(
      pairToolCalls(messages).repairs.filter((r) =>
        r._tag !== "MovedToolResult"
      ),
      [],
    );
    assert.deepEqual(openWork(Result.getOrThrow(Session.events(session))), {
      turns: [],
      compactions: [],
    });
    const again = yield* store.repair(h.handle);
    assert.deepEqual(again.closers, []);
    return Session.nextSeq(session);
  }).pipe(Effect.scoped);

Deno.test("no public operation writes a log that repair cannot make clean", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(opArb, { minLength: 1, maxLength: 14 }),
      async (ops) => {
        const { store } = Effect.runSync(makeMemoryStore());
        seen.events += await Effect.runPromise(
          Effect.provideService(checkSequence(ops), SessionStore, store),
        );
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
  console.log(JSON.stringify(seen));
  // The sequences reached the paths the law is about.
  assert.equal(seen.sequences, RUNS);
  assert.ok(seen.events > RUNS * 5, `only ${seen.events} events`);
  assert.ok(seen.deathCuts > 0 && seen.interruptCuts > 0 && seen.crashes > 0);
  assert.ok(seen.turnsRecovered > 0, "no runTurn closed a crashed turn");
  assert.ok(seen.compactionsAbandonedClosed > 0, "no abandoned compaction");
  assert.ok(seen.emptySummaries > 0 && seen.compacted > 0);
  assert.ok(seen.retries > 0, "no request was retried");
});
