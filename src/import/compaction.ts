/**
 * The source's compactions as replacements: the surface nodes before the
 * first kept one replaced by one message that cites each of them, as the
 * library's \`compact\` does. A replacement may not shadow a call no
 * result answered: the open turn is closed first, as the library's repair
 * closes it, when the range would hold one.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import type { ContentBlock } from "../core/message.ts";
import type { SessionSeq } from "../core/seq.ts";
import { surfaceEvent, surfaceNodes } from "../surface/mod.ts";
import { append, type Builder, type Step, uniqueId } from "./builder.ts";
import { notCarried } from "./notes.ts";
import { closeTurn } from "./turns.ts";

/** What a compaction replaces and with what. */
export interface CompactionInput {
  readonly compactionId: string;
  readonly summary: string;
  /** The summary message's content (default: the summary as one text block). */
  readonly content?: ReadonlyArray<ContentBlock>;
  /** The first surface position kept (nodes before it are replaced); default: all. */
  readonly keepFrom?: (seq: SessionSeq) => boolean;
  readonly kind: string;
  /** The replacing message's id (default `compaction-<compactionId>`). */
  readonly messageId?: string;
  /** The replacing message's source (default the `compaction` plugin). */
  readonly source?: Readonly<Record<string, unknown>> & {
    readonly kind: string;
  };
}

/**
 * Replaces the surface nodes before the first kept one by a summary, as the
 * library's `compact` does: `compaction/start`, `compaction/summary`, a
 * `user/message` replacing the range and citing both plus every shadowed
 * node, `compaction/end`. The system head is never shadowed. A kept tool
 * result whose call falls in the range is shadowed with it (the pair stays
 * whole) and reported. When the range would hold a call with no result,
 * the open turn is closed first (an error result per open call, as the
 * library's repair appends them): a replacement may not shadow an
 * unanswered call. With nothing to replace, the summary is appended.
 * Gives the `compaction/start` event's seq, for messages that cite it.
 */
export const compactBefore = (
  b: Builder,
  line: number,
  input: CompactionInput,
): Step<SessionSeq> => {
  if (shadowsOpenCall(b, input)) {
    const closed = closeTurn(b, line, "interrupted");
    if (Result.isFailure(closed)) return Result.fail(closed.failure);
  }
  const nodes = surfaceNodes(b.surface);
  let first = 0;
  const head = nodes[0] === undefined
    ? undefined
    : surfaceEvent(b.surface, nodes[0]);
  if (head?.type === "system/message") first = 1;
  let end = first;
  while (end < nodes.length) {
    const seq = nodes[end];
    if (seq === undefined) break;
    if (input.keepFrom !== undefined && input.keepFrom(seq)) break;
    end += 1;
  }
  // Keep call/result pairs whole: a kept result whose call is shadowed goes too.
  const shadowedMessages = new Set<number>();
  for (let i = first; i < end; i++) {
    const seq = nodes[i];
    if (seq !== undefined) shadowedMessages.add(seq);
  }
  while (end < nodes.length) {
    const seq = nodes[end];
    const event = seq === undefined ? undefined : surfaceEvent(b.surface, seq);
    if (event?.type !== "tool/result") break;
    const call = b.calls.get(event.data.message.source.callId);
    if (call === undefined || !shadowedMessages.has(call.message)) break;
    notCarried(
      b,
      line,
      input.kind,
      `the kept result of call ${
        JSON.stringify(event.data.message.source.callId)
      } is replaced with its call, so that the pair stays whole`,
    );
    end += 1;
  }
  const shadowed = nodes.slice(first, end);
  const turn = b.turn ?? Math.max(0, b.nextTurn - 1);
  const id = input.compactionId;
  const started = append(b, {
    type: "compaction/start",
    data: { compactionId: id, turn },
  }, line);
  if (Result.isFailure(started)) return Result.fail(started.failure);
  const summarized = append(b, {
    type: "compaction/summary",
    data: { compactionId: id, summary: input.summary, shadowedSeqs: shadowed },
  }, line);
  if (Result.isFailure(summarized)) return Result.fail(summarized.failure);
  const startSeq = shadowed[0];
  const endSeq = shadowed[shadowed.length - 1];
  const content = input.content ?? [{ type: "text", text: input.summary }];
  const message = {
    id: uniqueId(b, input.messageId ?? `compaction-${id}`),
    role: "user",
    content,
    source: input.source ?? { kind: "plugin", plugin: "compaction" },
  };
  const cited = [started.success.seq, summarized.success.seq];
  const summary = startSeq === undefined || endSeq === undefined
    ? append(b, {
      type: "user/message",
      surfaceOp: "append",
      sourceEventSeqs: cited,
      data: message,
    }, line)
    : append(b, {
      type: "user/message",
      surfaceOp: { op: "replace", startSeq, endSeq },
      sourceEventSeqs: [...cited, ...shadowed],
      data: message,
    }, line);
  if (Result.isFailure(summary)) return Result.fail(summary.failure);
  b.summaries.add(summary.success.seq);
  const ended = append(b, {
    type: "compaction/end",
    data: { compactionId: id },
  }, line);
  if (Result.isFailure(ended)) return Result.fail(ended.failure);
  if (startSeq === undefined) {
    notCarried(
      b,
      line,
      input.kind,
      "compaction with nothing before it on the surface; its summary is appended",
    );
  }
  b.compactions += 1;
  return Result.succeed(started.success.seq);
};

/** Whether the nodes before the first kept one hold an open call's message. */
const shadowsOpenCall = (b: Builder, input: CompactionInput): boolean => {
  if (b.openCalls.size === 0) return false;
  const messages = new Set<number>();
  for (const callId of b.openCalls) {
    const call = b.calls.get(callId);
    if (call !== undefined) messages.add(call.message);
  }
  for (const seq of surfaceNodes(b.surface)) {
    if (input.keepFrom !== undefined && input.keepFrom(seq)) return false;
    if (messages.has(seq)) return true;
  }
  return false;
};

/** Whether a surface node came from a source line at or after `line`. */
export const fromLineOnward =
  (b: Builder, line: number) => (seq: SessionSeq): boolean =>
    !b.summaries.has(seq) && (b.origin[seq] ?? 0) >= line;
