/**
 * History manipulation: compacting a surface range into a summary, pruning
 * tool results, choosing what to compact, and setting the system prompt.
 *
 * Every operation here is a batch of ordinary drafts appended with one
 * `Session.appendAll`, so it is all or nothing, replays like any other
 * event, and leaves the shadowed events legible in the log. The rules that
 * protect a transcript (the system head stays, a tool call and its result
 * stay together) are checked before anything is appended, each with its own
 * tagged error. What a rewrite stands for is answered by `provenance.ts`.
 *
 * Decisions the format leaves open:
 *
 * - The `turn` of `compaction/start` (and the `turn`/`step` of a
 *   `system/message`) is read off the log: the latest `step/start` gives its
 *   turn and step, else the latest `turn/start` gives its turn and step 0,
 *   else both are 0.
 * - The summary message id is `compaction-<compactionId>`, so a compaction id
 *   should be unique within a session.
 * - Checks and range selection walk the surface: O(surface length).
 *
 * @module
 */
import { Effect } from "effect";
import { SessionSeq } from "./seq.ts";
import type {
  ContentBlock,
  Message,
  TextBlock,
  ToolResultBlock,
  ToolResultContentBlock,
} from "./message.ts";
import type {
  SessionEvent,
  SurfaceEvent,
  SystemMessageData,
  ToolResultEvent,
} from "./event.ts";
import {
  ReplaceEndNotOnSurface,
  ReplaceRangeInverted,
  ReplaceStartNotOnSurface,
  ToolResultReplaceTargetNotToolResult,
} from "./errors.ts";
import {
  CompactionShadowsSystemHead,
  CompactionSplitsToolPair,
  SystemPromptNotAtHead,
} from "./history_errors.ts";
import { forEachNode, type Surface, surfaceEvent } from "./surface.ts";
import { projectEvent } from "./project.ts";
import { type AppendError, type EventDraft, Session } from "./session.ts";

// ---------------------------------------------------------------------------
// Reading the surface

interface Node {
  readonly seq: SessionSeq;
  readonly event: SurfaceEvent;
}

const nodesOf = (surface: Surface): Node[] => {
  const out: Node[] = [];
  forEachNode(surface, (seq, event) => {
    out.push({ seq, event });
  });
  return out;
};

const callIdsOf = (event: SurfaceEvent): string[] => {
  if (event.type !== "assistant/message") return [];
  const ids: string[] = [];
  for (const block of event.data.message.content) {
    if (block.type === "tool-call") ids.push(block.id);
  }
  return ids;
};

const resultIdOf = (event: SurfaceEvent): string | undefined =>
  event.type === "tool/result"
    ? event.data.message.content[0].toolCallId
    : undefined;

/**
 * For each position, the positions of its partners: the results answering
 * an assistant message's calls, or the assistant message a result answers.
 * With `pending`, a call with no result on the surface gets the partner
 * `nodes.length`, past every range: its result may still be appended.
 */
const partnersOf = (
  nodes: ReadonlyArray<Node>,
  pending = false,
): number[][] => {
  const calls = new Map<string, number[]>();
  const results = new Map<string, number[]>();
  const push = (map: Map<string, number[]>, key: string, pos: number) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [pos]);
    else list.push(pos);
  };
  nodes.forEach(({ event }, pos) => {
    for (const id of callIdsOf(event)) push(calls, id, pos);
    const id = resultIdOf(event);
    if (id !== undefined) push(results, id, pos);
  });
  const partners: number[][] = nodes.map(() => []);
  for (const [id, callPositions] of calls) {
    const resultPositions = results.get(id) ?? [];
    if (pending && resultPositions.length === 0) {
      for (const c of callPositions) partners[c]?.push(nodes.length);
    }
    for (const c of callPositions) {
      for (const r of resultPositions) {
        partners[c]?.push(r);
        partners[r]?.push(c);
      }
    }
  }
  return partners;
};

const isSummary = (event: SurfaceEvent): boolean =>
  event.type === "user/message" && event.data.source.kind === "plugin" &&
  event.data.source.plugin === "compaction";

