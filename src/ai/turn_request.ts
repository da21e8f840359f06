/**
 * The request of one step of the turn loop, as steps over the turn's state
 * ({@link TurnState}): the paired messages streamed ({@link streamAnswer}),
 * the answer recorded and appended whole or cut ({@link appendAnswer},
 * {@link closeCalls}), one request ({@link requestAnswer}), compaction
 * ({@link tryCompact}), the recovery of an overflow
 * ({@link recoverOverflow}), and the step's answer after retries
 * ({@link answerStep}).
 *
 * @module
 * @internal
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Stream from "effect/Stream";
import {
  type AiError,
  LanguageModel,
  type Response,
  type Tool,
} from "effect/ai";
import type { SessionSeq } from "../core/seq.ts";
import type { Message } from "../core/message.ts";
import { type EventDraft, Session } from "../session/session.ts";
import { TOOL_NOT_STARTED } from "../session/repair.ts";
import type { SessionHandle, SessionStore } from "../store/store.ts";
import { appendDrafts, type StoreAppendError } from "./_store.ts";
import {
  recordAnswer,
  type RecordedAnswer,
  sessionCallIds,
  type TimedPart,
} from "./record.ts";
import { compactIfNeeded, type CompactionPolicy } from "./compaction.ts";
import { makeRetrier, type Retrier } from "./retry.ts";
import {
  overflowVerdict,
  pairedMessages,
  retryEvent,
} from "./turn_recovery.ts";
import { estimateTokensByChars } from "../core/tokens.ts";
import { toPrompt } from "./prompt.ts";
import { makePartialWriter, type PartialWriter } from "./turn_partial.ts";
import { addUsage, chunkOf, seqOfNext, withIdleTimeout } from "./turn_parts.ts";
import type {
  CompactionRefusal,
  CompactionReport,
  TurnError,
} from "./turn_types.ts";
import {
  emit,
  endTurn,
  type StepState,
  type ToolMap,
  type TurnServices,
  type TurnState,
} from "./turn_state.ts";

/**
 * A request's result: the answer recorded and appended at `messageSeq`,
 * and, when it failed, the error and the messages it was sent.
 * @internal
 */
export type RequestResult =
  | {
    readonly answer: RecordedAnswer;
    readonly messageSeq: SessionSeq;
    readonly error: undefined;
  }
  | {
    readonly answer: RecordedAnswer;
    readonly messageSeq: SessionSeq;
    readonly error: AiError.AiError;
    readonly messages: ReadonlyArray<Message>;
  };

/**
 * Sends the request of `messages` and keeps each stream part in `parts`,
 * timed with the `Clock`, as it comes: a text or reasoning delta is told,
 * a finish's usage added to the turn's and the step's. A request that
 * sends no part for the idle timeout fails with a `NetworkError`.
 * @internal
 */
export const streamAnswer = <Tools extends ToolMap>(
  state: TurnState<Tools>,
  current: StepState,
  messages: ReadonlyArray<Message>,
  parts: TimedPart[],
  partial: PartialWriter,
): Effect.Effect<void, AiError.AiError, TurnServices<Tools>> =>
  LanguageModel.streamText({
    prompt: toPrompt(messages),
    toolkit: state.options.toolkit,
    disableToolCallResolution: true,
    toolCallValidation: "deferred",
  }).pipe(
    (answer) => withIdleTimeout(answer, state.idleTimeout),
    Stream.runForEach((part) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (time) =>
          Effect.flatMap(chunkOf(part), ({ chunk, size }) => {
            const record = { time, chunk };
            parts.push(record);
            const write = partial.add(part, size);
            const told = tell(state, current, part);
            return write === undefined ? told : Effect.andThen(write, told);
          }),
      )
    ),
  );

/**
 * What a stream part tells: a text or reasoning delta is told to
 * `onEvent`, a finish's usage added to the turn's and the step's.
 */
