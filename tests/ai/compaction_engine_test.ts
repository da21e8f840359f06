import {
  checkTranscript,
  deriveMessages,
  Draft,
  type EventDraft,
  isSurfaceEvent,
  openWork,
  pruneToolResult,
  Session,
  type SessionHandle,
  SessionSeq,
  SessionStore,
} from "@palimpsest/session";
import { eventTypeName } from "@palimpsest/session/schema";
import { surfaceNodes } from "@palimpsest/session/internal";
import {
  compactIfNeeded,
  type CompactIfNeededOptions,
  type CompactionEngineError,
  type CompactionOutcome,
  estimateTokensByChars,
  releaseStaleCompaction,
  type RunTurnOptions,
} from "@palimpsest/session/ai";
import { Deferred, Effect, Fiber, Result } from "effect";
import { Toolkit } from "effect/ai";
import assert from "node:assert/strict";
import {
  finish,
  invalidRequest,
  providerDown,
  scriptedModel,
  type StreamReply,
  tempStore,
  text,
  type TextReply,
} from "./_scripted.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";
import { newSession, turnOnNewSession } from "./_session.ts";
import { drafts, toolResultDraft } from "../_helpers/build.ts";

const long = (n: number) => "x".repeat(n);
const { user } = drafts;
const system: EventDraft = Draft.system("Be brief.", { id: "sys" });
const assistantCall = (id: string, callId: string): EventDraft =>
  drafts.assistant(id, "", [callId]);
// 0 system, 1 u0, 2 a0 [call k1], 3 result k1 (long), 4 u1, 5 u2, 6 u3.
const history: ReadonlyArray<EventDraft> = [
  system,
  user("u0", long(400)),
  assistantCall("a0", "k1"),
  toolResultDraft(0, 0, "k1", long(800)),
  user("u1", long(400)),
  user("u2", long(100)),
  user("u3", long(100)),
];

interface Harness {
  readonly handle: SessionHandle;
  readonly compact: (
    options: Omit<CompactIfNeededOptions, "handle">,
  ) => Effect.Effect<CompactionOutcome, CompactionEngineError, SessionStore>;
}

const withSession = <A>(
  replies: {
    stream?: ReadonlyArray<StreamReply>;
    text?: ReadonlyArray<TextReply>;
  },
  body: (h: Harness) => Effect.Effect<A, unknown, SessionStore>,
  drafts: ReadonlyArray<EventDraft> = history,
): Promise<A> => {
  const scripted = scriptedModel(replies);
  return Effect.runPromise(
    Effect.gen(function* () {
      const { store, handle } = yield* newSession(drafts);
      const compact: Harness["compact"] = (options) =>
        compactIfNeeded({ handle, ...options }).pipe(
          Effect.provide(scripted.layer),
        );
      return yield* body({ handle, compact }).pipe(
        Effect.ensuring(store.close(handle)),
      );
    }).pipe(Effect.scoped, Effect.provide(tempStore())),
  );
};

const tail = (handle: SessionHandle, from: number): string[] =>
  Result.getOrThrow(Session.events(handle.session, SessionSeq.make(from))).map(
    eventTypeName,
  );

/**
 * Runs `body` while a compaction, forked as `running`, waits on a summary
 * reply that never comes; `later` are the replies after that one.
 */
const whileSummarising = <A>(
  body: (
    h: Harness,
    running: Fiber.Fiber<unknown, unknown>,
  ) => Effect.Effect<A, unknown, SessionStore>,
  later: ReadonlyArray<TextReply> = [],
): Promise<A> => {
  const latch = Effect.runSync(Deferred.make<void>());
  return withSession(
    { text: [{ hang: latch }, ...later] },
    (h) =>
      Effect.gen(function* () {
        const running = yield* Effect.forkChild(h.compact({ maxTokens: 300 }));
        yield* Deferred.await(latch);
        return yield* body(h, running);
      }),
  );
};

Deno.test("compactIfNeeded does nothing under budget", async () => {
  const outcome = await withSession(
    {},
    ({ compact }) => compact({ maxTokens: 10_000 }),
  );
  assert.equal(outcome.compacted, false);
  assert.equal(Session.nextSeq(outcome.session), history.length);
});