const hasSystemHead = (nodes: ReadonlyArray<Node>): boolean =>
  nodes[0]?.event.type === "system/message";

/** The first call/result pair the range `i..j` splits, if any. */
const findSplit = (
  nodes: ReadonlyArray<Node>,
  partners: ReadonlyArray<ReadonlyArray<number>>,
  i: number,
  j: number,
):
  | { callId: string; callSeq: SessionSeq; resultSeq: SessionSeq }
  | undefined => {
  for (let k = i; k <= j; k++) {
    for (const p of partners[k] ?? []) {
      if (p >= i && p <= j) continue;
      const inside = nodes[k];
      const outside = nodes[p];
      if (inside === undefined || outside === undefined) continue;
      const [call, result] = inside.event.type === "tool/result"
        ? [outside, inside]
        : [inside, outside];
      return {
        callId: resultIdOf(result.event) ?? "",
        callSeq: call.seq,
        resultSeq: result.seq,
      };
    }
  }
  return undefined;
};

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null;

const counter = (u: unknown): number =>
  typeof u === "number" && Number.isSafeInteger(u) && u >= 0 ? u : 0;

/** The turn and step the log is in, read backwards from its last event. */
const currentTurnStep = (
  session: Session,
): { turn: number; step: number } => {
  const base = session.surface.baseSeq;
  for (let seq = session.surface.nextSeq - 1; seq >= base; seq--) {
    const event: SessionEvent | undefined = Session.eventAt(
      session,
      SessionSeq.make(seq),
    );
    if (event === undefined || !isRecord(event.data)) continue;
    if (event.type === "step/start") {
      return { turn: counter(event.data.turn), step: counter(event.data.step) };
    }
    if (event.type === "turn/start") {
      return { turn: counter(event.data.turn), step: 0 };
    }
  }
  return { turn: 0, step: 0 };
};

const blockChars = (block: ContentBlock | ToolResultContentBlock): number => {
  switch (block.type) {
    case "text":
    case "reasoning":
      return block.text.length;
    case "tool-call":
      return block.name.length + block.arguments.length;
    case "tool-result": {
      let n = 0;
      for (const inner of block.content) n += blockChars(inner);
      return n;
    }
    default:
      return 0;
  }
};

const messageChars = (message: Message | undefined): number => {
  if (message === undefined) return 0;
  let n = 0;
  for (const block of message.content) n += blockChars(block);
  return n;
};

// ---------------------------------------------------------------------------
// compact

/** The range and summary of a {@link compact}. */
export interface CompactOptions {
  /** The first node of the range, in surface order. */
  readonly startSeq: SessionSeq;
  /** The last node of the range, in surface order. */
  readonly endSeq: SessionSeq;
  /** The summary text the model sees in place of the range. */
  readonly summary: string;
  /** The compaction id; unique within the session. */
  readonly compactionId: string;
}

/** Why {@link compact} refused a range before appending anything. */
export type CompactionError =
  | ReplaceStartNotOnSurface
  | ReplaceEndNotOnSurface
  | ReplaceRangeInverted
  | CompactionShadowsSystemHead
  | CompactionSplitsToolPair;

const checkRange = (
  surface: Surface,
  nodes: ReadonlyArray<Node>,
  startSeq: SessionSeq,
  endSeq: SessionSeq,
  replacer: SessionSeq,
): CompactionError | { i: number; j: number } => {
  const i = nodes.findIndex((n) => n.seq === startSeq);
  if (i < 0) return new ReplaceStartNotOnSurface({ seq: replacer, startSeq });
  const j = nodes.findIndex((n) => n.seq === endSeq);
  if (j < 0) return new ReplaceEndNotOnSurface({ seq: replacer, endSeq });
  if (i > j) {
    return new ReplaceRangeInverted({ seq: replacer, startSeq, endSeq });
  }
  if (i === 0 && hasSystemHead(nodes) && surface.head !== undefined) {
    return new CompactionShadowsSystemHead({
      startSeq,
      endSeq,
      head: surface.head,
    });
  }
  const split = findSplit(nodes, partnersOf(nodes), i, j);
  if (split !== undefined) {
    return new CompactionSplitsToolPair({ startSeq, endSeq, ...split });
  }
  return { i, j };
};

