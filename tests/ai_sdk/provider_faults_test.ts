/**
 * The provider-fault campaign: each fault a provider can serve (malformed
 * SSE, a stream that closes early or breaks, 429/500/503/529 refusals with
 * and without `retry-after`, a context overflow, an error event mid-stream,
 * 5 MB and invalid tool arguments, unknown tools, empty answers, reused call
 * ids, a stalled stream) through the real `@ai-sdk/openai` (Responses and
 * Chat Completions) and `@ai-sdk/anthropic` clients against the loopback
 * server, each followed by a turn whose request must be valid and paired.
 *
 * What every fault must leave, whether or not the loop retries: the fault's
 * turn ends with an outcome or a typed `AiError` (never a defect or an
 * interruption); every request body is valid by the provider's published
 * schema; the next turn completes and its request answers every call once;
 * the log opens again with every event the turn acknowledged, nothing open
 * and a clean transcript; a tool ran only for a call recorded whole.
 */
import {
  checkTranscript,
  deriveMessages,
  openWork,
  Session,
  type SessionEvent,
} from "@palimpsest/session";
import { runTurn, type TurnOutcome } from "@palimpsest/session/ai";
import { makeAiSdkModel } from "@palimpsest/session/ai-sdk";
import { type Duration, Effect, Exit, Layer, Result } from "effect";
import { LanguageModel } from "effect/ai";
import assert from "node:assert/strict";
import {
  abortWatch,
  answerEvents,
  type Dialect,
  DIALECTS,
  type Loopback,
  modelFor,
  type ScriptedCall,
  serveLoopback,
  type StreamAnswer,
} from "./_loopback.ts";
import { tempDir } from "../_helpers/store.ts";
import { layerJsonlStore } from "@palimpsest/session";
import { tools } from "./_tools.ts";
import { within } from "../_helpers/deadline.ts";
import { newSession } from "../ai/_session.ts";

/** What one fault left, for its own checks. */
interface FaultRun {
  readonly dialect: Dialect;
  /** The exits of the fault's turns, in order. */
  readonly exits: ReadonlyArray<Exit.Exit<TurnOutcome, unknown>>;
  /** The session after the turn that follows the fault. */
  readonly session: Session;
  readonly server: Loopback;
  /** Resolves when the client aborted a request. */
  readonly clientAborted: Promise<void>;
  /** The paths the `read` tool was run with. */
  readonly runs: ReadonlyArray<string>;
}

interface Fault {
  readonly name: string;
  /**
   * The answers to the fault's requests, in order; past them the server
   * answers "Done.", which the turn after the fault gets.
   */
  readonly script: (dialect: Dialect) => ReadonlyArray<StreamAnswer>;
  /** The turns the fault spans; 1 by default. */
  readonly turns?: number;
  readonly idleTimeout?: Duration.Input;
  /** What else this fault must leave. */
  readonly check?: (run: FaultRun) => void | Promise<void>;
}

const read = (id: string, path: string): ScriptedCall => ({
  id,
  name: "read",
  args: JSON.stringify({ path }),
});

const errorBody = (dialect: Dialect, type: string, message: string) =>
  JSON.stringify(
    dialect === "anthropic"
      ? { type: "error", error: { type, message } }
      : { error: { message, type, param: null, code: type } },
  );

const refusal = (
  status: number,
  type: string,
  headers: Record<string, string> = {},
) =>
(dialect: Dialect): ReadonlyArray<StreamAnswer> => [{
  raw: {
    status,
    headers: { "content-type": "application/json", ...headers },
    body: errorBody(dialect, type, `refused with ${status}`),
  },
}];

const sseHeaders = { "content-type": "text/event-stream" };

/** The whole answer's events up to (not including) the first matching one. */
const upTo = (
  dialect: Dialect,
  answer: { text?: string; calls?: ReadonlyArray<ScriptedCall> },
  match: (event: string) => boolean,
  after = 0,
): number => {
  const index = answerEvents(dialect, answer).findIndex(match);
  assert.ok(index >= 0, "the cut point is in the answer");
  return index + after;
};

/**
 * A script answering `answer` cut `after` events past its first event that
 * `match`es: a clean close, or with `reset` a connection reset.
 */
const cutAt = (
  answer: { text?: string; calls?: ReadonlyArray<ScriptedCall> },
  match: (event: string, dialect: Dialect) => boolean,
  after: number,
  reset = false,
) =>
(dialect: Dialect): ReadonlyArray<StreamAnswer> => [{
  ...answer,
  cut: upTo(dialect, answer, (e) => match(e, dialect), after),
  ...(reset ? { reset } : {}),
}];

