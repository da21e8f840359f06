/**
 * The state record of one turn (`runTurn`): what every step reads and the
 * outcome fields the steps fill as they go, with the steps that only read
 * it: telling `onEvent`, ending the turn, building its outcome.
 *
 * The outcome fields (`compactions`, `repairs`, `usage`) are filled in
 * place by the steps that make them, so that an outcome built at any
 * step's end sees all of them; nothing else in the state changes once
 * `startTurn` (`turn_steps.ts`) has built it.
 *
 * @module
 * @internal
 */
import type * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import type { AiError, LanguageModel, Tool } from "effect/ai";
import type { SessionEvent, TurnEndReason } from "../core/event.ts";
import type { Session } from "../session/session.ts";
import { Draft } from "../session/drafts.ts";
import type { SessionStore } from "../store/store.ts";
import { appendDrafts, type StoreAppendError } from "./_store.ts";
import { failureOf } from "./turn_recovery.ts";
import type { UsageSums } from "./turn_parts.ts";
import type { PartialSettings } from "./turn_partial.ts";
import type {
  CompactionReport,
  RequestRepairs,
  RunTurnOptions,
  TurnEvent,
  TurnOutcome,
} from "./turn_types.ts";

/** The tools of a turn, by name. @internal */
export type ToolMap = Record<string, Tool.Any>;

/** What a turn's steps need: the store, the model, the tools' handlers. @internal */
export type TurnServices<Tools extends ToolMap> =
  | SessionStore
  | LanguageModel.LanguageModel
  | Tool.HandlerServices<Tools[keyof Tools]>;

/**
 * The running state of one turn: what every step reads (the options, the
 * settings drawn from them, the turn's number, what was recovered) and the
 * outcome's fields the steps fill as they go.
 * @internal
 */
export interface TurnState<Tools extends ToolMap> {
  readonly options: RunTurnOptions<Tools>;
  readonly turn: number;
  /** The most requests in the turn (`maxSteps`, at least 1). */
  readonly maxSteps: number;
  readonly overflowTest: (error: AiError.AiError) => boolean;
  /** Forced compactions one step may make after overflows. */
  readonly maxOverflowRetries: number;
  readonly idleTimeout: Duration.Input;
  /** The partial answer's batching; `undefined` when it is off. */
  readonly partial: PartialSettings | undefined;
  /** The assistant messages' source. */
  readonly source: {
    readonly kind: "model";
    readonly provider: string;
    readonly model: string;
  };
  /** The closers of what a crash left open, closed before `turn/start`. */
  readonly recovered: ReadonlyArray<SessionEvent>;
  /** Filled by {@link tryCompact}. */
  readonly compactions: CompactionReport[];
  /** Filled by {@link requestAnswer}. */
  readonly repairs: RequestRepairs[];
  /** The whole turn's usage, summed by {@link streamAnswer}. */
  readonly usage: UsageSums;
}

/** One step of a turn: its number and its own usage. @internal */
export interface StepState {
  readonly step: number;
  /** This step's usage (every request of it), summed by {@link streamAnswer}. */
  readonly usage: UsageSums;
}

/** Tells `onEvent`, when there is one. @internal */
export const emit = <Tools extends ToolMap>(
  state: TurnState<Tools>,
  event: TurnEvent,
): Effect.Effect<void> =>
  state.options.onEvent === undefined
    ? Effect.void
    : state.options.onEvent(event);

/**
 * Appends `step/end` and `turn/end` (with the error that ended the turn,
 * when one did); returns the session.
 * @internal
 */
export const endTurn = <Tools extends ToolMap>(
  state: TurnState<Tools>,
  step: number,
  reason: TurnEndReason["kind"],
  error?: { readonly _tag: string; readonly message: string },
): Effect.Effect<Session, StoreAppendError, SessionStore> =>
  appendDrafts(state.options.handle, [
    Draft.stepEnd(state.turn, step),
    Draft.turnEnd(
      state.turn,
      error === undefined ? reason : { kind: reason, error: failureOf(error) },
    ),
  ]);

/**
 * The turn's outcome, after `turn-end` is told: `steps` requests
 * answered, the session as the turn left it.
 * @internal
 */
export const turnEnded = <Tools extends ToolMap>(
  state: TurnState<Tools>,
  end: {
    readonly session: Session;
    readonly steps: number;
    readonly reason: TurnEndReason["kind"];
    readonly stoppedBy: TurnOutcome["stoppedBy"];
  },
): Effect.Effect<TurnOutcome> => {
  const outcome: TurnOutcome = {
    session: end.session,
    turn: state.turn,
    steps: end.steps,
    reason: end.reason,
    stoppedBy: end.stoppedBy,
    recovered: state.recovered,
    compactions: state.compactions,
    repairs: state.repairs,
    usage: { ...state.usage },
  };
  return Effect.as(emit(state, { type: "turn-end", outcome }), outcome);
};
