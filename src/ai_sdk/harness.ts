/**
 * For harnesses that call the AI SDK themselves (`generateText`,
 * `streamText`, an `Agent`): the session's messages as the AI SDK's
 * `ModelMessage[]`, and the steps of a result recorded as session events.
 *
 * - {@link toModelMessages} derives the prompt the way every adapter of the
 *   library does: the pairing pass first (each call answered once, right
 *   after the message that made it), attachments through the resolver.
 * - {@link recordAiSdkSteps} appends one turn: `turn/start`, the input,
 *   then for each step `step/start`, the assistant's answer (an
 *   `assistant/message` embedding the step as `effect/ai` stream parts with
 *   its usage, or an `assistant/attempt` when the step said nothing), one
 *   `tool/call` per call, one `tool/result` per result or tool error the
 *   step holds, and `step/end`; then `turn/end` with the last step's finish
 *   reason. The events go through the session store (the answer and its
 *   calls as one batch, the results and `step/end` as the next), so the log
 *   has the same durability and repair as `runTurn`'s.
 *
 * Decisions:
 *
 * - Ids follow `runTurn`: `assistant-<seq>`, `tool-<seq>`, `user-<seq>`;
 *   a call whose id the session already uses gets a fresh one, as in
 *   `recordAnswer`.
 * - A step whose finish reason is `interrupted` (the stream ended without
 *   the provider's end) is recorded as cut (`interrupted: true`), and a
 *   last such step ends the turn `interrupted`.
 * - A tool result's text is the tool's output as is when it is a string,
 *   else its JSON; a tool error is an error result
 *   (`error: { name, code: "TOOL_FAILED" }`) with the error's message.
 * - A call the step has no result for (a tool with no `execute`, or one
 *   waiting for approval) is left open, and so is the turn (no `turn/end`):
 *   the harness answers the call with `Draft.toolResult` and ends the turn
 *   with `Draft.turnEnd`, or the store's `repair` closes both.
 * - Calls and results the provider ran itself (`providerExecuted`) stay in
 *   the embedded stream only, as in `recordAnswer`.
 * - The stream parts of a step all carry the time it was recorded: a
 *   finished result has no arrival times.
 *
 * @module
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import type { Response } from "effect/ai";
import type { ModelMessage, StepResult, ToolSet } from "ai";
import type { Message } from "../core/message.ts";
import type { TurnEndReason } from "../core/event.ts";
import { Draft } from "../session/drafts.ts";
import {
  type AppendError,
  type EventDraft,
  knownEventAt,
  Session,
} from "../session/session.ts";
import { turnMarks } from "../session/prior.ts";
import { jsonText } from "../core/json.ts";
import { SessionSeq } from "../core/seq.ts";
import type {
  SessionHandle,
  SessionStore,
  WriteError,
} from "../store/store.ts";
import type { AdapterOptions } from "../providers/content.ts";
import { toPrompt } from "../ai/prompt.ts";
import { recordAnswer, sessionCallIds, type TimedPart } from "../ai/record.ts";
import { TOOL_FAILED } from "../ai/turn_types.ts";
import { endReasonOf } from "../ai/turn_parts.ts";
import { appendDrafts } from "../ai/_store.ts";
import { toProviderPrompt } from "./request.ts";
import { counts } from "./response.ts";

/**
 * Derived messages as the AI SDK's `ModelMessage[]`, for `generateText`,
 * `streamText` or an `Agent`: {@link toPrompt} (pairing applied,
 * attachments resolved), then each message as the AI SDK takes it. Tool
 * results become `tool` messages whose output is `text` (`error-text` for a
 * failed tool), or `content` when the result holds images or files.
 *
 * @param messages Derived messages, in order.
 * @param options How attachments are resolved.
 * @returns The messages for the AI SDK.
 *
 * @example A call and its result
 * ```ts
 * import { toModelMessages } from "@palimpsest/session/ai-sdk";
 * import type { Message } from "@palimpsest/session";
 * import assert from "node:assert/strict";
 *
 * const messages: Message[] = [
 *   { id: "u0", role: "user", source: { kind: "user" },
 *     content: [{ type: "text", text: "list the files" }] },
 *   { id: "a1", role: "assistant", source: { kind: "model", provider: "p", model: "m" },
 *     content: [{ type: "tool-call", id: "c1", name: "ls", arguments: '{"dir":"."}' }] },
 *   { id: "r2", role: "user", source: { kind: "tool", callId: "c1" },
 *     content: [{ type: "tool-result", toolCallId: "c1", content: [{ type: "text", text: "a.txt" }] }] },
 * ];
 * assert.deepEqual(toModelMessages(messages), [
 *   { role: "user", content: [{ type: "text", text: "list the files" }] },
 *   { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "ls", input: { dir: "." } }] },
 *   { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "ls", output: { type: "text", value: "a.txt" } }] },
 * ]);
 * ```
 */
