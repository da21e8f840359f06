/**
 * The turn loop's steps (`runTurn` in `turn.ts` is the loop over them),
 * each runnable alone on a turn's state ({@link TurnState}):
 *
 * - Before the turn: {@link recoverOpenWork} closes (or refuses) what a
 *   crash left open; {@link startTurn} holds the turn, appends `turn/start`,
 *   the system prompt and the input, and builds the state.
 * - One step ({@link runStep}): {@link beginStep} (`step/start`, compaction
 *   when over budget), `answerStep` (the request and its recovery:
 *   `turn_request.ts`), {@link runCall} for each tool call (`tool/call`,
 *   the handler, {@link appendToolResult}), {@link finishStep}.
 * - The end at the step limit: {@link stopAtStepLimit}.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import type { LanguageModel } from "effect/ai";
import type { SessionSeq } from "../core/seq.ts";
import type { SessionEvent } from "../core/event.ts";
import { type EventDraft, knownEventAt, Session } from "../session/session.ts";
import { heldEvents } from "../session/prior.ts";
import { Draft } from "../session/drafts.ts";
import { openWork, type PartialAnswerPolicy } from "../session/repair.ts";
import {
  type SessionHandle,
  SessionStore,
  type WriteError,
} from "../store/store.ts";
import type { SurfaceError } from "../core/errors.ts";
import { holdTurn, liveWork } from "../store/live.ts";
import { appendDrafts, type StoreAppendError } from "./_store.ts";
import type { RecordedAnswer } from "./record.ts";
import { isContextOverflow, type OnOpen } from "./compaction.ts";
import { CompactionInProgress, TurnInProgress } from "./errors.ts";
import { setSystemPrompt } from "../history/system_prompt.ts";
import {
  DEFAULT_IDLE_TIMEOUT,
  endReasonOf,
  executeTool,
  nextTurn,
  seqOfNext,
  type ToolOutcome,
} from "./turn_parts.ts";
import type {
  RunTurnOptions,
  TurnError,
  TurnEvent,
  TurnOutcome,
} from "./turn_types.ts";
import {
  emit,
  endTurn,
  type StepState,
  type ToolMap,
  turnEnded,
  type TurnServices,
  type TurnState,
} from "./turn_state.ts";
import { answerStep, tryCompact } from "./turn_request.ts";
import { partialSettings } from "./turn_partial.ts";

/**
 * Before `turn/start`: fails while another turn runs on the handle; an
 * open turn or abandoned compaction a crash left is closed by
 * `store.repair` (its closers returned), or with `onOpen: "refuse"` refused
 * with nothing written.
 * @internal
 */
export const recoverOpenWork: (
  handle: SessionHandle,
  onOpen: OnOpen | undefined,
  partialAnswer?: PartialAnswerPolicy,
) => Effect.Effect<
  ReadonlyArray<SessionEvent>,
  TurnInProgress | CompactionInProgress | SurfaceError | WriteError,
  SessionStore
> = Effect.fnUntraced(function* (handle, onOpen, partialAnswer) {
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
  // Nothing of another running turn is in the log yet: holdTurn in
  // startTurn refuses it.
  const [turnLeft] = open.turns;
  const [compactionLeft] = open.compactions.filter((c) =>
    !live.compactions.has(c.compactionId)
  );
  if (onOpen === "refuse") {
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
    return [];
  }
  if (turnLeft === undefined && compactionLeft === undefined) return [];
  const store = yield* SessionStore;
  return (yield* store.repair(
    handle,
    partialAnswer === undefined ? undefined : { partialAnswer },
  )).closers;
});

/**
 * Holds the next turn for the scope, appends `turn/start`, the system
 * prompt when it changed and the input in one batch, tells `turn-start`,
 * and returns the turn's state.
 * @internal
 */
export const startTurn: <Tools extends ToolMap>(
  options: RunTurnOptions<Tools>,
  recovered: ReadonlyArray<SessionEvent>,
) => Effect.Effect<
  TurnState<Tools>,
  TurnInProgress | StoreAppendError,
  SessionStore | Scope.Scope
> = Effect.fnUntraced(function* <Tools extends ToolMap>(
  options: RunTurnOptions<Tools>,
  recovered: ReadonlyArray<SessionEvent>,
) {
  const { handle } = options;
  const turn = nextTurn(handle.session);
  const held = yield* holdTurn(handle, turn, seqOfNext(handle));
  if (held !== undefined) {
    return yield* new TurnInProgress({
      turn: held.key,
      startSeq: held.startSeq,
      live: true,
    });
  }
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
    const store = yield* SessionStore;
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
  const state: TurnState<Tools> = {
    options,
    turn,
    maxSteps: Math.max(1, Math.floor(options.maxSteps ?? 8)),
    overflowTest: options.isContextOverflow ?? isContextOverflow,
    maxOverflowRetries: Math.max(0, options.maxOverflowRetries ?? 2),
    idleTimeout: options.idleTimeout ?? DEFAULT_IDLE_TIMEOUT,
    partial: partialSettings(options.partial),
    source: {
      kind: "model",
      provider: options.model.provider,
      model: options.model.model,
    },
    recovered,
    compactions: [],
    repairs: [],
    usage: {},
  };
  yield* emit(state, { type: "turn-start", turn, recovered });
  return state;
});

