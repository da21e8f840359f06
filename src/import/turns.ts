/**
 * Turn and step bookkeeping of an import: opening a turn for a user
 * message, steps for assistant messages, and closing the open turn, through
 * the library's repair (`interruptedTurnClosers`, in the source tool's own
 * words when it has them) when calls are left unanswered.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import { Draft } from "../session/drafts.ts";
import { interruptedTurnClosers } from "../session/repair.ts";
import type { SessionEvent, TurnEndReason } from "../core/event.ts";
import type { ToolResultBlock } from "../core/message.ts";
import {
  append,
  type Builder,
  done,
  ok,
  pushEvent,
  type Step,
} from "./builder.ts";
import { synthesized } from "./notes.ts";

/** Opens a new turn, closing the open one first. */
export const openTurn = (b: Builder, line: number): Step => {
  const closed = closeTurn(b, line);
  if (Result.isFailure(closed)) return closed;
  const turn = b.nextTurn++;
  const started = append(b, Draft.turnStart(turn), line);
  if (Result.isFailure(started)) return Result.fail(started.failure);
  b.turn = turn;
  b.nextStep = 0;
  b.reason = "completed";
  b.answered = false;
  return ok;
};

/**
 * The turn of a user message: a new one once the open turn has an answer,
 * else the open one (several user messages before the model answers, such
 * as a command and its output, are one turn).
 */
export const userTurn = (b: Builder, line: number): Step =>
  b.turn === undefined || b.answered ? openTurn(b, line) : ok;

/** Opens a turn when none is open. */
const ensureTurn = (b: Builder, line: number): Step =>
  b.turn === undefined ? openTurn(b, line) : ok;

/** Closes the open step, if any. */
export const closeStep = (b: Builder, line: number): Step => {
  if (b.turn === undefined || b.step === undefined) return ok;
  const step = b.step;
  b.step = undefined;
  const ended = append(
    b,
    Draft.stepEnd(b.turn, step),
    line,
  );
  return done(ended);
};

/** Opens a new step in the open turn (opening a turn if needed). */
export const openStep = (b: Builder, line: number): Step => {
  const turned = ensureTurn(b, line);
  if (Result.isFailure(turned)) return turned;
  const closed = closeStep(b, line);
  if (Result.isFailure(closed)) return closed;
  const turn = b.turn ?? 0;
  const step = b.nextStep++;
  const started = append(b, Draft.stepStart(turn, step), line);
  if (Result.isFailure(started)) return Result.fail(started.failure);
  b.step = step;
  return ok;
};

/**
 * Closes the open turn. A turn with calls the source never answered is
 * closed by the library's repair: one error result per call, `step/end`,
 * then `turn/end` with reason `interrupted`. Otherwise `turn/end` takes the
 * given reason, or the one the source last implied.
 */
export const closeTurn = (
  b: Builder,
  line: number,
  reason?: TurnEndReason["kind"],
): Step => {
  if (b.turn === undefined) return ok;
  if (b.openCalls.size > 0) {
    const closers = interruptedTurnClosers(b.events);
    for (const closer of closers) {
      if (closer.type === "tool/result") {
        const callId = closer.data.message.source.callId;
        const call = b.calls.get(callId);
        if (call !== undefined) call.answered = true;
        b.ids.add(closer.data.message.id);
        b.repairs += 1;
        const from = b.origin[call?.message ?? 0] ?? 0;
        synthesized(
          b,
          from,
          "tool-call",
          `error result closing call ${
            JSON.stringify(callId)
          } that the source never answered (interrupted turn)`,
        );
      }
      const pushed = pushEvent(b, withCloserText(b, closer), 0);
      if (Result.isFailure(pushed)) return Result.fail(pushed.failure);
    }
    b.openCalls.clear();
    b.turn = undefined;
    b.step = undefined;
    return ok;
  }
  const stepped = closeStep(b, line);
  if (Result.isFailure(stepped)) return stepped;
  const turn = b.turn;
  b.turn = undefined;
  const ended = append(
    b,
    Draft.turnEnd(turn, reason ?? b.reason),
    line,
  );
  return done(ended);
};

/** A repair's closing result, with the source tool's own text when it has one. */
const withCloserText = (b: Builder, closer: SessionEvent): SessionEvent => {
  if (closer.type !== "tool/result" || b.closerText === undefined) {
    return closer;
  }
  const [block] = closer.data.message.content;
  const text: ToolResultBlock = {
    ...block,
    content: [{ type: "text", text: b.closerText }],
  };
  return {
    ...closer,
    data: {
      ...closer.data,
      message: { ...closer.data.message, content: [text] as const },
    },
  };
};

/**
 * Closes the open turn when its last assistant message answered without
 * calls and nothing interrupted it: the source's turn was complete.
 */
export const closeAnsweredTurn = (b: Builder): Step =>
  b.turn !== undefined && b.openCalls.size === 0 && b.reason !== "interrupted"
    ? closeTurn(b, 0)
    : ok;