export function toModelMessages(
  messages: ReadonlyArray<Message>,
  options?: AdapterOptions,
): Array<ModelMessage> {
  return toProviderPrompt(toPrompt(messages, options));
}

/** Options of {@link recordAiSdkSteps}. */
export interface RecordAiSdkStepsOptions<Tools extends ToolSet> {
  /** A write handle on the session. */
  readonly handle: SessionHandle;
  /** The steps of the result (`result.steps`, or `await result.steps`). */
  readonly steps: ReadonlyArray<StepResult<Tools>>;
  /**
   * What started the turn: a user message's text, or drafts appended right
   * after `turn/start`. Nothing by default (the input is already in the
   * log).
   */
  readonly input?: string | ReadonlyArray<EventDraft>;
}

/** What {@link recordAiSdkSteps} appended. */
export interface RecordedAiSdkTurn {
  /** The session afterwards. */
  readonly session: Session;
  /** The turn number. */
  readonly turn: number;
  /** The steps recorded. */
  readonly steps: number;
  /** The reason `turn/end` records. */
  readonly reason: TurnEndReason["kind"];
  /** Calls the steps left without a result, by id; the turn is then open. */
  readonly openCalls: ReadonlyArray<string>;
}

type Finish = Response.FinishReason;

const finishOf = (reason: string): Finish => {
  switch (reason) {
    case "stop":
    case "length":
    case "content-filter":
    case "tool-calls":
    case "error":
    case "other":
      return reason;
    default:
      return "unknown";
  }
};

const usageOf = <Tools extends ToolSet>(
  step: StepResult<Tools>,
): Response.FinishPartEncoded["usage"] => ({
  inputTokens: counts({
    uncached: step.usage.inputTokenDetails.noCacheTokens,
    total: step.usage.inputTokens,
    cacheRead: step.usage.inputTokenDetails.cacheReadTokens,
    cacheWrite: step.usage.inputTokenDetails.cacheWriteTokens,
  }),
  outputTokens: counts({
    total: step.usage.outputTokens,
    text: step.usage.outputTokenDetails.textTokens,
    reasoning: step.usage.outputTokenDetails.reasoningTokens,
  }),
});

/** A step's content as the `effect/ai` stream parts it stands for. */
const partsOf = <Tools extends ToolSet>(
  step: StepResult<Tools>,
): Array<Response.StreamPartEncoded> => {
  const out: Array<Response.StreamPartEncoded> = [];
  for (const [i, part] of step.content.entries()) {
    switch (part.type) {
      case "text":
      case "reasoning": {
        const id = `${part.type}-${i}`;
        if (part.type === "text") {
          out.push(
            { type: "text-start", id },
            { type: "text-delta", id, delta: part.text },
            { type: "text-end", id },
          );
        } else {
          out.push(
            { type: "reasoning-start", id },
            { type: "reasoning-delta", id, delta: part.text },
            { type: "reasoning-end", id },
          );
        }
        break;
      }
      case "tool-call":
        out.push({
          type: "tool-call",
          id: part.toolCallId,
          name: part.toolName,
          params: JSON.parse(jsonText(part.input ?? {})),
          ...(part.providerExecuted === true ? { providerExecuted: true } : {}),
        });
        break;
      default:
        break;
    }
  }
  out.push({
    type: "finish",
    reason: finishOf(step.finishReason),
    usage: usageOf(step),
  });
  return out;
};

/** A tool's outcome in a step: its output, or the error it failed with. */
interface Outcome {
  readonly text: string;
  readonly error?: { readonly name: string; readonly code: string };
}

const errorName = (error: unknown): string =>
  error instanceof Error ? error.name : "ToolError";

const errorText = (error: unknown): string =>
  error instanceof Error ? error.message : jsonText(error);

const outcomesOf = <Tools extends ToolSet>(
  step: StepResult<Tools>,
): Map<string, Outcome> => {
  const out = new Map<string, Outcome>();
  for (const part of step.content) {
    if (part.type === "tool-result" && part.providerExecuted !== true) {
      const output: unknown = part.output;
      out.set(part.toolCallId, {
        text: typeof output === "string" ? output : jsonText(output ?? null),
      });
    } else if (part.type === "tool-error" && part.providerExecuted !== true) {
      out.set(part.toolCallId, {
        text: errorText(part.error),
        error: { name: errorName(part.error), code: TOOL_FAILED },
      });
    }
  }
  return out;
};