/**
 * Appends `step/start`, tells `step-start`, and compacts first when over
 * budget (with a compaction policy); returns the step's state.
 * @internal
 */
export const beginStep: <Tools extends ToolMap>(
  state: TurnState<Tools>,
  step: number,
) => Effect.Effect<
  StepState,
  StoreAppendError,
  SessionStore | LanguageModel.LanguageModel
> = Effect.fnUntraced(function* (state, step) {
  yield* appendDrafts(state.options.handle, [
    Draft.stepStart(state.turn, step),
  ]);
  yield* emit(state, { type: "step-start", turn: state.turn, step });
  const policy = state.options.compaction;
  if (policy !== undefined) {
    yield* tryCompact(state, { policy, step, force: false });
  }
  return { step, usage: {} };
});

/**
 * Appends the `tool/result` of the call at `callSeq` with the handler's
 * outcome, as `tool-<seq>`; returns its seq.
 * @internal
 */
export const appendToolResult: (
  handle: SessionHandle,
  callSeq: SessionSeq,
  outcome: ToolOutcome,
) => Effect.Effect<SessionSeq, StoreAppendError, SessionStore> = Effect
  .fnUntraced(function* (handle, callSeq, outcome) {
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
    return resultSeq;
  });

/**
 * The answer's call `index`: its `tool/call` appended (durably, before the
 * tool runs), `tool-call-start` told, the handler run, the `tool/result`
 * appended citing the call, `tool-call-end` told.
 * @internal
 */
export const runCall: <Tools extends ToolMap>(
  state: TurnState<Tools>,
  step: number,
  answer: RecordedAnswer,
  index: number,
) => Effect.Effect<void, StoreAppendError, TurnServices<Tools>> = Effect
  .fnUntraced(function* (state, step, answer, index) {
    const { handle, toolkit } = state.options;
    const { turn } = state;
    const call = answer.calls[index];
    if (call === undefined) return;
    const callSeq = seqOfNext(handle);
    yield* appendDrafts(handle, answer.toolCallDrafts.slice(index, index + 1));
    yield* emit(state, {
      type: "tool-call-start",
      turn,
      step,
      callId: call.id,
      name: call.name,
      arguments: call.arguments,
      seq: callSeq,
    });
    const outcome = yield* executeTool(toolkit, call);
    const resultSeq = yield* appendToolResult(handle, callSeq, outcome);
    yield* emit(state, {
      type: "tool-call-end",
      turn,
      step,
      callId: call.id,
      name: call.name,
      seq: resultSeq,
      isError: outcome.error !== undefined,
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    });
  });

/**
 * The step's end: with no call in the answer, `step/end` and `turn/end`
 * (its reason from the finish reason), `step-end` told and the outcome
 * returned; otherwise `step/end` and `step-end`, and `undefined` (the turn
 * goes on).
 * @internal
 */
export const finishStep: <Tools extends ToolMap>(
  state: TurnState<Tools>,
  current: StepState,
  answer: RecordedAnswer,
) => Effect.Effect<
  TurnOutcome | undefined,
  StoreAppendError,
  SessionStore
> = Effect.fnUntraced(function* (state, current, answer) {
  const { step } = current;
  const stepEnd: TurnEvent = {
    type: "step-end",
    turn: state.turn,
    step,
    ...(answer.finishReason === undefined
      ? {}
      : { finishReason: answer.finishReason }),
    usage: { ...current.usage },
  };
  if (answer.calls.length === 0) {
    const reason = endReasonOf(answer.finishReason);
    const session = yield* endTurn(state, step, reason);
    yield* emit(state, stepEnd);
    return yield* turnEnded(state, {
      session,
      steps: step + 1,
      reason,
      stoppedBy: "model",
    });
  }
  yield* appendDrafts(state.options.handle, [
    Draft.stepEnd(state.turn, step),
  ]);
  yield* emit(state, stepEnd);
  return undefined;
});

/**
 * One step of the turn: {@link beginStep}, {@link answerStep}, each call
 * run by {@link runCall}, {@link finishStep}; the outcome when the turn
 * ended there.
 * @internal
 */
export const runStep: <Tools extends ToolMap>(
  state: TurnState<Tools>,
  step: number,
) => Effect.Effect<TurnOutcome | undefined, TurnError, TurnServices<Tools>> =
  Effect.fnUntraced(function* (state, step) {
    const current = yield* beginStep(state, step);
    const answer = yield* answerStep(state, current);
    for (let index = 0; index < answer.calls.length; index++) {
      yield* runCall(state, step, answer, index);
    }
    return yield* finishStep(state, current, answer);
  });

/**
 * The turn's end after `maxSteps` steps that all called tools: `turn/end`
 * `aborted`, and the outcome.
 * @internal
 */
export const stopAtStepLimit: <Tools extends ToolMap>(
  state: TurnState<Tools>,
) => Effect.Effect<TurnOutcome, StoreAppendError, SessionStore> = Effect
  .fnUntraced(function* (state) {
    const session = yield* appendDrafts(state.options.handle, [
      Draft.turnEnd(state.turn, "aborted"),
    ]);
    return yield* turnEnded(state, {
      session,
      steps: state.maxSteps,
      reason: "aborted",
      stoppedBy: "step-limit",
    });
  });
