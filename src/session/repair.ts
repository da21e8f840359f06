/**
 * Crash repair: the events that close a turn a crash left open.
 *
 * A harness that dies mid-turn leaves tool calls without results, maybe an
 * open step, and no `turn/end`. Providers refuse such a transcript (a
 * `tool-call` must be answered before the conversation goes on), so the log
 * is closed with ordinary events that say what happened: an error
 * `tool/result` per unanswered call, then `step/end` if a step is open, then
 * `turn/end { reason: { kind: "interrupted" } }`. They are appended through
 * the normal path and replay like any other event. Times and ids are
 * derived from the log alone, so repairing the same log twice gives the
 * same bytes.
 *
 * A crash can also leave a compaction open: its `compaction/start` (the
 * compaction engine's durable lock) without a `compaction/end`. The
 * closers end it too, with `compaction/end { compactionId, error: { _tag:
 * "Abandoned" } }`, so a later compaction can run. And a 0.2 harness that
 * called `runTurn` on a crashed turn started a turn inside the open one:
 * every open turn is closed, the innermost first.
 *
 * {@link openWork} tells what a log leaves open (the CLI, the view and the
 * turn loop read it). This module computes the closers; appending them
 * durably is the store's `repair`, which leaves alone what a running
 * operation of the same process holds ({@link LiveWork}).
 *
 * @module
 */
import { SessionSeq } from "../core/seq.ts";
import {
  emptySurfaceAt,
  forEachMessage,
  replayResult,
  type Surface,
  surfaceEvent,
} from "../surface/mod.ts";
import { type PartialAnswer, partialAnswers } from "./partial.ts";
import type {
  AssistantMessageEvent,
  CompactionEndEvent,
  SessionEvent,
  StepEndEvent,
  ToolResultEvent,
  TurnEndEvent,
} from "../core/event.ts";

/** Error code of a closer for a call whose `tool/call` was logged: the tool may have run. */
export const TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN" as const;
/** Error code of a closer for a call the harness never started. */
export const TOOL_NOT_STARTED = "TOOL_NOT_STARTED" as const;

/** The error `_tag` of the `compaction/end` that closes an abandoned compaction. */
export const COMPACTION_ABANDONED = "Abandoned" as const;

/** A turn a log leaves open: a `turn/start` without its `turn/end`. */
export interface OpenTurn {
  /** The turn number. */
  readonly turn: number;
  /** The seq of its `turn/start`. */
  readonly startSeq: SessionSeq;
  /** Its open step (a `step/start` without its `step/end`), if any. */
  readonly step: number | undefined;
}

/** A compaction a log leaves open: a `compaction/start` without its end. */
export interface OpenCompaction {
  /** The compaction id. */
  readonly compactionId: string;
  /** The seq of its `compaction/start`. */
  readonly startSeq: SessionSeq;
}

/** What a log leaves open. */
export interface OpenWork {
  /** The open turns, outermost first (more than one only in a nested log). */
  readonly turns: ReadonlyArray<OpenTurn>;
  /** The open compactions, in log order. */
  readonly compactions: ReadonlyArray<OpenCompaction>;
}

/**
 * What a running operation of this process holds open on a session: the
 * turn numbers of running turns and the ids of running compactions. Repair
 * leaves these open: they are not abandoned, their owner will close them.
 */
export interface LiveWork {
  /** Turn numbers of turns being run. */
  readonly turns: ReadonlySet<number>;
  /** Ids of compactions being run. */
  readonly compactions: ReadonlySet<string>;
}

/**
 * What a log leaves open: every turn started and not ended (the step each
 * has open), and every compaction started and not ended. A `turn/end`
 * closes the innermost open turn of its number, a `step/end` the open step
 * of its turn, a `compaction/end` the compaction of its id.
 *
 * @param events The log, in seq order.
 * @returns The open turns (outermost first) and compactions.
 *
 * @example A log cut in the middle of a step
 * ```ts
 * import { openWork } from "@palimpsest/session";
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const events = [
 *   { type: "turn/start", seq: 0, time: 5, data: { turn: 0 } },
 *   { type: "step/start", seq: 1, time: 5, data: { turn: 0, step: 0 } },
 *   { type: "compaction/start", seq: 2, time: 6, data: { compactionId: "c2", turn: 0 } },
 * ].map((e) => Result.getOrThrow(decodeEventResult(e)));
 * assert.deepEqual(openWork(events), {
 *   turns: [{ turn: 0, startSeq: 0, step: 0 }],
 *   compactions: [{ compactionId: "c2", startSeq: 2 }],
 * });
 * ```
 */
