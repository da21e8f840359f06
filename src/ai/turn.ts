/**
 * The turn loop: one user turn of an agent, run on a `LanguageModel` and a
 * `Toolkit`, every step persisted through the session store as it happens.
 *
 * {@link runTurn} appends `turn/start`, the turn's system prompt when its
 * `system` option changed it (through `setSystemPrompt`, so replay
 * reproduces every request) and its input, then runs steps until the model
 * stops calling tools or the step limit is reached.
 * A step is:
 *
 * 1. `step/start`; then, with a compaction policy, `compactIfNeeded`.
 * 2. The prompt: the surface's messages paired (`pairToolCalls`, its
 *    repairs in the outcome's `repairs`), through `toPrompt`.
 * 3. The request: `LanguageModel.streamText`, tool-call resolution left to
 *    this loop, each part timed with `Clock`; one that sends no part for
 *    `idleTimeout` (5 minutes) is aborted with a `NetworkError`.
 * 4. The answer recorded (`recordAnswer`) and appended: an
 *    `assistant/message` embedding its stream, or an `assistant/attempt`.
 * 5. Each tool call in order: `tool/call` appended (durably, before the tool
 *    runs), the handler run, the `tool/result` appended citing it.
 * 6. `step/end`, and `turn/end` when the turn is over.
 *
 * Each of these is a named step over the turn's state record
 * (`turn_state.ts`), runnable alone: the turn's start and a step's parts in
 * `turn_steps.ts`, the request and its recovery in `turn_request.ts`;
 * {@link runTurn} is the loop over them.
 *
 * What a failure leaves (the whole policy: `docs/model-integration.md`):
 *
 * - **A model error** (a stream stalled past `idleTimeout` or ended without
 *   the provider's end included): the answer so far is appended as cut
 *   (`interrupted: true`, or an `assistant/attempt`), its calls answered
 *   with `TOOL_NOT_STARTED` results, not run. A passing failure
 *   (`isTransientError`) is sent again after a backoff or `retry-after`
 *   (`retry`, 2 by default; a `model-retry` event each). Otherwise, but for
 *   an overflow compaction fixed, the turn ends with reason `error` (the
 *   error's tag and message in `turn/end`) and fails with it.
 * - **Overflow recovery.** With a compaction policy, a request refused for
 *   its length ({@link isContextOverflow}) forces a compaction keeping at
 *   most half the refused request's estimate verbatim; it is sent again
 *   once under the refused size, at most `maxOverflowRetries` times, else
 *   the turn fails with `OverflowNotRecovered` and its reason.
 * - **A compaction refused or failed**: recorded by the engine's
 *   `compaction/end { error }`, reported in the outcome's `compactions`;
 *   the turn goes on uncompacted.
 * - **A tool error.** An error `tool/result` (`error.code`
 *   `TOOL_NOT_FOUND`, `INVALID_ARGUMENTS`, `TOOL_FAILED`); the turn goes on.
 *   A defect in a handler is not caught.
 * - **Interruption.** During the request the answer so far is appended as
 *   cut (an uninterruptible finalizer); during a tool its `tool/call` is
 *   already durable; `repair` closes the turn.
 *
 * What a crash left open is closed first: before `turn/start`, an open
 * turn or abandoned compaction is closed by `store.repair`, the closers
 * being the outcome's `recovered`; a turn never starts inside one. With
 * `onOpen: "refuse"` the turn writes nothing and fails with
 * {@link TurnInProgress} or {@link CompactionInProgress} (`live: false`).
 * While another `runTurn` runs on the same handle, it fails with
 * {@link TurnInProgress} (`live: true`).
 *
 * Reporting: `onEvent` hears each {@link TurnEvent}; {@link streamTurn}
 * is the turn as a `Stream`; the outcome sums the usage ({@link TurnUsage}).
 *
 * Ids: the assistant message is `assistant-<seq>`, a tool result
 * `tool-<seq>`, a string input `user-<seq>`, each with its own event's seq.
 * A call id the session already uses gets a fresh one (`recordAnswer`'s
 * `usedCallIds`), so pairing never takes a new call for an old one.
 * The turn number is one more than the last `turn/start`'s (0 first). A
 * tool result's text is the handler's result (a string, else its JSON).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import type { LanguageModel, Tool } from "effect/ai";
import type { SessionStore } from "../store/store.ts";
import {
  recoverOpenWork,
  runStep,
  startTurn,
  stopAtStepLimit,
} from "./turn_steps.ts";
import type { ToolMap } from "./turn_state.ts";
import type { RunTurnOptions, TurnError, TurnOutcome } from "./turn_types.ts";

/**
 * Runs one turn of an agent: see the module doc for the steps, the events
 * each appends and what a failure or an interruption leaves.
 *
 * @param options The handle, the toolkit, the model's name, the input, the
 * step limit and the compaction policy.
 * @returns `Effect<TurnOutcome, TurnError, SessionStore |
 * LanguageModel | the tools' handler services>`.
 *
 * @example One turn with a scripted model and one tool
 * ```ts
 * import { runTurn } from "@palimpsest/session/ai";
 * import { checkTranscript, deriveMessages, layerJsonlStore, SessionStore } from "@palimpsest/session";
 * import { Effect, Layer, Schema, Stream } from "effect";
 * import { LanguageModel, type Response, Tool, Toolkit } from "effect/ai";
 * import * as fs from "node:fs";
 * import * as os from "node:os";
 * import * as path from "node:path";
 * import assert from "node:assert/strict";
 *
 * const Clock = Tool.make("clock", { success: Schema.String });
 * const tools = Toolkit.make(Clock);
 * const answers: ReadonlyArray<ReadonlyArray<Response.StreamPartEncoded>> = [
 *   [{ type: "tool-call", id: "c1", name: "clock", params: {} }, { type: "finish", reason: "tool-calls", usage: { inputTokens: {}, outputTokens: {} } }],
 *   [{ type: "text-delta", id: "t", delta: "It is noon." }, { type: "finish", reason: "stop", usage: { inputTokens: {}, outputTokens: {} } }],
 * ];
 * let request = 0;
 * const model = Layer.effect(LanguageModel.LanguageModel, LanguageModel.make({
 *   generateText: () => Effect.succeed([]),
 *   streamText: () => Stream.fromIterable(answers[request++] ?? []),
 * }));
 * const root = fs.mkdtempSync(path.join(os.tmpdir(), "turn-"));
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   const handle = yield* store.create({ id: "s", createdAt: 0, isSeeded: false });
 *   const toolkit = yield* tools;
 *   const outcome = yield* runTurn({ handle, toolkit, model: { provider: "scripted", model: "m" }, input: "What time is it?" });
 *   yield* store.close(handle);
 *   return outcome;
 * });
 * const outcome = await Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(Layer.mergeAll(
 *   model, layerJsonlStore({ root }), tools.toLayer({ clock: () => Effect.succeed("12:00") }),
 * ))));
 * assert.equal(outcome.steps, 2);
 * assert.equal(outcome.reason, "completed");
 * assert.deepEqual(checkTranscript(deriveMessages(outcome.session.surface)), []);
 * ```
 */
export function runTurn<Tools extends Record<string, Tool.Any>>(
  options: RunTurnOptions<Tools>,
): Effect.Effect<
  TurnOutcome,
  TurnError,
  | SessionStore
  | LanguageModel.LanguageModel
  | Tool.HandlerServices<Tools[keyof Tools]>
> {
  return Effect.scoped(turnLoop(options));
}

/**
 * The turn as a loop over its steps (`turn_steps.ts`): what a crash left
 * open closed, the turn started, one step after another until one ends the
 * turn or the step limit is reached.
 */
const turnLoop = Effect.fnUntraced(function* <Tools extends ToolMap>(
  options: RunTurnOptions<Tools>,
) {
  const recovered = yield* recoverOpenWork(
    options.handle,
    options.onOpen,
    options.partialAnswer,
  );
  const state = yield* startTurn(options, recovered);
  for (let step = 0; step < state.maxSteps; step++) {
    const outcome = yield* runStep(state, step);
    if (outcome !== undefined) return outcome;
  }
  return yield* stopAtStepLimit(state);
});