const tell = <Tools extends ToolMap>(
  state: TurnState<Tools>,
  current: StepState,
  part: Response.StreamPart<Record<string, Tool.Any>>,
): Effect.Effect<void> => {
  switch (part.type) {
    case "text-delta":
    case "reasoning-delta":
      return emit(state, {
        type: part.type,
        turn: state.turn,
        step: current.step,
        id: part.id,
        delta: part.delta,
      });
    case "finish":
      addUsage(state.usage, part.usage);
      addUsage(current.usage, part.usage);
      return Effect.void;
    default:
      return Effect.void;
  }
};

/**
 * Records the answer of `parts` (whole, or `cut`) and appends it at the
 * next seq, its message `assistant-<seq>`.
 * @internal
 */
export const appendAnswer: <Tools extends ToolMap>(
  state: TurnState<Tools>,
  step: number,
  parts: ReadonlyArray<TimedPart>,
  cut: boolean,
) => Effect.Effect<
  { readonly answer: RecordedAnswer; readonly messageSeq: SessionSeq },
  StoreAppendError,
  SessionStore
> = Effect.fnUntraced(function* (state, step, parts, cut) {
  const { handle } = state.options;
  const messageSeq = seqOfNext(handle);
  const answer = recordAnswer(parts, {
    turn: state.turn,
    step,
    messageId: `assistant-${messageSeq}`,
    source: state.source,
    cut,
    usedCallIds: sessionCallIds(handle.session),
  });
  yield* appendDrafts(handle, [answer.draft]);
  return { answer, messageSeq };
});

/**
 * Answers a cut answer's calls with `TOOL_NOT_STARTED` results, so the
 * transcript stays whole.
 * @internal
 */
