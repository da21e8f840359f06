/**
 * The messages an importer appends through the {@link Builder}: user
 * messages, assistant messages (a step each, registering their calls), tool
 * results paired with their calls by id, and the error results that answer
 * calls the source left open, in the source tool's words.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import type { ContentBlock, ToolResultContentBlock } from "../core/message.ts";
import { Draft } from "../session/drafts.ts";
import type { SessionEvent } from "../core/event.ts";
import type { SessionSeq } from "../core/seq.ts";
import { surfaceEvent } from "../surface/mod.ts";
import { TOOL_NOT_STARTED } from "../session/repair.ts";
import { append, type Builder, ok, type Step, uniqueId } from "./builder.ts";
import { notCarried, synthesized } from "./notes.ts";
import { openStep } from "./turns.ts";
import { appendRewind, rewindPlan } from "./rewind.ts";

/** Appends a user-role message (any source). */
export const userMessage = (
  b: Builder,
  line: number,
  id: string,
  content: ReadonlyArray<ContentBlock>,
  source: Readonly<Record<string, unknown>> & { readonly kind: string },
  sourceEventSeqs?: ReadonlyArray<SessionSeq>,
): Step<SessionEvent> => {
  const draft = Draft.user(content, { id: uniqueId(b, id), source });
  // The source went back to an earlier point: this message carries the
  // rewind, citing the nodes it takes off (and nothing else).
  const to = b.rewindTo;
  const plan = to === undefined ? undefined : rewindPlan(b.surface, to);
  if (to !== undefined && plan !== undefined) {
    b.rewindTo = undefined;
    return appendRewind(b, line, to, plan, draft.data);
  }
  return append(b, {
    ...draft,
    ...(sourceEventSeqs === undefined || sourceEventSeqs.length === 0
      ? {}
      : { sourceEventSeqs }),
  }, line);
};

/** What an assistant message carries besides its content. */
export interface AssistantExtras {
  readonly provider: string;
  readonly model: string;
  readonly usage?: unknown;
  readonly interrupted?: boolean;
  readonly stream?: ReadonlyArray<unknown>;
}

/**
 * Appends an assistant message in a new step and registers its tool calls.
 * Non-empty tool-call ids are required by v3: a call without one is kept
 * as text and reported.
 */
export const assistantMessage = (
  b: Builder,
  line: number,
  id: string,
  content: ReadonlyArray<ContentBlock>,
  extras: AssistantExtras,
): Step<SessionEvent> => {
  const stepped = openStep(b, line);
  if (Result.isFailure(stepped)) return Result.fail(stepped.failure);
  const seen = new Set<string>();
  const blocks: ContentBlock[] = [];
  for (const block of content) {
    if (block.type === "tool-call") {
      if (block.id === "" || seen.has(block.id) || b.calls.has(block.id)) {
        notCarried(
          b,
          line,
          "tool-call",
          `call ${
            JSON.stringify(block.id)
          } has an empty or repeated id; kept as text`,
        );
        blocks.push({
          type: "text",
          text: `[tool call ${block.name} ${block.arguments}]`,
        });
        continue;
      }
      seen.add(block.id);
    }
    blocks.push(block);
  }
  const turn = b.turn ?? 0;
  const step = b.step ?? 0;
  const stream = (extras.stream ?? []).map((chunk) => ({
    time: b.time,
    chunk,
  }));
  const appended = append(
    b,
    Draft.assistant({
      turn,
      step,
      provider: extras.provider,
      model: extras.model,
      content: blocks,
      stream,
      id: uniqueId(b, id),
      ...(extras.usage === undefined ? {} : { usage: extras.usage }),
      ...(extras.interrupted === true ? { interrupted: true } : {}),
    }),
    line,
  );
  if (Result.isFailure(appended)) return appended;
  let calls = 0;
  for (const block of blocks) {
    if (block.type !== "tool-call") continue;
    calls += 1;
    b.calls.set(block.id, {
      message: appended.success.seq,
      turn,
      step,
      name: block.name,
      arguments: block.arguments,
      answered: false,
    });
    b.openCalls.add(block.id);
  }
  b.reason = calls > 0 ? "interrupted" : "completed";
  b.answered = true;
  return appended;
};

/**
 * Appends the result of a call: `tool/call` (the tool ran), then the
 * `tool/result` citing it. A result for an unknown or already answered call
 * is reported and left out (a provider would refuse it).
 */
export const toolResult = (
  b: Builder,
  line: number,
  kind: string,
  callId: string,
  content: ReadonlyArray<ToolResultContentBlock>,
  isError: boolean,
  meta?: unknown,
): Step => {
  const call = b.calls.get(callId);
  if (call === undefined) {
    notCarried(
      b,
      line,
      kind,
      `result for call ${
        JSON.stringify(callId)
      }, which no assistant message issued`,
    );
    return ok;
  }
  if (call.answered) {
    notCarried(
      b,
      line,
      kind,
      `second result for call ${JSON.stringify(callId)}`,
    );
    return ok;
  }
  if (surfaceEvent(b.surface, call.message) === undefined) {
    notCarried(
      b,
      line,
      kind,
      `result for call ${
        JSON.stringify(callId)
      }, whose message a compaction already replaced`,
    );
    call.answered = true;
    b.openCalls.delete(callId);
    return ok;
  }
  const logged = append(
    b,
    Draft.toolCall({
      turn: call.turn,
      step: call.step,
      callId,
      name: call.name,
      arguments: call.arguments,
    }),
    line,
  );
  if (Result.isFailure(logged)) return Result.fail(logged.failure);
  const callEvent = logged.success;
  if (callEvent.type !== "tool/call") return ok;
  const result = append(
    b,
    Draft.toolResult(callEvent, content, {
      id: uniqueId(b, `result-${callId}`),
      ...(isError ? { isError: true } : {}),
      ...(meta === undefined ? {} : { meta }),
    }),
    line,
  );
  if (Result.isFailure(result)) return Result.fail(result.failure);
  call.answered = true;
  b.openCalls.delete(callId);
  return ok;
};

/**
 * Answers every open call at once with an error result in the source
 * tool's words ({@link Builder.closerText}), as the library's repair does,
 * without ending the turn: where the source itself answers a call that got
 * no output right after it (Codex).
 */
export const closeOpenCalls = (b: Builder, line: number): Step => {
  for (const callId of [...b.openCalls]) {
    const call = b.calls.get(callId);
    b.openCalls.delete(callId);
    if (call === undefined) continue;
    call.answered = true;
    const made = append(b, {
      type: "tool/result",
      surfaceOp: "append",
      sourceEventSeqs: [call.message],
      data: {
        turn: call.turn,
        step: call.step,
        message: {
          id: uniqueId(b, `repair-${callId}`),
          role: "user",
          content: [{
            type: "tool-result",
            toolCallId: callId,
            content: [{
              type: "text",
              text: b.closerText ?? "The tool call got no result.",
            }],
            isError: true,
          }],
          source: { kind: "tool", callId },
        },
        error: { name: "ToolInterrupted", code: TOOL_NOT_STARTED },
      },
    }, line);
    if (Result.isFailure(made)) return Result.fail(made.failure);
    b.repairs += 1;
    synthesized(
      b,
      b.origin[call.message] ?? 0,
      "tool-call",
      `error result right after call ${
        JSON.stringify(callId)
      }, which the source never answered`,
    );
  }
  return ok;
};
