/**
 * Transient provider errors are retried: which errors, how long the waits
 * are (backoff, `retry-after`), what the log keeps of each try and of the
 * error when the retries run out. Every wait runs on `TestClock`.
 */
import assert from "node:assert/strict";
import { Duration, Effect, Fiber, Layer, Result, Schedule } from "effect";
import { TestClock } from "effect/testing";
import { AiError, Toolkit } from "effect/ai";
import {
  checkTranscript,
  deriveMessages,
  layerMemoryStore,
  Session,
  type SessionEvent,
} from "@palimpsest/session";
import {
  compactIfNeeded,
  isTransientError,
  MAX_RETRY_AFTER_MILLIS,
  type ModelRetry,
  type ModelRetryAttempt,
  retryAfterMillis,
  runTurn,
  type TurnEvent,
} from "@palimpsest/session/ai";
import { TOOL_NOT_STARTED } from "@palimpsest/session/internal";
import {
  call,
  finish,
  httpFailure,
  invalidRequest,
  scriptedModel,
  type StreamReply,
  text,
  type TextReply,
} from "./_scripted.ts";
import { newSession } from "./_session.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";

const error = (reason: AiError.AiErrorReason) =>
  AiError.make({ module: "P", method: "streamText", reason });

Deno.test("transient errors are 408, 409, 429, 5xx, 529 and connection failures; refusals are not", () => {
  for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) {
    assert.equal(isTransientError(httpFailure(status)), true, `${status}`);
  }
  for (const status of [400, 401, 403, 404, 413, 422]) {
    assert.equal(isTransientError(httpFailure(status)), false, `${status}`);
  }
  const network = (reason: "TransportError" | "EncodeError") =>
    error(new AiError.NetworkError({ reason, method: "POST", url: "" }));
  assert.equal(isTransientError(network("TransportError")), true);
  assert.equal(isTransientError(network("EncodeError")), false);
  assert.equal(isTransientError(error(new AiError.RateLimitError({}))), true);
  assert.equal(
    isTransientError(
      error(new AiError.InternalProviderError({ description: "down" })),
    ),
    true,
  );
  assert.equal(isTransientError(invalidRequest("context length")), false);
  assert.equal(
    isTransientError(error(new AiError.QuotaExhaustedError({}))),
    false,
  );
});

Deno.test("retry-after is read from retry-after-ms, seconds, an HTTP date or the rate limit", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(
    retryAfterMillis(httpFailure(429, { "retry-after-ms": "250" }), now),
    250,
  );
  assert.equal(
    retryAfterMillis(httpFailure(429, { "Retry-After": "2" }), now),
    2000,
  );
  assert.equal(
    retryAfterMillis(
      httpFailure(503, { "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }),
      now,
    ),
    5000,
  );
  assert.equal(
    retryAfterMillis(
      httpFailure(503, { "retry-after": "Wed, 31 Dec 2025 23:00:00 GMT" }),
      now,
    ),
    0,
  );
  assert.equal(
    retryAfterMillis(
      error(new AiError.RateLimitError({ retryAfter: Duration.seconds(7) })),
      now,
    ),
    7000,
  );
  assert.equal(retryAfterMillis(httpFailure(503), now), undefined);
  assert.equal(
    retryAfterMillis(httpFailure(503, { "retry-after": "soon" }), now),
    undefined,
  );
});

/**
 * Runs `effect` on `TestClock`, moving the clock on in steps of 100 ms
 * until it ends (at most 10 minutes of clock time).
 */
const onTestClock = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(effect);
    for (let i = 0; i < 6000 && fiber.pollUnsafe() === undefined; i++) {
      yield* TestClock.adjust("100 millis");
      yield* Effect.yieldNow;
    }
    return yield* Fiber.join(fiber);
  }).pipe(Effect.provide(TestClock.layer()));

const turnWith = (
  stream: ReadonlyArray<StreamReply>,
  retry?: ModelRetry,
) => {
  const scripted = scriptedModel({ stream });
  const events: TurnEvent[] = [];
  return Effect.runPromise(
    Effect.gen(function* () {
      const { handle } = yield* newSession();
      const toolkit = yield* Toolkit.empty;
      const result = yield* Effect.result(onTestClock(
        runTurn({
          handle,
          toolkit,
          model: { provider: "scripted", model: "m" },
          input: "hi",
          ...(retry === undefined ? {} : { retry }),
          onEvent: (event) => Effect.sync(() => events.push(event)),
        }).pipe(Effect.provide(scripted.layer)),
      ));
      return { result, events, session: handle.session, scripted };
    }).pipe(Effect.scoped, Effect.provide(layerMemoryStore())),
  );
};

const retries = (events: ReadonlyArray<TurnEvent>) =>
  events.flatMap((e) => e.type === "model-retry" ? [e] : []);
const types = (session: Session) =>
  Result.getOrThrow(Session.events(session)).map((e: SessionEvent) => e.type);