export function openWork(events: ReadonlyArray<SessionEvent>): OpenWork {
  const tracker = makeWorkTracker();
  for (let e = 0; e < events.length; e++) {
    const event = events[e];
    if (event !== undefined) tracker.push(event);
  }
  return tracker.open();
}

/**
 * The open work of a log fed one event at a time, judged as
 * {@link openWork} judges it.
 * @internal
 */
export interface WorkTracker {
  /** Feeds the next event of the log. */
  readonly push: (event: SessionEvent) => void;
  /** True when no turn and no compaction is open. */
  readonly quiet: () => boolean;
  /** What is open now. */
  readonly open: () => OpenWork;
}

/**
 * A {@link WorkTracker} with nothing open.
 *
 * @returns The tracker.
 * @internal
 */
export const makeWorkTracker = (): WorkTracker => {
  // No allocation per closed turn: the open turns are a stack whose top is
  // almost always the one an event concerns.
  const turns: Array<{ turn: number; startSeq: SessionSeq; step: number }> = [];
  const compactions = new Map<string, SessionSeq>();
  const NO_STEP = -1;
  const innermost = (turn: number): number => {
    for (let i = turns.length - 1; i >= 0; i--) {
      if (turns[i]?.turn === turn) return i;
    }
    return -1;
  };
  const push = (event: SessionEvent): void => {
    switch (event.type) {
      case "turn/start":
        turns.push({
          turn: event.data.turn,
          startSeq: event.seq,
          step: NO_STEP,
        });
        break;
      case "turn/end": {
        const at = innermost(event.data.turn);
        if (at === turns.length - 1) turns.pop();
        else if (at >= 0) turns.splice(at, 1);
        break;
      }
      case "step/start": {
        const open = turns[innermost(event.data.turn)];
        if (open !== undefined) open.step = event.data.step;
        break;
      }
      case "step/end": {
        const open = turns[innermost(event.data.turn)];
        if (open !== undefined && open.step === event.data.step) {
          open.step = NO_STEP;
        }
        break;
      }
      case "compaction/start":
        if (!compactions.has(event.data.compactionId)) {
          compactions.set(event.data.compactionId, event.seq);
        }
        break;
      case "compaction/end":
        compactions.delete(event.data.compactionId);
        break;
    }
  };
  const open = (): OpenWork => ({
    turns: turns.map((t) => ({
      turn: t.turn,
      startSeq: t.startSeq,
      step: t.step === NO_STEP ? undefined : t.step,
    })),
    compactions: [...compactions].map(([compactionId, startSeq]) => ({
      compactionId,
      startSeq,
    })),
  });
  return {
    push,
    quiet: () => turns.length === 0 && compactions.size === 0,
    open,
  };
};

/** Options of {@link interruptedTurnClosers}. */
export interface CloserOptions {
  /**
   * What running operations hold: a live compaction is not closed, and
   * while a live turn is open no turn is closed and no call answered.
   */
  readonly live?: LiveWork;
  /**
   * False to close only the open compactions and leave the turns (what
   * the compaction engine does: it runs inside a turn). True by default.
   */
  readonly turns?: boolean;
  /**
   * The surface the events fold to, when the caller has it: `events` may
   * then be only the log's last events (from the start of the oldest open
   * work on, as a session opened from a checkpoint holds), whose own fold
   * would miss the nodes they replace.
   */
  readonly surface?: Surface;
  /**
   * What becomes of a partial answer (the `assistant/partial` batches of an
   * answer a crash cut while it streamed, in the open step of an open
   * turn): `"keep"` (the default) leaves it in the log for people (the
   * view, the transcript, a follower) and out of the model's requests;
   * `"append"` also appends its text and reasoning as an interrupted
   * `assistant/message` (never a call, whole or half: a call that did not
   * run has no place in the transcript), before the step is closed.
   */
  readonly partialAnswer?: PartialAnswerPolicy;
}

/** What repair does with a partial answer: see {@link CloserOptions}. */
export type PartialAnswerPolicy = "keep" | "append";

interface IssuedCall {
  readonly callId: string;
  readonly turn: number;
  readonly step: number;
  readonly message: SessionSeq;
}

/**
 * The calls a provider would find unanswered at the end of the log's
 * transcript: those of the last assistant message on the surface that no
 * later result answers, when that message was appended after `since`. Only
 * these can be answered by appending; a call followed by another assistant
 * message cannot (a result appended now would come after it), and is left
 * for `pairToolCalls` to answer.
 */