/** No tool ran, and the call's result says its arguments were invalid. */
const invalidArguments = (run: FaultRun): void => {
  assert.deepEqual(run.runs, []);
  assert.deepEqual(resultCodes(run.session), ["INVALID_ARGUMENTS"]);
};

const FINISH: Record<Dialect, string> = {
  "openai-responses": "response.completed",
  "openai-chat": '"finish_reason":"',
  "anthropic": "message_delta",
};

/** The provider's own error event, in the middle of a text. */
const errorEvent = (dialect: Dialect): string => {
  const head = answerEvents(dialect, { text: "Halfway through" }).slice(0, 3)
    .join("");
  switch (dialect) {
    case "openai-responses":
      return head +
        `event: error\ndata: ${
          JSON.stringify({
            type: "error",
            sequence_number: 9,
            code: "server_error",
            message: "The server had an error",
            param: null,
          })
        }\n\n`;
    case "openai-chat":
      return head +
        `data: ${
          JSON.stringify({
            error: {
              message: "The server had an error",
              type: "server_error",
              param: null,
              code: null,
            },
          })
        }\n\n`;
    case "anthropic":
      return head +
        `event: error\ndata: ${
          JSON.stringify({
            type: "error",
            error: { type: "overloaded_error", message: "Overloaded" },
          })
        }\n\n`;
  }
};

const firstExit = (run: FaultRun): Exit.Exit<TurnOutcome, unknown> => {
  const [exit] = run.exits;
  assert.ok(exit !== undefined);
  return exit;
};

const failedWith = (exit: Exit.Exit<TurnOutcome, unknown>, reason: string) => {
  assert.ok(Exit.isFailure(exit), "the turn failed");
  const error = Exit.findErrorOption(exit);
  assert.ok(error._tag === "Some");
  const value: unknown = error.value;
  assert.ok(
    typeof value === "object" && value !== null && "reason" in value &&
      typeof value.reason === "object" && value.reason !== null &&
      "_tag" in value.reason,
  );
  assert.equal(value.reason._tag, reason);
};

/** The assistant messages of the fault's first turn. */
const answersOf = (session: Session) =>
  Result.getOrThrow(Session.events(session)).flatMap((e) =>
    e.type === "assistant/message" && e.data.turn === 0 ? [e] : []
  );

const resultCodes = (session: Session): string[] =>
  Result.getOrThrow(Session.events(session)).flatMap((e) =>
    e.type === "tool/result" ? [e.data.error?.code ?? "ok"] : []
  );

/** A cut answer: recorded as interrupted, no tool run, the turn failed. */
const cut = (run: FaultRun) => {
  failedWith(firstExit(run), "NetworkError");
  assert.deepEqual(run.runs, []);
  const [answer] = answersOf(run.session);
  if (answer !== undefined) assert.equal(answer.data.interrupted, true);
};

const partialCall = read("call_p", "partial-arguments-of-a-call");

