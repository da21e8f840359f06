/**
 * Partial answers: what the `assistant/partial` batches of a log say of an
 * answer that never settled (the process died while the model's answer
 * streamed). The turn loop writes the batches while a request streams;
 * the answer's `assistant/message` (or `assistant/attempt`) settles it.
 * Batches that no settled answer follows are a partial answer: kept for
 * people (the view, the transcript, a follower), not sent to the model,
 * unless a repair is asked to append it as an interrupted message.
 *
 * This module reads the batches; what repair appends is `repair.ts`.
 *
 * @module
 */
import type { SessionSeq } from "../core/seq.ts";
import type {
  AssistantPartialEvent,
  SessionEvent,
  StreamRecord,
} from "../core/event.ts";
import type { ModelSource } from "../core/message.ts";

/** The text and reasoning of a partial answer, in the order they started. */
export type PartialBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "reasoning"; readonly text: string };

/** An answer whose parts were written as they streamed and that never settled. */
export interface PartialAnswer {
  /** The turn. */
  readonly turn: number;
  /** The step. */
  readonly step: number;
  /** The seqs of its batches, in order. */
  readonly seqs: ReadonlyArray<SessionSeq>;
  /** The records of its batches, in order. */
  readonly stream: ReadonlyArray<StreamRecord>;
  /** Its text and reasoning blocks (a block per part id, in start order). */
  readonly content: ReadonlyArray<PartialBlock>;
  /**
   * The calls it was making, with their arguments as far as they streamed
   * (`complete` when the call's `tool-call` part came): shown, never run.
   */
  readonly calls: ReadonlyArray<{
    readonly id: string;
    readonly name: string;
    readonly arguments: string;
    readonly complete: boolean;
  }>;
  /** The model, when its first batch names it. */
  readonly source: ModelSource | undefined;
}

/**
 * The field `key` of a recorded stream chunk (opaque JSON), or `undefined`.
 * @internal
 */
export const chunkField = (chunk: unknown, key: string): unknown =>
  typeof chunk === "object" && chunk !== null
    ? Reflect.get(chunk, key)
    : undefined;

/**
 * The string field `key` of a recorded stream chunk, or `""`.
 * @internal
 */
export const chunkText = (chunk: unknown, key: string): string => {
  const value = chunkField(chunk, key);
  return typeof value === "string" ? value : "";
};

/**
 * What a partial answer's stream says: text and reasoning by part id, in
 * the order they started; the calls whose arguments were streaming.
 */
const contentOf = (
  stream: ReadonlyArray<StreamRecord>,
): Pick<PartialAnswer, "content" | "calls"> => {
  const blocks = new Map<
    string,
    { type: "text" | "reasoning"; text: string }
  >();
  const calls = new Map<
    string,
    { id: string; name: string; arguments: string; complete: boolean }
  >();
  for (const { chunk } of stream) {
    const type = chunkField(chunk, "type");
    const id = chunkText(chunk, "id");
    switch (type) {
      case "text-start":
      case "reasoning-start":
      case "text-delta":
      case "reasoning-delta": {
        const kind = type.startsWith("text") ? "text" : "reasoning";
        const key = `${kind}:${id}`;
        const block = blocks.get(key) ?? { type: kind, text: "" };
        blocks.set(key, block);
        block.text += chunkText(chunk, "delta");
        break;
      }
      case "tool-params-start":
        calls.set(id, {
          id,
          name: chunkText(chunk, "name"),
          arguments: "",
          complete: false,
        });
        break;
      case "tool-params-delta": {
        const call = calls.get(id);
        if (call !== undefined) call.arguments += chunkText(chunk, "delta");
        break;
      }
      case "tool-call": {
        if (chunkField(chunk, "providerExecuted") === true) break;
        const call = calls.get(id);
        const params = chunkField(chunk, "params");
        calls.set(id, {
          id,
          name: chunkText(chunk, "name"),
          arguments: call?.arguments ||
            (params === undefined ? "" : JSON.stringify(params)),
          complete: true,
        });
        break;
      }
    }
  }
  return {
    content: [...blocks.values()].filter((b) => b.text.length > 0),
    calls: [...calls.values()],
  };
};

const sourceOf = (
  batch: AssistantPartialEvent | undefined,
): ModelSource | undefined => batch?.data.source;

/**
 * The partial answers of a log: each run of `assistant/partial` batches of
 * one request (from a batch at offset 0 on, same turn and step) that no
 * `assistant/message` or `assistant/attempt` of its turn and step follows.
 * A settled answer embeds the whole stream, so its batches are not one.
 *
 * @param events The log (or its last events), in seq order.
 * @returns The partial answers, in log order.
 *
 * @example An answer cut while it streamed
 * ```ts
 * import { partialAnswers } from "@palimpsest/session";
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const events = [
 *   { type: "turn/start", seq: 0, time: 5, data: { turn: 0 } },
 *   { type: "step/start", seq: 1, time: 5, data: { turn: 0, step: 0 } },
 *   { type: "assistant/partial", seq: 2, time: 6, ignorable: true, data: {
 *     turn: 0, step: 0, offset: 0, stream: [
 *       { time: 6, chunk: { type: "text-start", id: "t" } },
 *       { time: 6, chunk: { type: "text-delta", id: "t", delta: "It is " } },
 *     ] } },
 * ].map((e) => Result.getOrThrow(decodeEventResult(e)));
 * const [answer] = partialAnswers(events);
 * assert.deepEqual(answer?.content, [{ type: "text", text: "It is " }]);
 * ```
 */
export function partialAnswers(
  events: ReadonlyArray<SessionEvent>,
): ReadonlyArray<PartialAnswer> {
  // The open run of batches per turn and step.
  const open = new Map<string, AssistantPartialEvent[]>();
  const done: Array<{ at: number; batches: AssistantPartialEvent[] }> = [];
  const close = (key: string): void => {
    open.delete(key);
  };
  let order = 0;
  const firstAt = new Map<string, number>();
  for (const event of events) {
    switch (event.type) {
      case "assistant/partial": {
        const key = `${event.data.turn}:${event.data.step}`;
        const run = open.get(key);
        if (run === undefined || event.data.offset === 0) {
          // A new request of the step: the last one never settled.
          if (run !== undefined) {
            done.push({ at: firstAt.get(key) ?? 0, batches: run });
          }
          open.set(key, [event]);
          firstAt.set(key, order++);
        } else {
          run.push(event);
        }
        break;
      }
      case "assistant/message":
      case "assistant/attempt":
        close(`${event.data.turn}:${event.data.step}`);
        break;
    }
  }
  for (const [key, batches] of open) {
    done.push({ at: firstAt.get(key) ?? 0, batches });
  }
  done.sort((a, b) => a.at - b.at);
  return done.map(({ batches }) => {
    const first = batches[0];
    const stream = batches.flatMap((b) => b.data.stream);
    return {
      turn: first?.data.turn ?? 0,
      step: first?.data.step ?? 0,
      seqs: batches.map((b) => b.seq),
      stream,
      ...contentOf(stream),
      source: sourceOf(first),
    };
  });
}
