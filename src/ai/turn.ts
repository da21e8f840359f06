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
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Stream from "effect/Stream";
import { LanguageModel, type Tool } from "effect/ai";
import type { SessionSeq } from "../seq.ts";
import type { SessionEvent, TurnEndReason } from "../event.ts";
import { type EventDraft, knownEventAt, Session } from "../session.ts";
import { heldEvents } from "../prior.ts";
import { Draft } from "../drafts.ts";
import { openWork, TOOL_NOT_STARTED } from "../repair.ts";
import { SessionStore } from "../store/store.ts";
import { holdTurn, liveWork } from "../store/live.ts";
import { appendDrafts } from "./_store.ts";
import {
  recordAnswer,
  type RecordedAnswer,
  sessionCallIds,
  type TimedPart,
} from "./record.ts";
import {
  compactIfNeeded,
  type CompactionPolicy,
  isContextOverflow,
} from "./compaction.ts";
import { CompactionInProgress, TurnInProgress } from "./errors.ts";
import { makeRetrier, type Retrier } from "./retry.ts";
import {
  failureOf,
  overflowVerdict,
  pairedMessages,
  retryEvent,
} from "./turn_recovery.ts";
import { estimateTokensByChars } from "../tokens.ts";
import { toPrompt } from "./prompt.ts";
import { setSystemPrompt } from "../history/system_prompt.ts";
import {
  addUsage,
  chunkOf,
  DEFAULT_IDLE_TIMEOUT,
  endReasonOf,
  executeTool,
  nextTurn,
  seqOfNext,
  type UsageSums,
  withIdleTimeout,
} from "./turn_parts.ts";
import type { StoreAppendError } from "./_store.ts";
import type {
  CompactionRefusal,
  CompactionReport,
  RequestRepairs,
  RunTurnOptions,
  TurnError,
  TurnEvent,
  TurnOutcome,
} from "./turn_types.ts";

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
  return Effect.scoped(Effect.gen(function* () {
    const { handle, toolkit } = options;
    const maxSteps = Math.max(1, Math.floor(options.maxSteps ?? 8));
    const overflowTest = options.isContextOverflow ?? isContextOverflow;
    const maxRetries = Math.max(0, options.maxOverflowRetries ?? 2);
    const idleTimeout = options.idleTimeout ?? DEFAULT_IDLE_TIMEOUT;
    const source = {
      kind: "model" as const,
      provider: options.model.provider,
      model: options.model.model,
    };
    const store = yield* SessionStore;
    let recovered: ReadonlyArray<SessionEvent> = [];
    {
      const live = liveWork(handle);
      const open = openWork(heldEvents(handle.session));
      const running = open.turns.find((t) => live.turns.has(t.turn));
      if (running !== undefined) {
        return yield* new TurnInProgress({
          turn: running.turn,
          startSeq: running.startSeq,
          live: true,
        });
      }
      // Nothing of another running turn is in the log yet: holdTurn below
      // refuses it.
      const [turnLeft] = open.turns;
      const [compactionLeft] = open.compactions.filter((c) =>
        !live.compactions.has(c.compactionId)
      );
      if (options.onOpen === "refuse") {
        if (turnLeft !== undefined) {
          return yield* new TurnInProgress({
            turn: turnLeft.turn,
            startSeq: turnLeft.startSeq,
            live: false,
          });
        }
        if (compactionLeft !== undefined) {
          return yield* new CompactionInProgress({
            ...compactionLeft,
            live: false,
          });
        }
      } else if (turnLeft !== undefined || compactionLeft !== undefined) {
        recovered = (yield* store.repair(handle)).closers;
      }
    }
    const turn = nextTurn(handle.session);
    const held = yield* holdTurn(handle, turn, seqOfNext(handle));
    if (held !== undefined) {
      return yield* new TurnInProgress({
        turn: held.key,
        startSeq: held.startSeq,
        live: true,
      });
    }
    const compactions: CompactionReport[] = [];
    const repairs: RequestRepairs[] = [];
    const inputAt = (seq: number): ReadonlyArray<EventDraft> =>
      typeof options.input === "string"
        ? [Draft.user(options.input, { id: `user-${seq}` })]
        : options.input ?? [];
    const system = options.system;
    if (system === undefined) {
      yield* appendDrafts(handle, [
        Draft.turnStart(turn),
        ...inputAt(Session.nextSeq(handle.session) + 1),
      ]);
    } else {
      // One batch: turn/start, the prompt when it changed, the input; a
      // refused prompt stores none of it.
      yield* store.update(handle, (session) =>
        Effect.gen(function* () {
          const started = yield* Session.append(session, Draft.turnStart(turn));
          const prompted = yield* setSystemPrompt(started, system);
          return yield* Session.appendAll(
            prompted,
            inputAt(Session.nextSeq(prompted)),
          );
        })).pipe(
          Effect.catchTag("NotAnAppend", (error) => Effect.die(error)),
        );
    }
    const emit = (event: TurnEvent): Effect.Effect<void> =>
      options.onEvent === undefined ? Effect.void : options.onEvent(event);
    const usage: UsageSums = {};
    let stepUsage: UsageSums = {};
    yield* emit({ type: "turn-start", turn, recovered });

    const endTurn = (
      step: number,
      reason: TurnEndReason["kind"],
      error?: { readonly _tag: string; readonly message: string },
    ) =>
      appendDrafts(handle, [
        Draft.stepEnd(turn, step),
        Draft.turnEnd(
          turn,
          error === undefined
            ? reason
            : { kind: reason, error: failureOf(error) },
        ),
      ]);

    /** Answers a cut answer's calls so the transcript stays whole. */
    const closeCalls = (answer: RecordedAnswer, messageSeq: SessionSeq) =>
      Effect.suspend(() => {
        const first = Session.nextSeq(handle.session);
        return appendDrafts(
          handle,
          answer.calls.map((call, i): EventDraft => ({
            type: "tool/result",
            surfaceOp: "append",
            sourceEventSeqs: [messageSeq],
            data: {
              turn: answer.draft.data.turn,
              step: answer.draft.data.step,
              message: {
                id: `tool-${first + i}`,
                role: "user",
                source: { kind: "tool", callId: call.id },
                content: [{
                  type: "tool-result",
                  toolCallId: call.id,
                  content: [{
                    type: "text",
                    text: "The answer was cut before this tool call could run.",
                  }],
                  isError: true,
                }],
              },
              error: { name: "AnswerCut", code: TOOL_NOT_STARTED },
            },
          })),
        );
      });

    /**
     * Compacts when over budget (or forced); a refusal or a model error of
     * the engine (recorded in the log by its `compaction/end`) means no
     * compaction, not a failed turn, and is reported in the outcome.
     */
    const tryCompact = (
      policy: CompactionPolicy,
      step: number,
      force: boolean,
      refusedTokens?: number,
    ): Effect.Effect<
      CompactionReport | undefined,
      StoreAppendError,
      SessionStore | LanguageModel.LanguageModel
    > => {
      const report = (done: CompactionReport) =>
        Effect.as(
          Effect.andThen(
            Effect.sync(() => compactions.push(done)),
            emit({
              type: done.compacted ? "compaction-done" : "compaction-refused",
              turn,
              step,
              report: done,
            }),
          ),
          done,
        );
      const refused = (error: CompactionRefusal) =>
        report({
          step,
          forced: force,
          compacted: false,
          ...("compactionId" in error
            ? { compactionId: error.compactionId }
            : {}),
          refused: error,
        });
      return compactIfNeeded({
        handle,
        tools: toolkit,
        ...policy,
        force,
        ...(refusedTokens === undefined ? {} : { refusedTokens }),
        ...(options.retry === undefined ? {} : { retry: options.retry }),
        onRetry: (attempt) => emit(retryEvent(turn, step, "summary")(attempt)),
        ...(options.onOpen === undefined ? {} : { onOpen: options.onOpen }),
        onStart: (started) =>
          emit({
            type: "compaction-start",
            turn,
            step,
            forced: force,
            compactionId: started.compactionId,
          }),
      }).pipe(
        Effect.flatMap((outcome) =>
          force || outcome.tokensBefore > policy.maxTokens
            ? report({
              step,
              forced: force,
              compacted: outcome.compacted,
              ...(outcome.compactionId === undefined
                ? {}
                : { compactionId: outcome.compactionId }),
              tokensBefore: outcome.tokensBefore,
              tokensAfter: outcome.tokensAfter,
            })
            : Effect.succeed(undefined)
        ),
        Effect.catchTags({
          CompactionInProgress: refused,
          EmptySummary: refused,
          SummaryNotSmaller: refused,
          CompactionRangeChanged: refused,
          AiError: refused,
        }),
      );
    };

    /** One request: the answer recorded and appended, or the failure. */
    const request = (step: number) =>
      Effect.gen(function* () {
        const parts: TimedPart[] = [];
        let recorded = false;
        const persist = (cut: boolean) =>
          Effect.suspend(() => {
            recorded = true;
            const messageSeq = seqOfNext(handle);
            const answer = recordAnswer(parts, {
              turn,
              step,
              messageId: `assistant-${messageSeq}`,
              source,
              cut,
              usedCallIds: sessionCallIds(handle.session),
            });
            return Effect.map(
              appendDrafts(handle, [answer.draft]),
              () => ({ answer, messageSeq }),
            );
          });
        const messages = pairedMessages(handle.session, step, repairs);
        const prompt = toPrompt(messages);
        const exit = yield* LanguageModel.streamText({
          prompt,
          toolkit,
          disableToolCallResolution: true,
          toolCallValidation: "deferred",
        }).pipe(
          (answer) => withIdleTimeout(answer, idleTimeout),
          Stream.runForEach((part) =>
            Effect.flatMap(Clock.currentTimeMillis, (time) =>
              Effect.flatMap(chunkOf(part), (chunk) => {
                parts.push({ time, chunk });
                switch (part.type) {
                  case "text-delta":
                  case "reasoning-delta":
                    return emit({
                      type: part.type,
                      turn,
                      step,
                      id: part.id,
                      delta: part.delta,
                    });
                  case "finish":
                    addUsage(usage, part.usage);
                    addUsage(stepUsage, part.usage);
                    return Effect.void;
                  default:
                    return Effect.void;
                }
              }))
          ),
          Effect.onInterrupt(() =>
            recorded ? Effect.void : Effect.ignore(persist(true))
          ),
          Effect.exit,
        );
        if (Exit.isSuccess(exit)) {
          return { ...(yield* persist(false)), error: undefined };
        }
        const cut = yield* persist(true);
        yield* closeCalls(cut.answer, cut.messageSeq);
        const error = Exit.findErrorOption(exit);
        if (error._tag === "None") {
          return yield* Effect.failCause(exit.cause);
        }
        return { ...cut, error: error.value, messages };
      });

    let step = 0;
    let steps = 0;
    /** Reports the turn's end and returns its outcome. */
    const ended = (
      session: Session,
      reason: TurnEndReason["kind"],
      stoppedBy: TurnOutcome["stoppedBy"],
    ) => {
      const outcome: TurnOutcome = {
        session,
        turn,
        steps,
        reason,
        stoppedBy,
        recovered,
        compactions,
        repairs,
        usage: { ...usage },
      };
      return Effect.as(emit({ type: "turn-end", outcome }), outcome);
    };
    for (; step < maxSteps; step++) {
      yield* appendDrafts(handle, [Draft.stepStart(turn, step)]);
      stepUsage = {};
      yield* emit({ type: "step-start", turn, step });
      if (options.compaction !== undefined) {
        yield* tryCompact(options.compaction, step, false);
      }
      let result = yield* request(step);
      let retrier: Retrier | undefined;
      let overflows = 0;
      while (result.error !== undefined) {
        const error = result.error;
        const told = retryEvent(turn, step, "answer");
        retrier ??= makeRetrier(options.retry, (a) => emit(told(a)));
        if ((yield* retrier(error)) !== undefined) {
          result = yield* request(step);
          continue;
        }
        const policy = options.compaction;
        if (policy === undefined || maxRetries === 0 || !overflowTest(error)) {
          yield* endTurn(step, "error", error);
          return yield* Effect.fail(error);
        }
        // The provider's verdict beats the estimate: the refused request's
        // estimate is the ceiling each forced compaction must get under.
        const estimate = policy.estimate ?? estimateTokensByChars;
        const refusedTokens = estimate(result.messages);
        const done = overflows < maxRetries
          ? yield* tryCompact(policy, step, true, refusedTokens)
          : undefined;
        const failure = overflowVerdict({
          turn,
          step,
          overflows,
          done,
          refusedTokens,
          error,
        });
        if (failure !== undefined) {
          const told = { turn, step, error: failure };
          yield* emit({ type: "overflow-not-recovered", ...told });
          yield* endTurn(step, "error", failure);
          return yield* Effect.fail(failure);
        }
        overflows++;
        result = yield* request(step);
      }
      steps++;
      const { answer } = result;
      for (const [i, call] of answer.calls.entries()) {
        const callSeq = seqOfNext(handle);
        yield* appendDrafts(handle, answer.toolCallDrafts.slice(i, i + 1));
        yield* emit({
          type: "tool-call-start",
          turn,
          step,
          callId: call.id,
          name: call.name,
          arguments: call.arguments,
          seq: callSeq,
        });
        const outcome = yield* executeTool(toolkit, call);
        const callEvent = knownEventAt(handle.session, callSeq);
        if (callEvent?.type !== "tool/call") {
          return yield* Effect.die("the tool/call just appended is missing");
        }
        const resultSeq = seqOfNext(handle);
        yield* appendDrafts(handle, [
          Draft.toolResult(callEvent, outcome.content, {
            id: `tool-${resultSeq}`,
            ...(outcome.error === undefined ? {} : { error: outcome.error }),
          }),
        ]);
        yield* emit({
          type: "tool-call-end",
          turn,
          step,
          callId: call.id,
          name: call.name,
          seq: resultSeq,
          isError: outcome.error !== undefined,
          ...(outcome.error === undefined ? {} : { error: outcome.error }),
        });
      }
      const stepEnd: TurnEvent = {
        type: "step-end",
        turn,
        step,
        ...(answer.finishReason === undefined
          ? {}
          : { finishReason: answer.finishReason }),
        usage: { ...stepUsage },
      };
      if (answer.calls.length === 0) {
        const reason = endReasonOf(answer.finishReason);
        const session = yield* endTurn(step, reason);
        yield* emit(stepEnd);
        return yield* ended(session, reason, "model");
      }
      yield* appendDrafts(handle, [Draft.stepEnd(turn, step)]);
      yield* emit(stepEnd);
    }
    const session = yield* appendDrafts(handle, [
      Draft.turnEnd(turn, "aborted"),
    ]);
    return yield* ended(session, "aborted", "step-limit");
  }));
}
