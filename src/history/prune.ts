/**
 * Pruning: replacing a tool result's content (one result, or every result
 * above a size), keeping every other field, with a `compaction/prune` record
 * of what was shadowed. Checked before anything is appended.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { seqInput, SessionSeq } from "../core/seq.ts";
import type {
  TextBlock,
  ToolResultBlock,
  ToolResultContentBlock,
} from "../core/message.ts";
import type { ToolResultEvent } from "../core/event.ts";
import {
  ReplaceStartNotOnSurface,
  ToolResultReplaceTargetNotToolResult,
} from "../core/errors.ts";
import { forEachNode, type Surface, surfaceEvent } from "../surface/mod.ts";
import {
  type AppendError,
  type EventDraft,
  Session,
} from "../session/session.ts";

/** Why {@link pruneToolResult} refused a node before appending anything. */
export type PruneError =
  | ReplaceStartNotOnSurface
  | ToolResultReplaceTargetNotToolResult;

const prunedDraft = (
  event: ToolResultEvent,
  content: ReadonlyArray<ToolResultContentBlock>,
): EventDraft => {
  const [block] = event.data.message.content;
  const blocks: readonly [ToolResultBlock] = [{ ...block, content }];
  return {
    type: "tool/result",
    surfaceOp: { op: "replace", startSeq: event.seq, endSeq: event.seq },
    sourceEventSeqs: [event.seq],
    data: {
      ...event.data,
      message: { ...event.data.message, content: blocks },
    },
    ...(event.ignorable === true ? { ignorable: true } : {}),
  };
};

const pruneDrafts = (
  event: ToolResultEvent,
  content: ReadonlyArray<ToolResultContentBlock>,
): EventDraft[] => [
  { type: "compaction/prune", data: { shadowedSeqs: [event.seq] } },
  prunedDraft(event, content),
];

const toolResultAt = (
  surface: Surface,
  seq: SessionSeq,
): PruneError | ToolResultEvent => {
  const replacer = SessionSeq.make(surface.nextSeq + 1);
  const event = surfaceEvent(surface, seq);
  if (event === undefined) {
    return new ReplaceStartNotOnSurface({ seq: replacer, startSeq: seq });
  }
  if (event.type !== "tool/result") {
    return new ToolResultReplaceTargetNotToolResult({
      seq: replacer,
      target: seq,
      targetType: event.type,
    });
  }
  return event;
};

/**
 * Replaces the content of one tool result. Appends
 * `compaction/prune {shadowedSeqs: [seq]}` then a `tool/result` replacing
 * exactly that node (`startSeq = endSeq = seq`, `sourceEventSeqs: [seq]`)
 * that keeps every field (message id, source, call id, `isError`, `turn`,
 * `step`, `error`, `meta`) but the block's inner content.
 *
 * @param session The session.
 * @param seq A current `tool/result` node.
 * @param content The new inner content of its `tool-result` block.
 * @returns `Effect<Session, PruneError | AppendError>`: failing with
 * `ReplaceStartNotOnSurface` when `seq` is not on the surface or
 * `ToolResultReplaceTargetNotToolResult` when it is not a tool result.
 *
 * @example Pruning a large listing
 * ```ts
 * import { deriveMessages, pruneToolResult, Session, SessionSeq } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   const session = yield* Session.append(empty, {
 *     type: "tool/result", surfaceOp: "append",
 *     data: { turn: 0, step: 0, message: {
 *       id: "r0", role: "user", source: { kind: "tool", callId: "c0" },
 *       content: [{ type: "tool-result", toolCallId: "c0", content: [{ type: "text", text: "x".repeat(10_000) }] }],
 *     } },
 *   });
 *   const pruned = yield* pruneToolResult(session, SessionSeq.make(0), [{ type: "text", text: "[listing pruned]" }]);
 *   return deriveMessages(pruned.surface);
 * });
 * const [message] = Effect.runSync(program);
 * assert.equal(message?.id, "r0");
 * assert.deepEqual(message?.content[0], {
 *   type: "tool-result", toolCallId: "c0", content: [{ type: "text", text: "[listing pruned]" }],
 * });
 * ```
 */
export function pruneToolResult(
  session: Session,
  seqGiven: number,
  content: ReadonlyArray<ToolResultContentBlock>,
): Effect.Effect<Session, PruneError | AppendError> {
  return Effect.suspend((): Effect.Effect<
    Session,
    PruneError | AppendError
  > => {
    const checked = seqInput(seqGiven);
    if (Result.isFailure(checked)) return Effect.fail(checked.failure);
    const seq = checked.success;
    const target = toolResultAt(session.surface, seq);
    if ("_tag" in target) return Effect.fail(target);
    return Session.appendAll(session, pruneDrafts(target, content));
  });
}

/** Options of {@link pruneLargeToolResults}. */
export interface PruneLargeOptions {
  /** A result is pruned when its text is longer than this. */
  readonly thresholdChars: number;
  /** How many characters of the start of the text to keep. */
  readonly headChars: number;
  /** How many characters of the end of the text to keep. */
  readonly tailChars: number;
}