/**
 * Compacts the surface range `startSeq..endSeq` into a summary. Appends, in
 * one all-or-nothing batch: `compaction/start {compactionId, turn}`,
 * `compaction/summary {compactionId, summary, shadowedSeqs}`, a
 * `user/message` (id `compaction-<compactionId>`, source
 * `{kind: "plugin", plugin: "compaction"}`, one text block) replacing the
 * range and citing the start and summary events plus every shadowed node,
 * then `compaction/end {compactionId}`.
 *
 * Refused before anything is appended when an endpoint is not on the
 * surface or the range is inverted (the fold's own errors, with `seq` the
 * seq the summary message would have had), when the range starts at a
 * `system/message` head, or when it holds a tool call without its result on
 * the surface or a result without its call.
 *
 * @param session The session.
 * @param options The range, the summary and the compaction id.
 * @returns `Effect<Session, CompactionError | AppendError>`: failing with
 * `ReplaceStartNotOnSurface`, `ReplaceEndNotOnSurface`,
 * `ReplaceRangeInverted`, `CompactionShadowsSystemHead` or
 * `CompactionSplitsToolPair`, or an append error (such as `InvalidEventData`
 * for an empty compaction id).
 *
 * @example Compacting the two oldest messages
 * ```ts
 * import { compact, deriveMessages, Session, SessionSeq } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const user = (id: string, text: string) => ({
 *   type: "user/message" as const, surfaceOp: "append" as const,
 *   data: { id, role: "user" as const, content: [{ type: "text" as const, text }], source: { kind: "user" } },
 * });
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   const session = yield* Session.appendAll(empty, [user("u0", "one"), user("u1", "two"), user("u2", "three")]);
 *   const compacted = yield* compact(session, {
 *     startSeq: SessionSeq.make(0), endSeq: SessionSeq.make(1),
 *     summary: "The user counted to two.", compactionId: "c1",
 *   });
 *   return deriveMessages(compacted.surface).map((m) => m.id);
 * });
 * assert.deepEqual(Effect.runSync(program), ["compaction-c1", "u2"]);
 * ```
 */
export function compact(
  session: Session,
  options: CompactOptions,
): Effect.Effect<Session, CompactionError | AppendError> {
  return Effect.suspend((): Effect.Effect<
    Session,
    CompactionError | AppendError
  > => {
    const { startSeq, endSeq, summary, compactionId } = options;
    const surface = session.surface;
    const nodes = nodesOf(surface);
    const next = surface.nextSeq;
    const checked = checkRange(
      surface,
      nodes,
      startSeq,
      endSeq,
      SessionSeq.make(next + 2),
    );
    if (!("i" in checked)) return Effect.fail(checked);
    const shadowed = nodes.slice(checked.i, checked.j + 1).map((n) => n.seq);
    const startEvent = SessionSeq.make(next);
    const summaryEvent = SessionSeq.make(next + 1);
    const drafts: EventDraft[] = [
      {
        type: "compaction/start",
        data: { compactionId, turn: currentTurnStep(session).turn },
      },
      {
        type: "compaction/summary",
        data: { compactionId, summary, shadowedSeqs: shadowed },
      },
      {
        type: "user/message",
        surfaceOp: { op: "replace", startSeq, endSeq },
        sourceEventSeqs: [startEvent, summaryEvent, ...shadowed],
        data: {
          id: `compaction-${compactionId}`,
          role: "user",
          content: [{ type: "text", text: summary }],
          source: { kind: "plugin", plugin: "compaction" },
        },
      },
      { type: "compaction/end", data: { compactionId } },
    ];
    return Session.appendAll(session, drafts);
  });
}

// ---------------------------------------------------------------------------
// Choosing a range