Deno.test("compactIfNeeded replaces the oldest history, keeping head, tail and pairs", async () => {
  const { outcome, events } = await withSession(
    { text: [{ text: "The user sent long notes; a read returned 800 x." }] },
    ({ handle, compact }) =>
      Effect.map(compact({ maxTokens: 300, keepTokens: 60 }), (outcome) => ({
        outcome,
        events: tail(handle, history.length),
      })),
  );
  assert.equal(outcome.compacted, true);
  assert.deepEqual(events, [
    "compaction/start",
    "compaction/summary",
    "user/message",
    "compaction/end",
  ]);
  assert.deepEqual(outcome.range, { startSeq: 1, endSeq: 4 });
  assert.deepEqual(surfaceNodes(outcome.session.surface), [0, 9, 5, 6]);
  const summary = Result.getOrThrow(
    Session.eventAt(outcome.session, SessionSeq.make(9)),
  );
  assert.ok(summary !== undefined && isSurfaceEvent(summary));
  assert.deepEqual(summary.sourceEventSeqs, [7, 8, 1, 2, 3, 4]);
  assert.ok(outcome.tokensAfter < outcome.tokensBefore);
  assert.ok(outcome.tokensAfter <= 300);
  assert.deepEqual(
    checkTranscript(deriveMessages(outcome.session.surface)),
    [],
  );
});

Deno.test("the token estimate is pluggable", async () => {
  const byCount = (messages: ReadonlyArray<unknown>) => messages.length * 100;
  const outcome = await withSession(
    { text: [{ text: "short" }] },
    ({ compact }) =>
      compact({ maxTokens: 500, keepTokens: 200, estimate: byCount }),
  );
  assert.equal(outcome.compacted, true);
  assert.deepEqual(outcome.range, { startSeq: 1, endSeq: 4 });
  assert.equal(outcome.tokensAfter, 400);
});

Deno.test("an open compaction is a lock: a second one fails with CompactionInProgress", async () => {
  const { error, ends } = await whileSummarising(
    ({ handle, compact }, first) =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(compact({ maxTokens: 300 }));
        yield* Fiber.interrupt(first);
        return { error, ends: tail(handle, history.length) };
      }),
  );
  thenFails(error, "CompactionInProgress", {
    compactionId: `c${history.length}`,
    startSeq: history.length,
    live: true,
  });
  // The interrupted first compaction released its lock.
  assert.deepEqual(ends, ["compaction/start", "compaction/end"]);
});

Deno.test("a fiber interrupted mid-summary closes its compaction with an error", async () => {
  const { end, next } = await whileSummarising(
    ({ handle, compact }, running) =>
      Effect.gen(function* () {
        yield* Fiber.interrupt(running);
        const end = Result.getOrThrow(Session.eventAt(
          handle.session,
          SessionSeq.make(history.length + 1),
        ));
        const next = yield* compact({ maxTokens: 300 });
        return { end, next };
      }),
    [{ text: "short" }],
  );
  assert.deepEqual(end?.data, {
    compactionId: `c${history.length}`,
    error: { _tag: "Interrupted" },
  });
  assert.equal(next.compacted, true);
});

const stale: EventDraft = {
  type: "compaction/start",
  data: { compactionId: "old", turn: 0 },
};

Deno.test("an abandoned compaction is closed first and compaction works again", async () => {
  const { outcome, events } = await withSession(
    { text: [{ text: "short" }] },
    ({ handle, compact }) =>
      Effect.map(compact({ maxTokens: 300 }), (outcome) => ({
        outcome,
        events: Result.getOrThrow(Session.events(
          handle.session,
          SessionSeq.make(history.length + 1),
        )),
      })),
    [...history, stale],
  );
  assert.equal(outcome.compacted, true);
  assert.deepEqual(outcome.recovered.map((e) => [e.type, e.data]), [
    ["compaction/end", { compactionId: "old", error: { _tag: "Abandoned" } }],
  ]);
  assert.deepEqual(events.map(eventTypeName), [
    "compaction/end",
    "compaction/start",
    "compaction/summary",
    "user/message",
    "compaction/end",
  ]);
  assert.deepEqual(
    openWork(Result.getOrThrow(Session.events(outcome.session))).compactions,
    [],
  );
});

Deno.test("an abandoned compaction is closed even under budget", async () => {
  const outcome = await withSession(
    {},
    ({ compact }) => compact({ maxTokens: 100_000 }),
    [...history, stale],
  );
  assert.equal(outcome.compacted, false);
  assert.equal(outcome.recovered.length, 1);
  assert.deepEqual(
    openWork(Result.getOrThrow(Session.events(outcome.session))).compactions,
    [],
  );
});

Deno.test("onOpen refuse fails on an abandoned compaction and writes nothing", async () => {
  const { refused, next, released } = await withSession(
    { text: [{ text: "short" }] },
    ({ handle, compact }) =>
      Effect.gen(function* () {
        const refused = yield* Effect.flip(
          compact({ maxTokens: 300, onOpen: "refuse" }),
        );
        const next = Session.nextSeq(handle.session);
        const released = yield* releaseStaleCompaction(handle);
        return { refused, next, released };
      }),
    [...history, stale],
  );
  thenFails(refused, "CompactionInProgress", {
    compactionId: "old",
    startSeq: history.length,
    live: false,
  });
  assert.equal(next, history.length + 1);
  assert.deepEqual(
    openWork(Result.getOrThrow(Session.events(released))).compactions,
    [],
  );
});