const FAULTS: ReadonlyArray<Fault> = [
  {
    name: "malformed JSON in an SSE event",
    script: (d) => [{
      raw: {
        status: 200,
        headers: sseHeaders,
        body: answerEvents(d, { text: "Hello there" }).slice(0, 3).join("") +
          "data: {not json\n\n",
      },
    }],
  },
  {
    name: "a body that is not SSE",
    script: () => [{
      raw: { status: 200, headers: sseHeaders, body: "<html>oops</html>" },
    }],
    check: (run) => failedWith(firstExit(run), "NetworkError"),
  },
  {
    name: "an HTML page with status 200",
    script: () => [{
      raw: {
        status: 200,
        headers: { "content-type": "text/html" },
        body: "<html><body>Bad gateway</body></html>",
      },
    }],
    check: (run) => failedWith(firstExit(run), "NetworkError"),
  },
  {
    name: "an empty body",
    script: () => [{ text: "unsent", cut: 0 }],
    check: (run) => failedWith(firstExit(run), "NetworkError"),
  },
  {
    name: "a clean close in the middle of the text",
    script: cutAt(
      { text: "A long answer, cut" },
      (e) => e.includes("A long"),
      1,
    ),
    check: cut,
  },
  {
    name: "a clean close in the middle of a call's arguments",
    script: cutAt({ calls: [partialCall] }, (e) => e.includes("partial"), 1),
    check: cut,
  },
  {
    name: "a clean close after a whole call, before the finish",
    script: cutAt(
      { text: "Reading.", calls: [read("call_w", "whole.txt")] },
      (e, d) => e.includes(FINISH[d]),
      0,
    ),
    check: cut,
  },
  {
    name: "a connection reset in the middle of the text",
    script: cutAt(
      { text: "A long answer, cut" },
      (e) => e.includes("A long"),
      1,
      true,
    ),
    check: cut,
  },
  {
    name: "a connection reset in the middle of a call's arguments",
    script: cutAt(
      { calls: [partialCall] },
      (e) => e.includes("partial"),
      1,
      true,
    ),
    check: cut,
  },
  {
    name: "an error event in the middle of the stream",
    script: (d) => [{
      raw: { status: 200, headers: sseHeaders, body: errorEvent(d) },
    }],
    check: (run) => assert.deepEqual(run.runs, []),
  },
  { name: "429", script: refusal(429, "rate_limit_error") },
  {
    name: "429 with retry-after",
    script: refusal(429, "rate_limit_error", { "retry-after": "1" }),
  },
  {
    name: "429 with retry-after-ms",
    script: refusal(429, "rate_limit_error", { "retry-after-ms": "100" }),
  },
  { name: "500", script: refusal(500, "api_error") },
  {
    name: "500 with retry-after",
    script: refusal(500, "api_error", { "retry-after": "1" }),
  },
  { name: "503", script: refusal(503, "api_error") },
  { name: "529", script: refusal(529, "overloaded_error") },
  {
    name: "529 with retry-after",
    script: refusal(529, "overloaded_error", { "retry-after": "1" }),
  },
  {
    name: "a context overflow with no compaction policy",
    script: () => [{ refuse: "overflow" }],
    check: (run) => failedWith(firstExit(run), "InvalidRequestError"),
  },
  {
    name: "400 for an invalid request",
    script: refusal(400, "invalid_request_error"),
    check: (run) => failedWith(firstExit(run), "InvalidRequestError"),
  },
  {
    name: "5 MB of tool arguments",
    script: () => [{
      calls: [read("call_big", "x".repeat(5 * 1024 * 1024))],
    }],
    check: (run) => {
      assert.equal(run.runs.length, 1);
      assert.equal(run.runs[0]?.length, 5 * 1024 * 1024);
    },
  },
  {
    name: "tool arguments that are not JSON",
    script: () => [{
      calls: [{ id: "call_bad", name: "read", args: '{"path":' }],
    }],
    check: invalidArguments,
  },
  {
    name: "tool arguments that are not an object",
    script:
      () => [{ calls: [{ id: "call_arr", name: "read", args: "[1,2]" }] }],
    check: invalidArguments,
  },
  {
    name: "tool arguments of the wrong shape",
    script: () => [{
      calls: [{ id: "call_shape", name: "read", args: '{"file":1}' }],
    }],
    check: invalidArguments,
  },
  {
    name: "a call to an unknown tool",
    script: () => [{
      calls: [{ id: "call_rm", name: "delete_everything", args: "{}" }],
    }],
    check: (run) =>
      assert.deepEqual(resultCodes(run.session), ["TOOL_NOT_FOUND"]),
  },
  { name: "an empty answer", script: () => [{}] },
  { name: "an empty text", script: () => [{ text: "" }] },
  {
    name: "the same call id twice in one answer",
    script: () => [{ calls: [read("call_0", "a"), read("call_0", "b")] }],
    check: (run) => {
      assert.deepEqual(run.runs, ["a", "b"]);
      const outcome = run.exits[0];
      assert.ok(outcome !== undefined && Exit.isSuccess(outcome));
      assert.equal(outcome.value.steps, 2);
    },
  },
  {
    name: "the same call id in every turn",
    turns: 3,
    script: () => [
      { calls: [read("call_0", "a")] },
      { text: "Read a." },
      { calls: [read("call_0", "b")] },
      { text: "Read b." },
      { calls: [read("call_0", "c")] },
      { text: "Read c." },
    ],
    check: (run) => {
      assert.deepEqual(run.runs, ["a", "b", "c"]);
      assert.deepEqual(
        run.exits.map((e) => Exit.isSuccess(e) ? e.value.steps : -1),
        [2, 2, 2],
      );
    },
  },
  {
    name: "a stream that stalls before the headers",
    idleTimeout: "300 millis",
    script: () => [{ stall: true }],
    check: async (run) => {
      failedWith(firstExit(run), "NetworkError");
      await settled(run.clientAborted, "the abort of the stalled request");
    },
  },
  {
    name: "a stream that stalls in the middle of the text",
    idleTimeout: "300 millis",
    script: () => [{ text: "Thinking about it", hang: true }],
    check: async (run) => {
      failedWith(firstExit(run), "NetworkError");
      await settled(run.server.aborted, "the abort of the stalled request");
      const [answer] = answersOf(run.session);
      assert.equal(answer?.data.interrupted, true);
    },
  },
];