/** A compactable range, as {@link compact} takes it. */
export interface CompactableRange {
  /** The first node of the range. */
  readonly startSeq: SessionSeq;
  /** The last node of the range. */
  readonly endSeq: SessionSeq;
}

/** Options of {@link selectCompactableRange}. */
export interface SelectOptions {
  /** How many of the newest nodes stay verbatim (negative counts as 0). */
  readonly keepLast: number;
}

/** Options of {@link selectCompactableRangeByBudget}. */
export interface SelectByBudgetOptions {
  /**
   * How many characters of the newest nodes stay verbatim: the longest run
   * of newest nodes whose text adds up to at most this many characters.
   */
  readonly keepChars: number;
}

const selectKeeping = (
  nodes: ReadonlyArray<Node>,
  keep: number,
): CompactableRange | undefined => {
  const start = hasSystemHead(nodes) ? 1 : 0;
  let end = nodes.length - 1 - keep;
  if (end < start) return undefined;
  const partners = partnersOf(nodes, true);
  // A node whose partner stands before the range can never be in it.
  for (let k = start; k <= end; k++) {
    if ((partners[k] ?? []).some((p) => p < start)) {
      end = k - 1;
      break;
    }
  }
  // The range start..e holds whole pairs when no node in it has a partner
  // after e: the largest such e is found with a running maximum.
  let best = -1;
  let reach = -1;
  for (let e = start; e <= end; e++) {
    for (const p of partners[e] ?? []) reach = Math.max(reach, p);
    if (reach <= e) best = e;
  }
  const first = nodes[start];
  const last = nodes[best];
  if (best < start || first === undefined || last === undefined) {
    return undefined;
  }
  // A summary alone would only be summarised again: a loop that compacts
  // until under budget must be told there is nothing left to gain.
  if (best === start && isSummary(first.event)) return undefined;
  return { startSeq: first.seq, endSeq: last.seq };
};

/**
 * The oldest range that can be compacted while keeping the newest
 * `keepLast` nodes and the `system/message` head: from the first node after
 * the head to the latest end that splits no tool call from its result. It
 * is more careful than {@link compact}: it also stops before a tool call
 * whose result is not on the surface yet (the tool may still answer). A
 * range that would be one compaction summary alone is not offered, so a
 * loop that compacts until it is under budget ends.
 *
 * @param surface A surface.
 * @param options How many newest nodes to keep.
 * @returns The range, or undefined when nothing can be compacted.
 *
 * @example Keeping the newest node
 * ```ts
 * import { selectCompactableRange, Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const user = (id: string) => ({
 *   type: "user/message" as const, surfaceOp: "append" as const,
 *   data: { id, role: "user" as const, content: [{ type: "text" as const, text: id }], source: { kind: "user" } },
 * });
 * const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 * const session = Effect.runSync(Session.appendAll(empty, [user("a"), user("b"), user("c")]));
 * assert.deepEqual(selectCompactableRange(session.surface, { keepLast: 1 }), { startSeq: 0, endSeq: 1 });
 * assert.equal(selectCompactableRange(session.surface, { keepLast: 3 }), undefined);
 * ```
 */
export function selectCompactableRange(
  surface: Surface,
  options: SelectOptions,
): CompactableRange | undefined {
  const keep = Math.max(0, Math.floor(options.keepLast));
  return selectKeeping(nodesOf(surface), Number.isNaN(keep) ? 0 : keep);
}

/**
 * Like {@link selectCompactableRange}, keeping the longest run of newest
 * nodes whose text adds up to at most `keepChars` characters. A node's text
 * is its text and reasoning blocks, its tool calls' names and arguments and
 * its tool results' text.
 *
 * @param surface A surface.
 * @param options The character budget kept verbatim.
 * @returns The range, or undefined when nothing can be compacted.
 *
 * @example Keeping about ten characters
 * ```ts
 * import { selectCompactableRangeByBudget, Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const user = (id: string, text: string) => ({
 *   type: "user/message" as const, surfaceOp: "append" as const,
 *   data: { id, role: "user" as const, content: [{ type: "text" as const, text }], source: { kind: "user" } },
 * });
 * const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 * const session = Effect.runSync(Session.appendAll(empty, [
 *   user("a", "a long first message"), user("b", "12345"), user("c", "12345"),
 * ]));
 * assert.deepEqual(selectCompactableRangeByBudget(session.surface, { keepChars: 10 }), { startSeq: 0, endSeq: 0 });
 * ```
 */