Deno.test("store.repair closes an abandoned compaction and leaves a running one", async () => {
  const { whileRunning, afterCrash } = await whileSummarising(
    ({ handle }, running) =>
      Effect.gen(function* () {
        const store = yield* SessionStore;
        // The compaction is running in this process: not abandoned.
        const whileRunning = (yield* store.repair(handle)).closers;
        yield* Fiber.interrupt(running);
        yield* store.append(handle, [stale]);
        const afterCrash = (yield* store.repair(handle)).closers;
        return { whileRunning, afterCrash };
      }),
  );
  assert.deepEqual(whileRunning, []);
  assert.deepEqual(afterCrash.map((e) => [e.type, e.data]), [
    ["compaction/end", { compactionId: "old", error: { _tag: "Abandoned" } }],
  ]);
});

Deno.test("an empty or blank summary is refused and the range stays", async (t) => {
  for (const blank of ["", "  \n\t "]) {
    await t.step(JSON.stringify(blank), async () => {
      const { error, handle } = await withSession(
        { text: [{ text: blank }] },
        (h) =>
          Effect.map(
            Effect.flip(h.compact({ maxTokens: 300 })),
            (error) => ({ error, handle: h.handle }),
          ),
      );
      thenFails(error, "EmptySummary", {
        compactionId: `c${history.length}`,
        startSeq: 1,
        endSeq: 4,
      });
      assert.deepEqual(tail(handle, history.length), [
        "compaction/start",
        "compaction/end",
      ]);
      const end = Result.getOrThrow(Session.eventAt(
        handle.session,
        SessionSeq.make(history.length + 1),
      ));
      assert.deepEqual(end?.data, {
        compactionId: `c${history.length}`,
        error: { _tag: "EmptySummary", message: error.message },
      });
      assert.equal(handle.session.surface.replacements, 0);
      assert.deepEqual(surfaceNodes(handle.session.surface), [
        0,
        1,
        2,
        3,
        4,
        5,
        6,
      ]);
    });
  }
});

Deno.test("a turn whose model returns an empty summary says why it did not compact", async () => {
  const { result, session } = await overflowTurn(
    [{ parts: [...text("Fine."), finish()] }],
    history,
    [{ text: "" }],
    300,
  );
  assert.ok(result._tag === "Success");
  const [report, ...more] = result.success.compactions;
  assert.deepEqual(more, []);
  assert.equal(report?.compacted, false);
  assert.ok(report?.refused !== undefined);
  thenFails(report.refused, "EmptySummary", { startSeq: 1 });
  assert.equal(session.surface.replacements, 0);
  assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
});

Deno.test("a summary not smaller than its range is refused", async () => {
  const { error, handle } = await withSession(
    { text: [{ text: long(5_000) }] },
    (h) =>
      Effect.map(
        Effect.flip(h.compact({ maxTokens: 300 })),
        (error) => ({ error, handle: h.handle }),
      ),
  );
  thenFails(error, "SummaryNotSmaller", {
    summaryTokens: estimateTokensByChars([{
      id: "x",
      role: "user",
      content: [{ type: "text", text: long(5_000) }],
      source: { kind: "plugin", plugin: "compaction" },
    }]),
  });
  assert.deepEqual(tail(handle, history.length), [
    "compaction/start",
    "compaction/end",
  ]);
  assert.equal(handle.session.surface.replacements, 0);
});

Deno.test("a range that changed while summarizing is refused", async () => {
  const { error, events } = await withSession(
    {},
    ({ handle }) =>
      Effect.gen(function* () {
        const store = yield* SessionStore;
        // While the model writes the summary, the harness prunes a result in
        // the range.
        const pruneMeanwhile = Effect.orDie(Effect.gen(function* () {
          const after = yield* pruneToolResult(
            handle.session,
            SessionSeq.make(3),
            [
              { type: "text", text: "pruned" },
            ],
          );
          yield* store.appendEvents(
            handle,
            Result.getOrThrow(
              Session.events(after, Session.nextSeq(handle.session)),
            ),
          );
        }));
        const model = scriptedModel({
          text: [{ text: "short", before: pruneMeanwhile }],
        });
        const error = yield* Effect.flip(
          compactIfNeeded({ handle, maxTokens: 300 }).pipe(
            Effect.provide(model.layer),
          ),
        );
        return { error, events: tail(handle, history.length) };
      }),
  );
  thenFails(error, "CompactionRangeChanged", { startSeq: 1, endSeq: 4 });
  assert.deepEqual(events, [
    "compaction/start",
    "compaction/prune",
    "tool/result",
    "compaction/end",
  ]);
});