const nextTurn = (session: Session): number => {
  const last = turnMarks(session).lastTurn;
  return last === undefined ? 0 : last + 1;
};

/**
 * Records the steps of an AI SDK result (`generateText`'s, `streamText`'s
 * or an `Agent`'s) as one turn of the session: see the module doc for the
 * events.
 *
 * @param options The handle, the steps and the turn's input.
 * @returns `Effect<RecordedAiSdkTurn, AppendError | WriteError, SessionStore>`.
 *
 * @example Recording a generateText result
 * ```ts
 * import { recordAiSdkSteps, toModelMessages } from "@palimpsest/session/ai-sdk";
 * import { deriveMessages, Draft, layerMemoryStore, SessionStore } from "@palimpsest/session";
 * import { generateText } from "ai";
 * import { MockLanguageModelV4 } from "ai/test";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const model = new MockLanguageModelV4({ doGenerate: {
 *   content: [{ type: "text", text: "Hello." }], warnings: [],
 *   finishReason: { unified: "stop", raw: "stop" },
 *   usage: { inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
 *            outputTokens: { total: 2, text: 2, reasoning: undefined } },
 * } });
 * const recorded = await Effect.runPromise(Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   const handle = yield* store.create({ id: "s", createdAt: 0, isSeeded: false });
 *   yield* store.append(handle, [Draft.user("hi")]);
 *   const messages = toModelMessages(deriveMessages(handle.session.surface));
 *   const result = yield* Effect.promise(() => generateText({ model, messages }));
 *   return yield* recordAiSdkSteps({ handle, steps: result.steps });
 * }).pipe(Effect.scoped, Effect.provide(layerMemoryStore())));
 * assert.equal(recorded.steps, 1);
 * assert.equal(recorded.reason, "completed");
 * ```
 */
export function recordAiSdkSteps<Tools extends ToolSet>(
  options: RecordAiSdkStepsOptions<Tools>,
): Effect.Effect<
  RecordedAiSdkTurn,
  AppendError | WriteError,
  SessionStore
> {
  return Effect.gen(function* () {
    const { handle } = options;
    const turn = nextTurn(handle.session);
    const input: ReadonlyArray<EventDraft> = typeof options.input === "string"
      ? [Draft.user(options.input, {
        id: `user-${Session.nextSeq(handle.session) + 1}`,
      })]
      : options.input ?? [];
    yield* appendDrafts(handle, [Draft.turnStart(turn), ...input]);
    const open: string[] = [];
    let reason: TurnEndReason["kind"] = "completed";
    for (const [step, result] of options.steps.entries()) {
      const time = yield* Clock.currentTimeMillis;
      const parts: TimedPart[] = partsOf(result).map((chunk) => ({
        time,
        chunk,
      }));
      const start = Session.nextSeq(handle.session);
      // The assistant's answer is the event right after step/start.
      const answer = recordAnswer(parts, {
        turn,
        step,
        messageId: `assistant-${start + 1}`,
        source: {
          kind: "model",
          provider: result.model.provider,
          model: result.model.modelId,
        },
        cut: result.finishReason === "interrupted",
        usedCallIds: sessionCallIds(handle.session),
      });
      yield* appendDrafts(handle, [
        Draft.stepStart(turn, step),
        answer.draft,
        ...answer.toolCallDrafts,
      ]);
      const outcomes = outcomesOf(result);
      const results: EventDraft[] = [];
      for (const [i, call] of answer.calls.entries()) {
        const outcome = outcomes.get(answer.providerCallIds[i] ?? call.id);
        const callEvent = knownEventAt(
          handle.session,
          SessionSeq.make(start + 2 + i),
        );
        if (outcome === undefined || callEvent?.type !== "tool/call") {
          open.push(call.id);
          continue;
        }
        results.push(Draft.toolResult(callEvent, outcome.text, {
          id: `tool-${Session.nextSeq(handle.session) + results.length}`,
          ...(outcome.error === undefined ? {} : { error: outcome.error }),
        }));
      }
      yield* appendDrafts(handle, [...results, Draft.stepEnd(turn, step)]);
      reason = endReasonOf(result.finishReason);
    }
    const session = open.length > 0
      ? handle.session
      : yield* appendDrafts(handle, [Draft.turnEnd(turn, reason)]);
    return {
      session,
      turn,
      steps: options.steps.length,
      reason,
      openCalls: open,
    };
  });
}