export function selectCompactableRangeByBudget(
  surface: Surface,
  options: SelectByBudgetOptions,
): CompactableRange | undefined {
  const nodes = nodesOf(surface);
  let total = 0;
  let keep = 0;
  while (keep < nodes.length) {
    const node = nodes[nodes.length - 1 - keep];
    if (node === undefined) break;
    const chars = messageChars(projectEvent(node.event));
    if (!(total + chars <= options.keepChars)) break;
    total += chars;
    keep++;
  }
  return selectKeeping(nodes, keep);
}

// ---------------------------------------------------------------------------
// Pruning tool results

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
  seq: SessionSeq,
  content: ReadonlyArray<ToolResultContentBlock>,
): Effect.Effect<Session, PruneError | AppendError> {
  return Effect.suspend((): Effect.Effect<
    Session,
    PruneError | AppendError
  > => {
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

// ---------------------------------------------------------------------------
// System prompt

const sameContent = (
  a: ReadonlyArray<ContentBlock>,
  b: ReadonlyArray<ContentBlock>,
): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Sets the system prompt. On an empty surface it appends the head
 * `system/message`; when the head is a `system/message` it appends one
 * replacing the head and citing it, or returns the session unchanged when
 * the prompt is the same. A non-empty surface whose head is not a
 * `system/message` is refused (an append would not land at the head).
 *
 * The message has id `system-<seq>` (its own seq), source
 * `{kind: "plugin", plugin: "system-prompt"}`, and one text block, or no
 * content for `""` (no system prompt: the node stays, no message derives).
 *
 * @param session The session.
 * @param text The prompt; `""` for none.
 * @returns `Effect<Session, SystemPromptNotAtHead | AppendError>`.
 *
 * @example Setting and changing the prompt
 * ```ts
 * import { deriveMessages, setSystemPrompt, Session, surfaceNodes } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   const first = yield* setSystemPrompt(empty, "Be brief.");
 *   const second = yield* setSystemPrompt(first, "Be thorough.");
 *   return second.surface;
 * });
 * const surface = Effect.runSync(program);
 * assert.deepEqual(surfaceNodes(surface), [1]);
 * assert.deepEqual(deriveMessages(surface)[0]?.content, [{ type: "text", text: "Be thorough." }]);
 * ```
 */
export function setSystemPrompt(
  session: Session,
  text: string,
): Effect.Effect<Session, SystemPromptNotAtHead | AppendError> {
  return Effect.suspend((): Effect.Effect<
    Session,
    SystemPromptNotAtHead | AppendError
  > => {
    const surface = session.surface;
    const seq = surface.nextSeq;
    const content: ReadonlyArray<ContentBlock> = text === ""
      ? []
      : [{ type: "text", text }];
    const { turn, step } = currentTurnStep(session);
    const data: SystemMessageData = {
      turn,
      step,
      message: {
        id: `system-${seq}`,
        role: "system",
        content,
        source: { kind: "plugin", plugin: "system-prompt" },
      },
    };
    const head = surface.head;
    if (head === undefined) {
      return Session.append(session, {
        type: "system/message",
        surfaceOp: "append",
        data,
      });
    }
    const event = surfaceEvent(surface, head);
    if (event === undefined || event.type !== "system/message") {
      return Effect.fail(
        new SystemPromptNotAtHead({
          head,
          headType: event?.type ?? "unknown",
        }),
      );
    }
    if (sameContent(event.data.message.content, content)) {
      return Effect.succeed(session);
    }
    return Session.append(session, {
      type: "system/message",
      surfaceOp: { op: "replace", startSeq: head, endSeq: head },
      sourceEventSeqs: [head],
      data,
    });
  });
}