Deno.test("a model failure closes the compaction and fails with the model's error", async () => {
  const { error, events } = await withSession(
    { text: [{ fail: providerDown() }] },
    ({ handle, compact }) =>
      Effect.map(
        Effect.flip(compact({ maxTokens: 300, retry: 0 })),
        (error) => ({
          error,
          events: Result.getOrThrow(
            Session.events(handle.session, SessionSeq.make(history.length)),
          ),
        }),
      ),
  );
  thenFails(error, "AiError");
  assert.deepEqual(events.map((e) => e.type), [
    "compaction/start",
    "compaction/end",
  ]);
  assert.deepEqual(events[1]?.data, {
    compactionId: `c${history.length}`,
    error: { _tag: "AiError", message: error.message },
  });
});

const overflowTurn = (
  stream: ReadonlyArray<StreamReply>,
  drafts: ReadonlyArray<EventDraft>,
  summaries: ReadonlyArray<TextReply> = [{ text: "Earlier: notes." }],
  maxTokens = 100_000,
  more: Partial<RunTurnOptions<Record<never, never>>> = {},
) => {
  const scripted = scriptedModel({ stream, text: summaries });
  return Effect.runPromise(
    Effect.gen(function* () {
      const { store, handle, turn } = yield* turnOnNewSession(Toolkit.empty, {
        model: { provider: "scripted", model: "m" },
        input: "go on",
        compaction: { maxTokens, keepTokens: 50 },
        ...more,
      }, drafts);
      const result = yield* Effect.result(
        turn.pipe(Effect.provide(scripted.layer)),
      );
      yield* store.close(handle);
      return { result, scripted, session: handle.session };
    }).pipe(Effect.scoped, Effect.provide(tempStore())),
  );
};

Deno.test("an overflow compacts and retries when the surface changed", async () => {
  const { result, scripted, session } = await overflowTurn(
    [{
      fail: invalidRequest(
        "prompt is too long: 210000 tokens > 200000 maximum",
      ),
    }, {
      parts: [...text("Carrying on."), finish()],
    }],
    history,
  );
  assert.equal(result._tag, "Success");
  assert.equal(scripted.streamed.length, 2);
  assert.equal(scripted.summarized.length, 1);
  assert.ok(
    JSON.stringify(scripted.streamed[1]).length <
      JSON.stringify(scripted.streamed[0]).length,
  );
  assert.equal(session.surface.replacements, 1);
  assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
});

Deno.test("an overflow is not retried when compaction cannot change the surface, and says why", async () => {
  const { result, scripted } = await overflowTurn(
    [{ fail: invalidRequest("context length exceeded") }],
    [],
  );
  const error = thenFails(failureOf(result), "OverflowNotRecovered", {
    reason: "nothing-compactable",
    attempts: 1,
  });
  thenFails(error.error, "AiError");
  assert.equal(scripted.streamed.length, 1);
  assert.equal(scripted.summarized.length, 0);
});

Deno.test("an error that is not an overflow is not retried", async () => {
  const { result, scripted } = await overflowTurn(
    [{ fail: invalidRequest("temperature must be at most 2") }],
    history,
  );
  thenFails(failureOf(result), "AiError");
  assert.equal(scripted.streamed.length, 1);
  assert.equal(scripted.summarized.length, 0);
});

Deno.test("a turn goes on uncompacted when the summary request fails", async () => {
  const { result, scripted, session } = await overflowTurn(
    [{ parts: [...text("Fine."), finish()] }],
    history,
    [{ fail: providerDown() }],
    300,
    { retry: 0 },
  );
  assert.equal(result._tag, "Success");
  assert.equal(scripted.summarized.length, 1);
  assert.equal(session.surface.replacements, 0);
  const ends = Result.getOrThrow(Session.events(session)).filter((e) =>
    e.type === "compaction/end"
  );
  assert.equal(ends.length, 1);
  assert.ok(
    typeof ends[0]?.data === "object" && ends[0].data !== null &&
      "error" in ends[0].data,
  );
});

Deno.test("compaction/start records the turn the log is in", async () => {
  const start = await withSession(
    { text: [{ text: "short" }] },
    ({ handle, compact }) =>
      Effect.map(
        compact({ maxTokens: 300 }),
        () =>
          Result.getOrThrow(
            Session.eventAt(
              handle.session,
              SessionSeq.make(history.length + 1),
            ),
          ),
      ),
    [Draft.turnStart(3), ...history],
  );
  assert.ok(start?.type === "compaction/start");
  assert.equal(start.data.turn, 3);
});
