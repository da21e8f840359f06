/**
 * End to end through the real AI SDK clients: `@ai-sdk/openai` (Responses
 * and Chat Completions) and `@ai-sdk/anthropic`, pointed at a loopback
 * server that answers in each provider's wire format and validates every
 * request body against the provider's published schema. For each client: a
 * turn with parallel tool calls, an interrupted stream then `repair`, a
 * compaction, and a context-overflow refusal followed by compaction and a
 * retry. The last test prints the counts.
 */
import {
  checkTranscript,
  deriveMessages,
  Draft,
  type EventDraft,
  Session,
} from "@palimpsest/session";
import type {
  ModelRetry,
  TurnEvent,
  TurnOutcome,
} from "@palimpsest/session/ai";
import { layerAiSdkModel, makeAiSdkModel } from "@palimpsest/session/ai-sdk";
import { Effect, Exit, Fiber, Layer, Result, Schedule, Stream } from "effect";
import { LanguageModel } from "effect/ai";
import type {
  LanguageModelV4,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import assert from "node:assert/strict";
import {
  type Dialect,
  DIALECTS,
  type Loopback,
  modelFor,
  serveLoopback,
  type StreamAnswer,
} from "./_loopback.ts";
import { tempStore } from "../ai/_scripted.ts";
import { schemaChecks } from "../_helpers/provider_schemas.ts";
import { turnOnNewSession } from "../ai/_session.ts";
import { toolLayer, tools } from "./_tools.ts";
import { drafts, toolResultDraft } from "../_helpers/build.ts";
import { within } from "../_helpers/deadline.ts";

const long = (n: number) =>
  "lorem ipsum ".repeat(Math.ceil(n / 12)).slice(0, n);
const history: ReadonlyArray<EventDraft> = [
  Draft.system("Be brief.", { id: "sys" }),
  Draft.user(long(1200), { id: "u0" }),
  Draft.user(long(1200), { id: "u1" }),
  Draft.user(long(400), { id: "u2" }),
  Draft.user("short", { id: "u3" }),
];

/** Counts across every test, printed by the last one. */
const tally = {
  requests: 0,
  validated: 0,
  invalid: 0,
  streamParts: 0,
  repairs: 0,
  compactions: 0,
};

const streamPartsOf = (session: Session): number =>
  Result.getOrThrow(Session.events(session)).reduce(
    (n, e) =>
      e.type === "assistant/message" || e.type === "assistant/attempt"
        ? n + (e.data.stream?.length ?? 0)
        : n,
    0,
  );

/** Checks and counts the bodies the server received. */
const settle = (server: Loopback, session?: Session) => {
  for (const request of server.requests) {
    tally.requests++;
    tally.validated++;
    if (request.errors.length > 0) tally.invalid++;
  }
  if (session !== undefined) {
    tally.streamParts += streamPartsOf(session);
    tally.compactions += session.surface.replacements;
  }
  assert.deepEqual(
    server.requests.filter((r) => r.errors.length > 0).map((r) => ({
      path: r.path,
      errors: r.errors,
    })),
    [],
  );
  assert.deepEqual(
    server.requests.filter((r) => r.toolsMissing).map((r) => r.body),
    [],
    "a body with tool blocks defines its tools",
  );
};

interface Run {
  readonly outcome: Exit.Exit<TurnOutcome, unknown>;
  readonly session: Session;
  readonly server: Loopback;
  readonly events: ReadonlyArray<TurnEvent>;
}

const runOn = async (
  dialect: Dialect,
  script: {
    stream: ReadonlyArray<StreamAnswer>;
    summaries?: ReadonlyArray<string>;
  },
  options: {
    drafts?: ReadonlyArray<EventDraft>;
    compaction?: { maxTokens: number; keepTokens: number };
    input?: string;
    retry?: ModelRetry;
  } = {},
): Promise<Run> => {
  const server = serveLoopback(dialect, script);
  const events: TurnEvent[] = [];
  try {
    const model = modelFor(dialect, server.baseURL);
    const layer = Layer.effect(
      LanguageModel.LanguageModel,
      makeAiSdkModel(model, { settings: { maxOutputTokens: 1024 } }),
    );
    const { outcome, session } = await Effect.runPromise(
      Effect.gen(function* () {
        const { store, handle, turn } = yield* turnOnNewSession(tools, {
          model: { provider: model.provider, model: model.modelId },
          input: options.input ?? "go on",
          ...(options.compaction === undefined
            ? {}
            : { compaction: options.compaction }),
          ...(options.retry === undefined ? {} : { retry: options.retry }),
          onEvent: (event) => Effect.sync(() => events.push(event)),
        }, options.drafts);
        const outcome = yield* Effect.exit(turn);
        const session = handle.session;
        yield* store.close(handle);
        return { outcome, session };
      }).pipe(
        Effect.scoped,
        Effect.provide(Layer.mergeAll(layer, tempStore(), toolLayer)),
      ),
    );
    settle(server, session);
    return { outcome, session, server, events };
  } finally {
    await server.close();
  }
};

/**
 * Waits for `promise`, failing (instead of hanging the suite) if it has not
 * settled after 10 s: a bound on a broken run, not a timing assertion.
 */
const settled = (promise: Promise<void>, what: string): Promise<void> =>
  within(promise, 10_000, `${what} did not happen`);

/** The number of tool results the provider body carries back. */
/**
 * The model with its stream handed over one part per read, calling
 * `onDelivered` when the reader asks for the part after the first text
 * delta: by then the delta has gone through the adapter to the turn loop.
 */
const afterFirstDelta = (
  model: LanguageModelV4,
  onDelivered: () => void,
): LanguageModelV4 => ({
  specificationVersion: "v4",
  provider: model.provider,
  modelId: model.modelId,
  supportedUrls: model.supportedUrls,
  doGenerate: (options) => model.doGenerate(options),
  doStream: async (options) => {
    const result = await model.doStream(options);
    const reader = result.stream.getReader();
    let seen = false;
    return {
      ...result,
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        async pull(controller) {
          if (seen) onDelivered();
          const next = await reader.read();
          if (next.done) return controller.close();
          if (next.value.type === "text-delta" && next.value.delta !== "") {
            seen = true;
          }
          controller.enqueue(next.value);
        },
        cancel: (reason) => reader.cancel(reason),
      }, { highWaterMark: 0 }),
    };
  },
});