const openCallsAtEnd = (
  events: ReadonlyArray<SessionEvent>,
  since: number,
  given: Surface | undefined,
): ReadonlyArray<IssuedCall> => {
  const first = events[0];
  if (first === undefined) return [];
  let surface = given;
  if (surface === undefined) {
    const folded = replayResult(events, emptySurfaceAt(first.seq), {
      stored: true,
    });
    if (folded._tag === "Failure") return [];
    surface = folded.success;
  }
  const folded: Surface = surface;
  let open = new Map<string, IssuedCall>();
  const seen = new Set<string>();
  forEachMessage(folded, (seq, message) => {
    if (message.role === "assistant") {
      open = new Map();
      const event = surfaceEvent(folded, seq);
      const step = event?.type === "assistant/message" ? event.data.step : 0;
      const turn = event?.type === "assistant/message" ? event.data.turn : 0;
      for (const block of message.content) {
        if (block.type !== "tool-call" || seen.has(block.id)) continue;
        seen.add(block.id);
        if (seq > since) {
          open.set(block.id, { callId: block.id, turn, step, message: seq });
        }
      }
      return;
    }
    for (const block of message.content) {
      if (block.type === "tool-result") open.delete(block.toolCallId);
    }
  });
  return [...open.values()];
};

/** The source of a partial answer whose batches do not name the model. */
const UNKNOWN_MODEL = {
  kind: "model",
  provider: "unknown",
  model: "unknown",
} as const;

/**
 * The partial answer a repair appends: the last one of the innermost open
 * turn's open step, begun after the turn started, when it has text or
 * reasoning.
 */
const partialToAppend = (
  events: ReadonlyArray<SessionEvent>,
  turns: ReadonlyArray<OpenTurn>,
): PartialAnswer | undefined => {
  const innermost = turns[turns.length - 1];
  if (innermost === undefined || innermost.step === undefined) return undefined;
  const answer = partialAnswers(events).findLast((a) =>
    a.turn === innermost.turn && a.step === innermost.step &&
    (a.seqs[0] ?? -1) > innermost.startSeq
  );
  return answer === undefined || answer.content.length === 0
    ? undefined
    : answer;
};

const closerText = (code: string): string =>
  code === TOOL_OUTCOME_UNKNOWN
    ? "The session was interrupted while this tool call ran; its outcome is unknown."
    : "The session was interrupted before this tool call started; it did not run.";

/**
 * The events that close what a crash left open in a log, in order: one
 * `compaction/end { compactionId, error: { _tag: "Abandoned" } }` per open
 * compaction (its `compaction/start` is the compaction engine's lock), then
 * one error `tool/result` (`isError: true`, `surfaceOp: "append"`) per tool
 * call the model issued in an open turn without a result, then, for each
 * open turn from the innermost out, `step/end` if a step is open and
 * `turn/end` with reason `interrupted`. A tool closer cites the `tool/call`
 * event when one was logged (error code `TOOL_OUTCOME_UNKNOWN`), else the
 * `assistant/message` that issued the call (`TOOL_NOT_STARTED`). Every
 * closer has the last event's time; message ids are `repair-<callId>`.
 * More than one turn is open only in a log where a turn was started inside
 * an open one (as 0.2's `runTurn` did after a crash); each is closed.
 *
 * Which calls are answered: those the transcript leaves open at its end,
 * that is the `tool-call` blocks of the last assistant message on the
 * surface (when it was appended in an open turn) that no later result
 * answers. A `tool/call` event with no such block is not answered (a result
 * would answer a call the model never made), and neither is a call that
 * another assistant message already follows: a result appended now would
 * land after that message, where providers refuse it.
 *
 * The promise, exactly: the closers never add a transcript violation, and
 * they remove every `UnansweredToolCall` of the calls above. So after repair
 * {@link checkTranscript} is clean if and only if, before repair, its only
 * violations were unanswered calls of the last assistant message of an open
 * turn. A log that breaks this precondition (an orphan call followed by a
 * later assistant message, a result with no call) keeps those violations:
 * repair appends and never rewrites, and `pairToolCalls` of
 * `@palimpsest/session/ai` answers or drops them before a provider sees the
 * messages. After the closers, {@link openWork} finds nothing open (except
 * what `options.live` holds).
 *
 * @param events The log, in seq order.
 * @param options What running operations hold open ({@link LiveWork}):
 * left alone.
 * @returns The closers with their seqs, continuing the log; empty when
 * nothing is open, or when their seqs would run past the last safe integer
 * (no event can follow such a log). No call is answered when the events do
 * not fold (the log is replayed to find its transcript, which a log that
 * breaks a rule does not have).
 *
 * @example Closing a turn cut after a tool call
 * ```ts
 * import { interruptedTurnClosers } from "@palimpsest/session/internal";
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const events = [
 *   { type: "turn/start", seq: 0, time: 5, data: { turn: 0 } },
 *   { type: "step/start", seq: 1, time: 5, data: { turn: 0, step: 0 } },
 *   { type: "assistant/message", seq: 2, time: 6, surfaceOp: "append", data: {
 *     turn: 0, step: 0, stream: [], message: { id: "a0", role: "assistant",
 *       content: [{ type: "tool-call", id: "c1", name: "ls", arguments: "{}" }],
 *       source: { kind: "model", provider: "p", model: "m" } } } },
 *   { type: "tool/call", seq: 3, time: 7, data: { turn: 0, step: 0, callId: "c1", name: "ls", arguments: "{}" } },
 * ].map((e) => Result.getOrThrow(decodeEventResult(e)));
 * const closers = interruptedTurnClosers(events);
 * assert.deepEqual(closers.map((e) => e.type), ["tool/result", "step/end", "turn/end"]);
 * assert.deepEqual(closers[0]?.sourceEventSeqs, [3]);
 * assert.equal(closers[2]?.time, 7);
 * ```
 */