export const closeCalls: (
  handle: SessionHandle,
  answer: RecordedAnswer,
  messageSeq: SessionSeq,
) => Effect.Effect<Session, StoreAppendError, SessionStore> = Effect
  .fnUntraced(function* (handle, answer, messageSeq) {
    const first = Session.nextSeq(handle.session);
    return yield* appendDrafts(
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
 * One request: the session's messages paired (the pairing's repairs pushed
 * to the state's `repairs`), streamed, and the answer appended; a failed
 * or interrupted request's answer is appended as cut (an interruption's
 * in an uninterruptible finalizer), a failed one's calls answered by
 * {@link closeCalls}. A defect or an interruption is not caught.
 * @internal
 */
export const requestAnswer: <Tools extends ToolMap>(
  state: TurnState<Tools>,
  current: StepState,
) => Effect.Effect<
  RequestResult,
  StoreAppendError | AiError.AiError,
  TurnServices<Tools>
> = Effect.fnUntraced(function* (state, current) {
  const { step } = current;
  const parts: TimedPart[] = [];
  const messages = pairedMessages(
    state.options.handle.session,
    step,
    state.repairs,
  );
  // The partial writer's scope closes (its last batch written) before the
  // answer is appended, whole or cut.
  const exit = yield* Effect.scoped(Effect.flatMap(
    makePartialWriter(
      state.options.handle,
      { turn: state.turn, step, source: state.source },
      parts,
      state.partial,
    ),
    (partial) => streamAnswer(state, current, messages, parts, partial),
  )).pipe(
    Effect.onInterrupt(() =>
      Effect.ignore(appendAnswer(state, step, parts, true))
    ),
    Effect.exit,
  );
  if (Exit.isSuccess(exit)) {
    return {
      ...(yield* appendAnswer(state, step, parts, false)),
      error: undefined,
    };
  }
  const cut = yield* appendAnswer(state, step, parts, true);
  yield* closeCalls(state.options.handle, cut.answer, cut.messageSeq);
  const error = Exit.findErrorOption(exit);
  if (error._tag === "None") {
    return yield* Effect.failCause(exit.cause);
  }
  return { ...cut, error: error.value, messages };
});

/**
 * Compacts when over budget (or forced); a refusal or a model error of the
 * engine (recorded in the log by its `compaction/end`) means no
 * compaction, not a failed turn. What was done is pushed to the state's
 * `compactions`, told, and returned; `undefined` when the messages were
 * under budget and nothing was forced.
 * @internal
 */
export const tryCompact = <Tools extends ToolMap>(
  state: TurnState<Tools>,
  compact: {
    readonly policy: CompactionPolicy;
    readonly step: number;
    readonly force: boolean;
    readonly refusedTokens?: number;
  },
): Effect.Effect<
  CompactionReport | undefined,
  StoreAppendError,
  SessionStore | LanguageModel.LanguageModel
> => {
  const { policy, step, force, refusedTokens } = compact;
  const { options, turn } = state;
  const report = (done: CompactionReport) =>
    Effect.as(
      Effect.andThen(
        Effect.sync(() => state.compactions.push(done)),
        emit(state, {
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
      ...("compactionId" in error ? { compactionId: error.compactionId } : {}),
      refused: error,
    });
  return compactIfNeeded({
    handle: options.handle,
    tools: options.toolkit,
    ...policy,
    force,
    ...(refusedTokens === undefined ? {} : { refusedTokens }),
    ...(options.retry === undefined ? {} : { retry: options.retry }),
    onRetry: (attempt) =>
      emit(state, retryEvent(turn, step, "summary")(attempt)),
    ...(options.onOpen === undefined ? {} : { onOpen: options.onOpen }),
    onStart: (started) =>
      emit(state, {
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

/**
 * After a failed request that no retry takes: with a compaction policy and
 * an overflow (the state's `overflowTest`), forces a compaction keeping at
 * most half the refused request's estimate and succeeds when the request
 * shrank below it (it is sent again); otherwise ends the turn with reason
 * `error` and fails, with `error` or an `OverflowNotRecovered`.
 * `overflows` counts the forced compactions already made in the step.
 * @internal
 */
export const recoverOverflow: <Tools extends ToolMap>(
  state: TurnState<Tools>,
  failed: {
    readonly step: number;
    readonly error: AiError.AiError;
    readonly messages: ReadonlyArray<Message>;
    readonly overflows: number;
  },
) => Effect.Effect<
  void,
  TurnError,
  SessionStore | LanguageModel.LanguageModel
> = Effect.fnUntraced(function* (state, failed) {
  const { turn } = state;
  const { step, error, overflows } = failed;
  const policy = state.options.compaction;
  if (
    policy === undefined || state.maxOverflowRetries === 0 ||
    !state.overflowTest(error)
  ) {
    yield* endTurn(state, step, "error", error);
    return yield* Effect.fail(error);
  }
  // The provider's verdict beats the estimate: the refused request's
  // estimate is the ceiling each forced compaction must get under.
  const estimate = policy.estimate ?? estimateTokensByChars;
  const refusedTokens = estimate(failed.messages);
  const done = overflows < state.maxOverflowRetries
    ? yield* tryCompact(state, { policy, step, force: true, refusedTokens })
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
    yield* emit(state, {
      type: "overflow-not-recovered",
      turn,
      step,
      error: failure,
    });
    yield* endTurn(state, step, "error", failure);
    return yield* Effect.fail(failure);
  }
});

/**
 * The step's answer: the request, sent again after a passing failure (the
 * `retry` option; a `model-retry` event each) or an overflow that
 * {@link recoverOverflow} fixed; the turn ends and fails otherwise.
 * @internal
 */
export const answerStep: <Tools extends ToolMap>(
  state: TurnState<Tools>,
  current: StepState,
) => Effect.Effect<RecordedAnswer, TurnError, TurnServices<Tools>> = Effect
  .fnUntraced(function* (state, current) {
    const { step } = current;
    let result = yield* requestAnswer(state, current);
    let retrier: Retrier | undefined;
    let overflows = 0;
    while (result.error !== undefined) {
      const error = result.error;
      const told = retryEvent(state.turn, step, "answer");
      retrier ??= makeRetrier(state.options.retry, (a) => emit(state, told(a)));
      if ((yield* retrier(error)) === undefined) {
        yield* recoverOverflow(state, {
          step,
          error,
          messages: result.messages,
          overflows,
        });
        overflows++;
      }
      result = yield* requestAnswer(state, current);
    }
    return result.answer;
  });