const resultsIn = (dialect: Dialect, body: Record<string, unknown>): number => {
  const items = JSON.stringify(
    dialect === "openai-responses" ? body["input"] : body["messages"],
  );
  const key = dialect === "openai-responses"
    ? '"type":"function_call_output"'
    : dialect === "openai-chat"
    ? '"role":"tool"'
    : '"type":"tool_result"';
  return items.split(key).length - 1;
};

for (const dialect of DIALECTS) {
  Deno.test(`${dialect}: a turn with parallel tool calls`, async () => {
    const { outcome, session, server } = await runOn(dialect, {
      stream: [
        {
          text: "Reading both.",
          calls: [
            { id: "call_a", name: "read", args: '{"path":"a.txt"}' },
            { id: "call_b", name: "read", args: '{"path":"b.txt"}' },
          ],
        },
        { text: "Both files are read." },
      ],
    }, { input: "read a.txt and b.txt" });
    assert.ok(Exit.isSuccess(outcome));
    assert.equal(outcome.value.steps, 2);
    assert.equal(outcome.value.reason, "completed");
    assert.equal(server.requests.length, 2);
    assert.ok(server.requests.every((r) => r.streamed));
    const second = server.requests[1]?.body ?? {};
    assert.equal(resultsIn(dialect, second), 2);
    assert.deepEqual(second["tools"] === undefined, false);
    const messages = deriveMessages(session.surface);
    assert.deepEqual(checkTranscript(messages), []);
    assert.deepEqual(
      messages.flatMap((m) =>
        m.content.flatMap((b) =>
          b.type === "tool-call" ? [[b.id, b.name, b.arguments]] : []
        )
      ),
      [
        ["call_a", "read", '{"path":"a.txt"}'],
        ["call_b", "read", '{"path":"b.txt"}'],
      ],
    );
    assert.equal(
      messages.at(-1)?.content.find((b) => b.type === "text")?.type,
      "text",
    );
  });

  Deno.test(`${dialect}: an interrupted stream aborts the request and repair closes the turn`, async () => {
    const server = serveLoopback(dialect, {
      stream: [{ text: "Partial answer", hang: true }],
    });
    try {
      const model = modelFor(dialect, server.baseURL);
      let received = (): void => {};
      const delivered = new Promise<void>((resolve) => {
        received = resolve;
      });
      const tapped = Layer.effect(
        LanguageModel.LanguageModel,
        makeAiSdkModel(afterFirstDelta(model, () => received()), {
          settings: { maxOutputTokens: 1024 },
        }),
      );
      const { session, closers } = await Effect.runPromise(
        Effect.gen(function* () {
          const { store, handle, turn } = yield* turnOnNewSession(tools, {
            model: { provider: model.provider, model: model.modelId },
            input: "write a long answer",
          });
          const fiber = yield* Effect.forkChild(turn);
          yield* Effect.promise(() => delivered);
          yield* Fiber.interrupt(fiber);
          const repaired = yield* store.repair(handle);
          const session = repaired.session;
          yield* store.close(handle);
          return { session, closers: repaired.closers };
        }).pipe(
          Effect.scoped,
          Effect.provide(Layer.mergeAll(tapped, tempStore(), toolLayer)),
        ),
      );
      await settled(server.aborted, "the abort of the request");
      tally.repairs += closers.length > 0 ? 1 : 0;
      settle(server, session);
      assert.ok(closers.length > 0);
      assert.equal(server.requests.length, 1);
      const messages = deriveMessages(session.surface);
      assert.deepEqual(checkTranscript(messages), []);
      const cut = Result.getOrThrow(Session.events(session)).find((e) =>
        e.type === "assistant/message"
      );
      assert.equal(
        cut?.type === "assistant/message" ? cut.data.interrupted : undefined,
        true,
      );
    } finally {
      await server.close();
    }
  });

  Deno.test(`${dialect}: interrupting before the response aborts the HTTP request`, async () => {
    const server = serveLoopback(dialect, { stream: [{ stall: true }] });
    try {
      const model = modelFor(dialect, server.baseURL);
      await Effect.runPromise(
        Effect.gen(function* () {
          const fiber = yield* Effect.forkChild(
            Stream.runDrain(LanguageModel.streamText({ prompt: "hi" })),
          );
          yield* Effect.promise(() => server.stalled);
          yield* Fiber.interrupt(fiber);
        }).pipe(Effect.provide(layerAiSdkModel(model))),
      );
      // Resolves only when the server saw the connection close.
      await settled(server.aborted, "the abort of the request");
      settle(server);
      assert.equal(server.requests.length, 1);
    } finally {
      await server.close();
    }
  });

  Deno.test(`${dialect}: a compaction runs through the client's plain request`, async () => {
    const { outcome, session, server } = await runOn(dialect, {
      stream: [{ text: "Carrying on." }],
      summaries: ["Earlier: two long notes."],
    }, { drafts: history, compaction: { maxTokens: 400, keepTokens: 150 } });
    assert.ok(Exit.isSuccess(outcome));
    assert.deepEqual(server.requests.map((r) => r.streamed), [false, true]);
    assert.equal(session.surface.replacements, 1);
    assert.ok(
      JSON.stringify(server.requests[1]?.body).includes(
        "Earlier: two long notes.",
      ),
    );
    assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
  });

  Deno.test(`${dialect}: an overloaded provider is retried with its status kept, and the turn completes`, async () => {
    const { outcome, session, server, events } = await runOn(dialect, {
      stream: [
        { refuse: "overloaded", retryAfterMs: 0 },
        { refuse: "overloaded", retryAfterMs: 0 },
        { text: "Back." },
      ],
    }, { retry: Schedule.recurs(2) });
    assert.ok(Exit.isSuccess(outcome));
    assert.equal(server.requests.length, 3);
    const retried = events.flatMap((e) =>
      e.type === "model-retry" ? [e.error.reason] : []
    );
    const status = dialect === "anthropic" ? 529 : 503;
    assert.deepEqual(
      retried.map((r) => [
        r._tag,
        "http" in r ? r.http?.response?.status : undefined,
      ]),
      [["InternalProviderError", status], ["InternalProviderError", status]],
    );
    assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
  });

  Deno.test(`${dialect}: the summary of a range with tool calls sends the tools with tool choice none`, async () => {
    const withCalls: ReadonlyArray<EventDraft> = [
      Draft.system("Be brief.", { id: "sys" }),
      Draft.user(long(1200), { id: "u0" }),
      drafts.assistant("a0", "", ["k1"]),
      drafts.toolCall("k1"),
      toolResultDraft(0, 0, "k1", long(1200)),
      Draft.user(long(400), { id: "u1" }),
      Draft.user("short", { id: "u2" }),
    ];
    const { outcome, server } = await runOn(dialect, {
      stream: [{ text: "Carrying on." }],
      summaries: ["Earlier: a file was read."],
    }, { drafts: withCalls, compaction: { maxTokens: 400, keepTokens: 150 } });
    assert.ok(Exit.isSuccess(outcome));
    const summary = server.requests[0];
    assert.equal(summary?.streamed, false);
    const body = summary?.body ?? {};
    assert.ok(JSON.stringify(body).includes("k1"), "the range holds the call");
    const tools = body["tools"];
    assert.ok(Array.isArray(tools) && tools.length === 1);
    assert.deepEqual(
      body["tool_choice"],
      dialect === "anthropic" ? { type: "none" } : "none",
    );
  });

  Deno.test(`${dialect}: a context-overflow refusal compacts and retries`, async () => {
    const { outcome, session, server } = await runOn(dialect, {
      stream: [{ refuse: "overflow" }, { text: "Carrying on." }],
      summaries: ["Earlier: two long notes."],
    }, {
      drafts: history,
      compaction: { maxTokens: 100_000, keepTokens: 150 },
    });
    assert.ok(Exit.isSuccess(outcome));
    assert.deepEqual(server.requests.map((r) => r.streamed), [
      true,
      false,
      true,
    ]);
    assert.equal(session.surface.replacements, 1);
    assert.ok(
      JSON.stringify(server.requests[2]?.body).length <
        JSON.stringify(server.requests[0]?.body).length,
    );
    assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
  });
}

Deno.test("the loopback's schemas refuse a body with no model or messages", () => {
  const checks = schemaChecks();
  for (
    const target of [
      "OpenAI Responses",
      "OpenAI Chat",
      "Anthropic Messages",
    ] as const
  ) {
    assert.notDeepEqual(checks[target]({ stream: true, tools: 1 }), [], target);
  }
});

Deno.test("loopback end-to-end counts", () => {
  console.log(
    `AI SDK loopback: ${tally.requests} requests, ${tally.validated} bodies validated (${tally.invalid} invalid), ${tally.streamParts} stream parts recorded, ${tally.repairs} repairs, ${tally.compactions} compactions`,
  );
  assert.equal(tally.invalid, 0);
  assert.ok(tally.requests > 0);
});
