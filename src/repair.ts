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
 * This module computes the closers; appending them durably is the store's
 * `repair`.
 *
 * @module
 */
import { SessionSeq } from "./seq.ts";
import { emptySurfaceAt, forEachMessage, replayResult } from "./surface/mod.ts";
import type {
  SessionEvent,
  StepEndEvent,
  ToolResultEvent,
  TurnEndEvent,
} from "./event.ts";

/** Error code of a closer for a call whose `tool/call` was logged: the tool may have run. */
export const TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN" as const;
/** Error code of a closer for a call the harness never started. */
export const TOOL_NOT_STARTED = "TOOL_NOT_STARTED" as const;

interface IssuedCall {
  readonly callId: string;
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
): ReadonlyArray<IssuedCall> => {
  const first = events[0];
  if (first === undefined) return [];
  const folded = replayResult(events, emptySurfaceAt(first.seq));
  if (folded._tag === "Failure") return [];
  let open = new Map<string, IssuedCall>();
  const seen = new Set<string>();
  forEachMessage(folded.success, (seq, message) => {
    if (message.role === "assistant") {
      open = new Map();
      const event = events[seq - first.seq];
      const step = event?.type === "assistant/message" ? event.data.step : 0;
      for (const block of message.content) {
        if (block.type !== "tool-call" || seen.has(block.id)) continue;
        seen.add(block.id);
        if (seq > since) {
          open.set(block.id, { callId: block.id, step, message: seq });
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

const closerText = (code: string): string =>
  code === TOOL_OUTCOME_UNKNOWN
    ? "The session was interrupted while this tool call ran; its outcome is unknown."
    : "The session was interrupted before this tool call started; it did not run.";

/**
 * The events that close the last turn of a log when a crash left it open,
 * in order: one error `tool/result` (`isError: true`, `surfaceOp:
 * "append"`) per tool call the model issued in that turn without a result,
 * then `step/end` if a step is open, then `turn/end` with reason
 * `interrupted`. A closer cites the `tool/call` event when one was logged
 * (error code `TOOL_OUTCOME_UNKNOWN`), else the `assistant/message` that
 * issued the call (`TOOL_NOT_STARTED`). Every closer has the last event's
 * time; message ids are `repair-<callId>`.
 *
 * Which calls are answered: those the transcript leaves open at its end,
 * that is the `tool-call` blocks of the last assistant message on the
 * surface (when it was appended in the open turn) that no later result
 * answers. A `tool/call` event with no such block is not answered (a result
 * would answer a call the model never made), and neither is a call that
 * another assistant message already follows: a result appended now would
 * land after that message, where providers refuse it.
 *
 * The promise, exactly: the closers never add a transcript violation, and
 * they remove every `UnansweredToolCall` of the calls above. So after repair
 * {@link checkTranscript} is clean if and only if, before repair, its only
 * violations were unanswered calls of the last assistant message of the open
 * turn. A log that breaks this precondition (an orphan call followed by a
 * later assistant message, a result with no call) keeps those violations:
 * repair appends and never rewrites, and `pairToolCalls` of
 * `@palimpsest/session/ai` answers or drops them before a provider sees the
 * messages.
 *
 * @param events The log, in seq order.
 * @returns The closers with their seqs, continuing the log; empty when the
 * last turn is closed or there is none, when the events do not fold (the
 * log is replayed to find its transcript, which a log that breaks a rule
 * does not have), or when their seqs would run past the last safe integer
 * (no event can follow such a log).
 *
 * @example Closing a turn cut after a tool call
 * ```ts
 * import { interruptedTurnClosers } from "@palimpsest/session";
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
): ReadonlyArray<SessionEvent> {
  const last = events[events.length - 1];
  if (last === undefined) return [];
  let start = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]?.type === "turn/start") {
      start = i;
      break;
    }
  }
  const opener = events[start];
  if (
    opener?.type !== "turn/start"
  ) {
    return [];
  }
  const turn = opener.data.turn;
  const logged = new Map<string, SessionSeq>();
  let openStep: number | undefined;
  for (let i = start + 1; i < events.length; i++) {
    const event = events[i];
    if (event === undefined) continue;
    switch (event.type) {
      case "turn/end":
        if (event.data.turn === turn) return [];
        break;
      case "step/start":
        openStep = event.data.step;
        break;
      case "step/end":
        if (event.data.step === openStep) openStep = undefined;
        break;
      case "tool/call":
        if (!logged.has(event.data.callId)) {
          logged.set(event.data.callId, event.seq);
        }
        break;
    }
  }
  const unanswered = openCallsAtEnd(events, opener.seq);
  // A log that ends at the last safe seq cannot take another event, so there
  // is nothing to number the closers with.
  const count = unanswered.length + (openStep === undefined ? 1 : 2);
  if (last.seq > Number.MAX_SAFE_INTEGER - count) return [];
  const time = last.time;
  let seq = last.seq + 1;
  const next = (): SessionSeq => SessionSeq.make(seq++);
  const closers: SessionEvent[] = [];
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
        turn,
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
  if (openStep !== undefined) {
    const stepEnd: StepEndEvent = {
      type: "step/end",
      seq: next(),
      time,
      data: { turn, step: openStep },
    };
    closers.push(stepEnd);
  }
  const turnEnd: TurnEndEvent = {
    type: "turn/end",
    seq: next(),
    time,
    data: { turn, reason: { kind: "interrupted" } },
  };
  closers.push(turnEnd);
  return closers;
}