Deno.test("a 529 and a 500 are retried after the backoff and the provider's retry-after, writing each try once", async () => {
  const { result, events, session, scripted } = await turnWith([
    { fail: httpFailure(529, { "retry-after": "3" }) },
    { fail: httpFailure(500) },
    { parts: [...text("Hello."), finish()] },
  ]);
  assert.equal(result._tag, "Success");
  assert.equal(scripted.streamed.length, 3);
  const made = retries(events);
  assert.deepEqual(made.map((r) => [r.attempt, r.request]), [
    [1, "answer"],
    [2, "answer"],
  ]);
  // retry-after: 3 s beats the first backoff (500 ms, jittered).
  assert.equal(made[0]?.delayMillis, 3000);
  // The second backoff is 1 s, jittered by at most 20%.
  const second = made[1]?.delayMillis ?? 0;
  assert.ok(second >= 800 && second <= 1200, `${second}`);
  assert.deepEqual(made.map((r) => r.error.reason._tag), [
    "InternalProviderError",
    "InternalProviderError",
  ]);
  // One step, one input; each failed try is one attempt, the answer once.
  assert.deepEqual(types(session), [
    "turn/start",
    "user/message",
    "step/start",
    "assistant/attempt",
    "assistant/attempt",
    "assistant/message",
    "step/end",
    "turn/end",
  ]);
  // Every request sent the same prompt: nothing was added between tries.
  assert.equal(
    JSON.stringify(scripted.streamed[2]),
    JSON.stringify(scripted.streamed[0]),
  );
});

Deno.test("when the retries run out the turn fails and turn/end keeps the error's tag, status and message", async () => {
  const { result, events, session, scripted } = await turnWith([
    { fail: httpFailure(503) },
    { fail: httpFailure(503) },
    { fail: httpFailure(503) },
  ]);
  const failure = thenFails(failureOf(result), "AiError");
  assert.equal(scripted.streamed.length, 3);
  assert.equal(retries(events).length, 2);
  const end = Result.getOrThrow(Session.events(session)).at(-1);
  assert.ok(end?.type === "turn/end");
  assert.deepEqual(end.data.reason, {
    kind: "error",
    error: {
      _tag: "AiError",
      reason: "InternalProviderError",
      status: 503,
      message: failure.message,
    },
  });
});

Deno.test("retry 0 turns retries off, and a refusal is never retried", async () => {
  const off = await turnWith([{ fail: httpFailure(503) }], 0);
  thenFails(failureOf(off.result), "AiError");
  assert.equal(off.scripted.streamed.length, 1);
  assert.deepEqual(retries(off.events), []);
  const refused = await turnWith([{ fail: httpFailure(400) }]);
  thenFails(failureOf(refused.result), "AiError");
  assert.equal(refused.scripted.streamed.length, 1);
});

Deno.test("a Schedule sets the retries and their delays", async () => {
  const { result, events, scripted } = await turnWith(
    [
      { fail: httpFailure(429) },
      { fail: httpFailure(429) },
      { fail: httpFailure(429) },
      { fail: httpFailure(429) },
      { parts: [...text("At last."), finish()] },
    ],
    Schedule.spaced("2 seconds").pipe(Schedule.upTo({ times: 4 })),
  );
  assert.equal(result._tag, "Success");
  assert.equal(scripted.streamed.length, 5);
  assert.deepEqual(
    retries(events).map((r) => r.delayMillis),
    [2000, 2000, 2000, 2000],
  );
});

Deno.test("a retry-after over the longest wait is not waited for", async () => {
  const seconds = String(MAX_RETRY_AFTER_MILLIS / 1000 + 1);
  const { result, events, scripted } = await turnWith([
    { fail: httpFailure(429, { "retry-after": seconds }) },
  ]);
  thenFails(failureOf(result), "AiError");
  assert.equal(scripted.streamed.length, 1);
  assert.deepEqual(retries(events), []);
});

const long = (id: string) => ({
  type: "user/message" as const,
  surfaceOp: "append" as const,
  data: {
    id,
    role: "user" as const,
    content: [{ type: "text" as const, text: "x".repeat(200) }],
    source: { kind: "user" },
  },
});

Deno.test("the compaction engine retries its summary request", async () => {
  const scripted = scriptedModel({
    text: [
      { fail: httpFailure(529) } satisfies TextReply,
      { text: "They talked." },
    ],
  });
  const seen: ModelRetryAttempt[] = [];
  const outcome = await Effect.runPromise(
    Effect.gen(function* () {
      const { handle } = yield* newSession([
        long("u0"),
        long("u1"),
        long("u2"),
        long("u3"),
      ]);
      return yield* onTestClock(
        compactIfNeeded({
          handle,
          maxTokens: 150,
          keepTokens: 60,
          onRetry: (attempt) => Effect.sync(() => seen.push(attempt)),
        }),
      );
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.merge(scripted.layer, layerMemoryStore())),
    ),
  );
  assert.equal(outcome.compacted, true);
  assert.equal(scripted.summarized.length, 2);
  assert.deepEqual(seen.map((s) => s.attempt), [1]);
  // The store saw one compaction: no second start for the retry.
  const starts = Result.getOrThrow(Session.events(outcome.session)).filter((
    e,
  ) => e.type === "compaction/start");
  assert.equal(starts.length, 1);
});

Deno.test("a stream cut by a transient error keeps what came out, answers its calls, and the retry sees it", async () => {
  const { result, session, scripted } = await turnWith([
    {
      parts: [...text("Let me look."), call("c1", "read", { path: "a" })],
      thenFail: httpFailure(502),
    },
    { parts: [...text("Here it is."), finish()] },
  ]);
  assert.equal(result._tag, "Success");
  assert.deepEqual(types(session), [
    "turn/start",
    "user/message",
    "step/start",
    "assistant/message",
    "tool/result",
    "assistant/message",
    "step/end",
    "turn/end",
  ]);
  const [cut, closer] = Result.getOrThrow(Session.events(session)).slice(3, 5);
  assert.ok(cut?.type === "assistant/message");
  assert.equal(cut.data.interrupted, true);
  assert.ok(closer?.type === "tool/result");
  assert.equal(closer.data.error?.code, TOOL_NOT_STARTED);
  // No tool/call: the cut call never ran.
  assert.ok(JSON.stringify(scripted.streamed[1]).includes("Let me look."));
  assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
});
