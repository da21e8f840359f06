/**
 * The partial answer: while a request streams, the turn loop appends its
 * parts in bounded batches as `assistant/partial` events (log-only), and
 * nothing the model or the surface sees changes.
 */
import {
  type AssistantPartialEvent,
  deriveMessages,
  isSurfaceEvent,
  Session,
  type SessionEvent,
} from "@palimpsest/session";
import { runTurn, type RunTurnOptions } from "@palimpsest/session/ai";
import { toAnthropic, toOpenAIChat } from "@palimpsest/session/providers";
import { Effect, Layer, Result, Stream } from "effect";
import { LanguageModel, type Prompt, type Response, Toolkit } from "effect/ai";
import assert from "node:assert/strict";
import { finish, scriptedModel, type StreamReply } from "./_scripted.ts";
import { tempDir } from "../_helpers/store.ts";
import { layerJsonlStore } from "@palimpsest/session";
import { newSession } from "./_session.ts";
import {
  isPrefixOf,
  partialData,
  said,
  streamedPart,
  userGo,
} from "../_helpers/partial_stream.ts";
import {
  readHandlers as handlers,
  readTools as tools,
  scriptedModelId as model,
} from "./_read_tool.ts";

/** A first answer with reasoning, text and a call whose arguments stream. */
const firstAnswer: ReadonlyArray<Response.StreamPartEncoded> = [
  ...streamedPart("reasoning", "r", ["The user wants ", "a file."]),
  ...streamedPart("text", "t", ["Let me ", "read it."]),
  ...streamedPart("tool-params", "c1", ['{"path":', '"a.txt"}'], "read"),
  { type: "tool-call", id: "c1", name: "read", params: { path: "a.txt" } },
  finish("tool-calls"),
];
const secondAnswer: ReadonlyArray<Response.StreamPartEncoded> = [
  ...streamedPart("text", "t", ["It says ", "hello."]),
  finish("stop"),
];
const script: ReadonlyArray<StreamReply> = [
  { parts: firstAnswer },
  { parts: secondAnswer },
];

type Options = Partial<RunTurnOptions<Toolkit.Tools<typeof tools>>>;

/** One turn of `script` in a fresh JSONL store; the events and prompts. */
const turnOf = (options: Options, checkpointed = false) => {
  const scripted = scriptedModel({ stream: script });
  const root = tempDir("palimpsest-partial-");
  return Effect.runPromise(
    Effect.gen(function* () {
      const { store, handle } = yield* newSession();
      const outcome = yield* runTurn({
        handle,
        toolkit: yield* tools,
        model,
        input: "What is in a.txt?",
        ...options,
      });
      if (checkpointed) yield* store.checkpoint(handle);
      yield* store.close(handle);
      const reopened = yield* Effect.scoped(
        Effect.map(store.open("s"), (h) => h.session),
      );
      return {
        events: Result.getOrThrow(Session.events(outcome.session)),
        session: outcome.session,
        reopened,
        prompts: scripted.streamed,
      };
    }).pipe(
      Effect.scoped,
      Effect.provide(
        Layer.mergeAll(scripted.layer, handlers, layerJsonlStore({ root })),
      ),
    ),
  );
};

const partials = (
  events: ReadonlyArray<SessionEvent>,
): AssistantPartialEvent[] =>
  events.flatMap((e) => e.type === "assistant/partial" ? [e] : []);

/** What a model and a person see of a log, without seqs and ids. */
const seen = (session: Session) => {
  const messages = deriveMessages(session.surface).map((m) => ({
    ...m,
    id: "",
  }));
  return {
    messages,
    chat: toOpenAIChat(messages),
    anthropic: toAnthropic(messages),
  };
};

const prompts = (p: ReadonlyArray<Prompt.Prompt>): string => JSON.stringify(p);

Deno.test("a streaming answer's parts are appended as partial batches before its message", async () => {
  const run = await turnOf({ partial: { maxBytes: 1 } });
  const batches = partials(run.events);
  assert.ok(batches.length > 0);
  for (const batch of batches) {
    assert.equal(batch.ignorable, true);
    assert.equal(batch.surfaceOp, undefined);
  }
  // Per request: the batches, in order, say a prefix of what the settled
  // answer's stream says, each starting where the last one ended.
  const answers = run.events.flatMap((e) =>
    e.type === "assistant/message" ? [e] : []
  );
  assert.equal(answers.length, 2);
  for (const answer of answers) {
    const own = batches.filter((b) =>
      b.data.step === answer.data.step && b.seq < answer.seq
    );
    let offset = 0;
    for (const batch of own) {
      assert.equal(batch.data.offset, offset);
      offset += batch.data.stream.length;
    }
    const full = said(answer.data.stream.map((r) => r.chunk));
    const streamed = said(
      own.flatMap((b) => b.data.stream.map((r) => r.chunk)),
    );
    assert.ok(isPrefixOf(streamed, full));
    // With a bound of one byte every part is written as it comes.
    assert.deepEqual(streamed, full);
    assert.equal(offset, answer.data.stream.length);
  }
  // Never on the surface.
  const surfaced = new Set(
    run.events.filter(isSurfaceEvent).map((e) => e.seq),
  );
  for (const batch of batches) assert.ok(!surfaced.has(batch.seq));
});