/**
 * Waits for `promise`, failing (instead of hanging the suite) if it has not
 * settled after 10 s: a bound on a broken run, not a timing assertion.
 */
const settled = (promise: Promise<void>, what: string): Promise<void> =>
  within(promise, 10_000, `${what} did not happen`);

/**
 * `run`, failing if it has not settled after 60 s (a turn that waits
 * forever): a bound on a broken run, not a timing assertion. The run is
 * left behind; the suite fails.
 */
const bounded = (run: Promise<void>, what: string): Promise<void> =>
  within(run, 60_000, `${what} did not end`);

type Item = Record<string, unknown>;

/** The objects of a list in a request body (none when it is no list). */
const items = (v: unknown): Item[] =>
  Array.isArray(v)
    ? v.filter((x): x is Item => typeof x === "object" && x !== null)
    : [];

/**
 * Where each dialect's request body keeps its calls and results: the list
 * they are in, and the call ids and result ids one item of it holds.
 */
const ID_READERS: Record<Dialect, {
  readonly list: string;
  readonly calls: (item: Item) => unknown[];
  readonly results: (item: Item) => unknown[];
}> = {
  "openai-responses": {
    list: "input",
    calls: (i) => i["type"] === "function_call" ? [i["call_id"]] : [],
    results: (i) => i["type"] === "function_call_output" ? [i["call_id"]] : [],
  },
  "openai-chat": {
    list: "messages",
    calls: (m) => items(m["tool_calls"]).map((call) => call["id"]),
    results: (m) => m["role"] === "tool" ? [m["tool_call_id"]] : [],
  },
  "anthropic": {
    list: "messages",
    calls: (m) =>
      items(m["content"]).flatMap((b) =>
        b["type"] === "tool_use" ? [b["id"]] : []
      ),
    results: (m) =>
      items(m["content"]).flatMap((b) =>
        b["type"] === "tool_result" ? [b["tool_use_id"]] : []
      ),
  },
};

/** The call ids and result ids of a request body, in order. */
const pairsIn = (
  dialect: Dialect,
  body: Record<string, unknown>,
): { calls: string[]; results: string[] } => {
  const { list, calls, results } = ID_READERS[dialect];
  const str = (v: unknown) => (typeof v === "string" ? v : "?");
  const all = items(body[list]);
  return {
    calls: all.flatMap(calls).map(str),
    results: all.flatMap(results).map(str),
  };
};

/** Figures across the campaign, printed by the last test. */
const tally = {
  runs: 0,
  requests: 0,
  failedTurns: 0,
  completedTurns: 0,
  followUps: 0,
};

/** Each run's fault turns, as `completed` or the error's reason. */
const outcomes: Array<{
  fault: string;
  dialect: Dialect;
  outcome: string;
  requests: number;
}> = [];

const outcomeOf = (exit: Exit.Exit<TurnOutcome, unknown>): string => {
  if (Exit.isSuccess(exit)) return exit.value.reason;
  const error = Exit.findErrorOption(exit);
  const value: unknown = error._tag === "Some" ? error.value : undefined;
  return typeof value === "object" && value !== null && "reason" in value &&
      typeof value.reason === "object" && value.reason !== null &&
      "_tag" in value.reason
    ? String(value.reason._tag)
    : "?";
};

const json = (events: ReadonlyArray<SessionEvent>) =>
  events.map((e) => JSON.stringify(e));