/** One result pruned by {@link pruneLargeToolResults}. */
export interface PrunedToolResult {
  /** The pruned `tool/result` node. */
  readonly seq: SessionSeq;
  /** The `tool/result` that replaced it. */
  readonly replacement: SessionSeq;
  /** Characters of text removed (net of the marker). */
  readonly savedChars: number;
}

/** What {@link pruneLargeToolResults} did. */
export interface PruneLargeResult {
  /** The session after the prunes. */
  readonly session: Session;
  /** Each pruned result, in surface order. */
  readonly pruned: ReadonlyArray<PrunedToolResult>;
  /** The characters saved in total. */
  readonly savedChars: number;
}

const isHigh = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

const marker = (n: number): string => `\n[… ${n} characters pruned …]\n`;

/** Head and tail of the text blocks with a marker between, or undefined. */
const prunedContent = (
  content: ReadonlyArray<ToolResultContentBlock>,
  options: PruneLargeOptions,
): { content: ToolResultContentBlock[]; saved: number } | undefined => {
  const texts: TextBlock[] = [];
  for (const block of content) if (block.type === "text") texts.push(block);
  const text = texts.map((t) => t.text).join("");
  if (!(text.length > options.thresholdChars)) return undefined;
  let head = Math.max(0, Math.floor(options.headChars)) || 0;
  let tail = text.length - (Math.max(0, Math.floor(options.tailChars)) || 0);
  if (head > 0 && isHigh(text.charCodeAt(head - 1))) head--;
  if (tail > 0 && tail < text.length && isLow(text.charCodeAt(tail))) tail++;
  if (head >= tail) return undefined;
  const kept = text.slice(0, head) + marker(tail - head) + text.slice(tail);
  const saved = text.length - kept.length;
  if (saved <= 0) return undefined;
  const out: ToolResultContentBlock[] = [];
  let placed = false;
  for (const block of content) {
    if (block.type !== "text") out.push(block);
    else if (!placed) {
      out.push({ ...block, text: kept });
      placed = true;
    }
  }
  return { content: out, saved };
};

/**
 * Prunes every current tool result whose text is longer than
 * `thresholdChars`: its text blocks become one text block (where the first
 * was) holding the first `headChars` and last `tailChars` characters with
 * `\n[… N characters pruned …]\n` between; other blocks stay. A result is
 * left alone when pruning would save nothing, so with `thresholdChars` at
 * least `headChars + tailChars` plus the marker a pruned result is never
 * pruned again. All prunes are appended in one all-or-nothing batch, each
 * as {@link pruneToolResult} would.
 *
 * @param session The session.
 * @param options The threshold and how much of each end to keep.
 * @returns `Effect<PruneLargeResult, AppendError>`: the new session, what was
 * pruned and the characters saved.
 *
 * @example Pruning one oversized result
 * ```ts
 * import { pruneLargeToolResults, Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const result = (id: string, text: string) => ({
 *   type: "tool/result" as const, surfaceOp: "append" as const,
 *   data: { turn: 0, step: 0, message: {
 *     id, role: "user" as const, source: { kind: "tool" as const, callId: id },
 *     content: [{ type: "tool-result" as const, toolCallId: id, content: [{ type: "text" as const, text }] }] as const,
 *   } },
 * });
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   const session = yield* Session.appendAll(empty, [result("a", "small"), result("b", "y".repeat(5_000))]);
 *   return yield* pruneLargeToolResults(session, { thresholdChars: 1_000, headChars: 100, tailChars: 100 });
 * });
 * const { pruned, savedChars } = Effect.runSync(program);
 * assert.deepEqual(pruned.map((p) => [p.seq, p.replacement]), [[1, 3]]);
 * assert.ok(savedChars > 4_000);
 * ```
 */
export function pruneLargeToolResults(
  session: Session,
  options: PruneLargeOptions,
): Effect.Effect<PruneLargeResult, AppendError> {
  return Effect.suspend(() => {
    const drafts: EventDraft[] = [];
    const pruned: PrunedToolResult[] = [];
    let savedChars = 0;
    let next: number = session.surface.nextSeq;
    forEachNode(session.surface, (seq, event) => {
      if (event.type !== "tool/result") return;
      const inner = event.data.message.content[0].content;
      const result = prunedContent(inner, options);
      if (result === undefined) return;
      drafts.push(...pruneDrafts(event, result.content));
      pruned.push({
        seq,
        replacement: SessionSeq.make(next + 1),
        savedChars: result.saved,
      });
      savedChars += result.saved;
      next += 2;
    });
    if (drafts.length === 0) {
      return Effect.succeed({ session, pruned, savedChars });
    }
    return Effect.map(
      Session.appendAll(session, drafts),
      (after): PruneLargeResult => ({ session: after, pruned, savedChars }),
    );
  });
}