Deno.test("partial batches change no request, no derived message, no reopened or checkpointed session", async () => {
  const without = await turnOf({ partial: false });
  const withPartials = await turnOf({ partial: { maxBytes: 1 } }, true);
  assert.equal(partials(without.events).length, 0);
  assert.ok(partials(withPartials.events).length > 0);
  assert.equal(prompts(withPartials.prompts), prompts(without.prompts));
  assert.deepEqual(seen(withPartials.session), seen(without.session));
  assert.deepEqual(seen(withPartials.reopened), seen(without.session));
  // The log is the same but for the partial events (and the seqs, ids
  // and times they shift).
  const rest = (events: ReadonlyArray<SessionEvent>): unknown =>
    JSON.parse(JSON.stringify(
      events.filter((e) => e.type !== "assistant/partial").map((e) => ({
        type: e.type,
        data: e.type === "assistant/message"
          ? {
            ...e.data,
            message: { ...e.data.message, id: "" },
            stream: e.data.stream.map((r) => r.chunk),
          }
          : e.type === "tool/result"
          ? { ...e.data, message: { ...e.data.message, id: "" } }
          : e.type === "user/message"
          ? { ...e.data, id: "" }
          : e.data,
      })),
    ));
  assert.deepEqual(rest(withPartials.events), rest(without.events));
});

Deno.test("a fast stream under both bounds writes no partial batch", async () => {
  const run = await turnOf({});
  assert.equal(partials(run.events).length, 0);
});

/** A model that streams `parts` one every `gap` milliseconds. */
const slowModel = (
  parts: ReadonlyArray<Response.StreamPartEncoded>,
  gap: number,
) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () => Effect.succeed([]),
      streamText: () =>
        Stream.fromIterable(parts).pipe(
          Stream.tap(() => Effect.sleep(gap)),
        ),
    }),
  );

Deno.test("a part that waits is written after the interval, with no new part to push it", async () => {
  const parts: ReadonlyArray<Response.StreamPartEncoded> = [
    ...streamedPart("text", "t", ["one ", "two ", "three"]),
    finish("stop"),
  ];
  const root = tempDir("palimpsest-partial-");
  const events = await Effect.runPromise(
    Effect.gen(function* () {
      const { handle } = yield* newSession();
      const outcome = yield* runTurn({
        handle,
        toolkit: yield* Toolkit.empty,
        model,
        input: "Count",
        partial: { interval: "5 millis" },
      });
      return Result.getOrThrow(Session.events(outcome.session));
    }).pipe(
      Effect.scoped,
      Effect.provide(
        Layer.mergeAll(slowModel(parts, 60), layerJsonlStore({ root })),
      ),
    ),
  );
  const batches = partials(events);
  // Each part waits 60 ms for the next: every one but the last (which the
  // settled message follows at once) is written by the timer alone.
  assert.ok(batches.length >= parts.length - 2, `${batches.length} batches`);
  const answer = events.find((e) => e.type === "assistant/message");
  assert.ok(answer?.type === "assistant/message");
  const streamed = said(
    batches.flatMap((b) => b.data.stream.map((r) => r.chunk)),
  );
  assert.ok(isPrefixOf(streamed, said(answer.data.stream.map((r) => r.chunk))));
});

/** A session a crash left mid-answer, then a turn run on it. */
const afterCrash = (options: Options) => {
  const scripted = scriptedModel({ stream: [{ parts: secondAnswer }] });
  const root = tempDir("palimpsest-partial-");
  return Effect.runPromise(
    Effect.gen(function* () {
      const { handle } = yield* newSession([
        { type: "turn/start", data: { turn: 0 } },
        { type: "user/message", surfaceOp: "append", data: userGo },
        { type: "step/start", data: { turn: 0, step: 0 } },
        {
          type: "assistant/partial",
          ignorable: true,
          data: partialData(0, 0, firstAnswer.slice(0, 11), {
            kind: "model",
            ...model,
          }),
        },
      ]);
      const outcome = yield* runTurn({
        handle,
        toolkit: yield* tools,
        model,
        input: "Again?",
        ...options,
      });
      return { outcome, prompt: JSON.stringify(scripted.streamed[0]) };
    }).pipe(
      Effect.scoped,
      Effect.provide(
        Layer.mergeAll(scripted.layer, handlers, layerJsonlStore({ root })),
      ),
    ),
  );
};

Deno.test("after a crash mid-answer, runTurn keeps the partial answer out of the request by default", async () => {
  const { outcome, prompt } = await afterCrash({});
  assert.deepEqual(outcome.recovered.map((e) => e.type), [
    "step/end",
    "turn/end",
  ]);
  assert.ok(!prompt.includes("Let me read it."));
  assert.ok(!prompt.includes("The user wants"));
});

Deno.test("with partialAnswer append, runTurn sends the partial answer's text as an interrupted message, without its call", async () => {
  const { outcome, prompt } = await afterCrash({ partialAnswer: "append" });
  const [message] = outcome.recovered;
  assert.ok(message?.type === "assistant/message");
  assert.equal(message.data.interrupted, true);
  assert.deepEqual(message.data.message.content, [
    { type: "reasoning", text: "The user wants a file." },
    { type: "text", text: "Let me read it." },
  ]);
  assert.ok(prompt.includes("Let me read it."));
  assert.ok(!prompt.includes('"a.txt"'));
});