const runFault = async (fault: Fault, dialect: Dialect): Promise<void> => {
  const server = serveLoopback(dialect, { stream: fault.script(dialect) });
  const root = tempDir("palimpsest-faults-");
  const runs: string[] = [];
  const watch = abortWatch();
  try {
    const model = modelFor(dialect, server.baseURL, watch.fetch);
    const layer = Layer.mergeAll(
      Layer.effect(
        LanguageModel.LanguageModel,
        makeAiSdkModel(model, { settings: { maxOutputTokens: 1024 } }),
      ),
      layerJsonlStore({ root }),
      tools.toLayer({
        read: ({ path }) =>
          Effect.sync(() => {
            runs.push(path);
            return `contents of ${path.slice(0, 40)}`;
          }),
      }),
    );
    const faultTurns = fault.turns ?? 1;
    const { exits, next, session, acknowledged, reopened } = await Effect
      .runPromise(
        Effect.gen(function* () {
          const { store, handle } = yield* newSession();
          const toolkit = yield* tools;
          // One request per turn: each fault is served once, and what the
          // turn does with it is the point (a passing failure would be sent
          // again and meet the next scripted answer; retries have tests of
          // their own, in tests/ai/retry_test.ts and the loopback tests).
          const turn = (input: string) =>
            Effect.exit(runTurn({
              handle,
              toolkit,
              model: { provider: model.provider, model: model.modelId },
              input,
              retry: 0,
              ...(fault.idleTimeout === undefined
                ? {}
                : { idleTimeout: fault.idleTimeout }),
            }));
          const exits: Exit.Exit<TurnOutcome, unknown>[] = [];
          for (let i = 0; i < faultTurns; i++) {
            exits.push(yield* turn(`read file ${i}`));
          }
          const next = yield* turn("go on");
          const session = handle.session;
          const acknowledged = Result.getOrThrow(Session.events(session));
          yield* store.close(handle);
          const reader = yield* store.open("s");
          return {
            exits,
            next,
            session,
            acknowledged,
            reopened: reader.session,
          };
        }).pipe(Effect.scoped, Effect.provide(layer)),
      );
    tally.runs++;
    tally.requests += server.requests.length;
    outcomes.push({
      fault: fault.name,
      dialect,
      outcome: exits.map(outcomeOf).join(", "),
      requests: server.requests.length,
    });
    for (const exit of exits) {
      // An outcome, or a typed model error: never a defect or interruption.
      if (Exit.isSuccess(exit)) {
        tally.completedTurns++;
        continue;
      }
      tally.failedTurns++;
      assert.ok(
        exit.cause.reasons.every((r) =>
          r._tag === "Fail" && typeof r.error === "object" &&
          r.error !== null && "_tag" in r.error && r.error._tag === "AiError"
        ),
        `a typed AiError, not ${String(exit.cause)}`,
      );
    }
    assert.ok(Exit.isSuccess(next), `the next turn: ${String(next)}`);
    assert.equal(next.value.reason, "completed");
    tally.followUps++;
    assert.deepEqual(
      server.requests.filter((r) => r.errors.length > 0).map((r) => ({
        path: r.path,
        errors: r.errors.slice(0, 3),
      })),
      [],
    );
    const last = server.requests.at(-1);
    assert.ok(last !== undefined);
    const { calls, results } = pairsIn(dialect, last.body);
    assert.equal(new Set(calls).size, calls.length, "call ids are distinct");
    assert.deepEqual([...results].sort(), [...calls].sort());
    // Nothing acknowledged lost, nothing open, a clean transcript.
    assert.deepEqual(
      json(Result.getOrThrow(Session.events(reopened))),
      json(acknowledged),
    );
    const open = openWork(Result.getOrThrow(Session.events(reopened)));
    assert.deepEqual([open.turns.length, open.compactions.length], [0, 0]);
    assert.deepEqual(checkTranscript(deriveMessages(reopened.surface)), []);
    // A tool ran only for a call answered by its own result.
    assert.equal(
      runs.length,
      resultCodes(session).filter((c) => c === "ok").length,
    );
    await fault.check?.({
      dialect,
      exits,
      session,
      server,
      clientAborted: watch.aborted,
      runs,
    });
  } finally {
    await server.close();
  }
};

for (const fault of FAULTS) {
  Deno.test(`provider fault: ${fault.name}`, async () => {
    const failures = (await Promise.allSettled(
      DIALECTS.map((dialect) =>
        bounded(runFault(fault, dialect), `${fault.name} on ${dialect}`)
      ),
    )).flatMap((r, i) =>
      r.status === "rejected" ? [`${DIALECTS[i]}: ${String(r.reason)}`] : []
    );
    assert.deepEqual(failures, []);
  });
}

Deno.test("provider-fault campaign figures", () => {
  for (const fault of FAULTS) {
    const row = DIALECTS.map((dialect) => {
      const run = outcomes.find((o) =>
        o.fault === fault.name && o.dialect === dialect
      );
      return run === undefined ? "-" : `${run.outcome} (${run.requests})`;
    });
    console.log(`| ${fault.name} | ${row.join(" | ")} |`);
  }
  console.log(
    `provider faults: ${FAULTS.length} faults × ${DIALECTS.length} clients = ${tally.runs} runs, ${tally.requests} requests, ${tally.completedTurns} fault turns completed and ${tally.failedTurns} failed with a typed error, ${tally.followUps} next turns valid and paired`,
  );
  assert.equal(tally.runs, FAULTS.length * DIALECTS.length);
  assert.equal(tally.followUps, tally.runs);
});
