/**
 * Overflow recovery trusts the provider over the estimate: a model that
 * counts every character of dense text as a token refuses requests the
 * estimate (characters over four) says fit, and the forced compaction must
 * get the request under the size that was refused, or end the turn with a
 * typed reason.
 */
import assert from "node:assert/strict";
import { Effect, Layer, Result, Stream } from "effect";
import { AiError, LanguageModel, type Prompt, Toolkit } from "effect/ai";
import {
  checkTranscript,
  deriveMessages,
  Draft,
  type EventDraft,
  layerMemoryStore,
  Session,
} from "@palimpsest/session";
import { estimateTokensByChars, type TurnEvent } from "@palimpsest/session/ai";
import { finish, text } from "./_scripted.ts";
import { turnOnNewSession } from "./_session.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";

/** Characters of a prompt's text: the tokens this provider counts. */
const charsOf = (prompt: Prompt.Prompt): number => {
  let n = 0;
  for (const message of prompt.content) {
    if (typeof message.content === "string") {
      n += message.content.length;
      continue;
    }
    for (const part of message.content) {
      if (part.type === "text") n += part.text.length;
    }
  }
  return n;
};

/**
 * A provider whose window is `window` tokens and which counts one token
 * per character (dense code, CJK): it refuses a longer prompt as
 * providers do, and summarizes with a short text.
 */
const denseProvider = (window: number) => {
  const sent: number[] = [];
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () => Effect.succeed([{ type: "text", text: "摘要。" }]),
      streamText: (options) =>
        Stream.unwrap(Effect.sync(() => {
          const size = charsOf(options.prompt);
          sent.push(size);
          if (size > window) {
            return Stream.fail(AiError.make({
              module: "Dense",
              method: "streamText",
              reason: new AiError.InvalidRequestError({
                description:
                  `prompt is too long: ${size} tokens > ${window} maximum`,
              }),
            }));
          }
          return Stream.fromIterable([...text("好的。"), finish()]);
        })),
    }),
  );
  return { layer, sent };
};

const cjk = (n: number): string => "漢字仮名交じり文".repeat(n / 8);

const overflowTurn = (
  window: number,
  history: ReadonlyArray<EventDraft>,
  input: string,
) => {
  const provider = denseProvider(window);
  const events: TurnEvent[] = [];
  return Effect.runPromise(
    Effect.gen(function* () {
      const { handle, turn } = yield* turnOnNewSession(Toolkit.empty, {
        model: { provider: "dense", model: "m" },
        input,
        // The default keepTokens: half of maxTokens.
        compaction: { maxTokens: 100_000 },
        onEvent: (event) => Effect.sync(() => events.push(event)),
      }, history);
      const result = yield* Effect.result(
        turn.pipe(Effect.provide(provider.layer)),
      );
      return { result, events, session: handle.session, sent: provider.sent };
    }).pipe(Effect.scoped, Effect.provide(layerMemoryStore())),
  );
};

const history = Array.from(
  { length: 12 },
  (_, i) => Draft.user(cjk(2000), { id: `u${i}` }),
);

Deno.test("an overflow of dense text under the estimate's budget compacts until the provider accepts", async () => {
  const estimated = estimateTokensByChars(
    history.map((_, i) => ({
      id: `u${i}`,
      role: "user",
      content: [{ type: "text", text: cjk(2000) }],
      source: { kind: "user" },
    })),
  );
  // The estimate says the history fits well under keepTokens (50,000).
  assert.ok(estimated < 10_000, `${estimated}`);
  const { result, events, session, sent } = await overflowTurn(
    10_000,
    history,
    "続けて",
  );
  assert.equal(result._tag, "Success");
  // Refused at about 24,000 characters, accepted under the window.
  assert.ok((sent[0] ?? 0) > 10_000);
  assert.ok((sent.at(-1) ?? Infinity) <= 10_000, `${sent}`);
  // Each forced compaction shrank the estimate below the refused size.
  const forced = result._tag === "Success" ? result.success.compactions : [];
  assert.ok(forced.length >= 1);
  for (const report of forced) {
    assert.equal(report.forced, true);
    assert.equal(report.compacted, true);
    assert.ok((report.tokensAfter ?? Infinity) < (report.tokensBefore ?? 0));
  }
  assert.ok(events.some((e) => e.type === "compaction-done"));
  assert.equal(events.some((e) => e.type === "overflow-not-recovered"), false);
  // The question asked is kept verbatim.
  const last = deriveMessages(session.surface).at(-2);
  assert.deepEqual(last?.content, [{ type: "text", text: "続けて" }]);
  assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
});

Deno.test("an overflow that compaction cannot fix ends the turn with a typed reason, in the event stream and the log", async () => {
  // The newest message alone is over the window: it stays verbatim, the
  // older history is summarized, and then nothing is left to compact.
  const { result, events, session, sent } = await overflowTurn(
    10_000,
    history.slice(0, 3),
    cjk(12_000),
  );
  const error = thenFails(failureOf(result), "OverflowNotRecovered", {
    reason: "nothing-compactable",
    step: 0,
    turn: 0,
  });
  thenFails(error.error, "AiError");
  assert.ok(error.refusedTokens > 0);
  assert.ok(error.tokens <= error.refusedTokens);
  assert.equal(sent.length, 2);
  const said = events.flatMap((e) =>
    e.type === "overflow-not-recovered" ? [e.error] : []
  );
  assert.deepEqual(said, [error]);
  const end = Result.getOrThrow(Session.events(session)).at(-1);
  assert.ok(end?.type === "turn/end");
  assert.deepEqual(end.data.reason, {
    kind: "error",
    error: { _tag: "OverflowNotRecovered", message: error.message },
  });
  assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
});

Deno.test("a session with nothing to compact says so at once", async () => {
  const { result, sent } = await overflowTurn(100, [], cjk(400));
  thenFails(failureOf(result), "OverflowNotRecovered", {
    reason: "nothing-compactable",
    attempts: 1,
  });
  assert.equal(sent.length, 1);
});