export function interruptedTurnClosers(
  events: ReadonlyArray<SessionEvent>,
  options?: CloserOptions,
): ReadonlyArray<SessionEvent> {
  const last = events[events.length - 1];
  if (last === undefined) return [];
  const open = openWork(events);
  const live = options?.live;
  const compactions = open.compactions.filter((c) =>
    live?.compactions.has(c.compactionId) !== true
  );
  const turnIsLive = open.turns.some((t) => live?.turns.has(t.turn) === true);
  const turns = turnIsLive || options?.turns === false ? [] : open.turns;
  const outermost = turns[0];
  if (compactions.length === 0 && outermost === undefined) return [];
  const logged = new Map<string, SessionSeq>();
  if (outermost !== undefined) {
    for (const event of events) {
      if (
        event.type === "tool/call" && event.seq > outermost.startSeq &&
        !logged.has(event.data.callId)
      ) {
        logged.set(event.data.callId, event.seq);
      }
    }
  }
  const unanswered = outermost === undefined
    ? []
    : openCallsAtEnd(events, outermost.startSeq, options?.surface);
  const partial = options?.partialAnswer === "append"
    ? partialToAppend(events, turns)
    : undefined;
  // A log that ends at the last safe seq cannot take another event, so there
  // is nothing to number the closers with.
  const count = compactions.length + unanswered.length +
    (partial === undefined ? 0 : 1) +
    turns.reduce((n, t) => n + (t.step === undefined ? 1 : 2), 0);
  if (last.seq > Number.MAX_SAFE_INTEGER - count) return [];
  const time = last.time;
  let seq = last.seq + 1;
  const next = (): SessionSeq => SessionSeq.make(seq++);
  const closers: SessionEvent[] = [];
  for (const compaction of [...compactions].reverse()) {
    const end: CompactionEndEvent = {
      type: "compaction/end",
      seq: next(),
      time,
      data: {
        compactionId: compaction.compactionId,
        error: { _tag: COMPACTION_ABANDONED },
      },
    };
    closers.push(end);
  }
  for (const call of unanswered) {
    const toolCall = logged.get(call.callId);
    const code = toolCall === undefined
      ? TOOL_NOT_STARTED
      : TOOL_OUTCOME_UNKNOWN;
    const result: ToolResultEvent = {
      type: "tool/result",
      seq: next(),
      time,
      data: {
        turn: call.turn,
        step: call.step,
        message: {
          id: `repair-${call.callId}`,
          role: "user",
          content: [{
            type: "tool-result",
            toolCallId: call.callId,
            content: [{ type: "text", text: closerText(code) }],
            isError: true,
          }],
          source: { kind: "tool", callId: call.callId },
        },
        error: { name: "ToolInterrupted", code },
      },
      surfaceOp: "append",
      sourceEventSeqs: [toolCall ?? call.message],
    };
    closers.push(result);
  }
  if (partial !== undefined) {
    const message: AssistantMessageEvent = {
      type: "assistant/message",
      seq: next(),
      time,
      data: {
        turn: partial.turn,
        step: partial.step,
        message: {
          id: `repair-partial-${partial.seqs[0] ?? 0}`,
          role: "assistant",
          content: partial.content,
          source: partial.source ?? UNKNOWN_MODEL,
        },
        stream: partial.stream,
        interrupted: true,
      },
      surfaceOp: "append",
    };
    closers.push(message);
  }
  for (const turn of [...turns].reverse()) {
    if (turn.step !== undefined) {
      const stepEnd: StepEndEvent = {
        type: "step/end",
        seq: next(),
        time,
        data: { turn: turn.turn, step: turn.step },
      };
      closers.push(stepEnd);
    }
    const turnEnd: TurnEndEvent = {
      type: "turn/end",
      seq: next(),
      time,
      data: { turn: turn.turn, reason: { kind: "interrupted" } },
    };
    closers.push(turnEnd);
  }
  return closers;
}
