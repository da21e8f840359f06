/**
 * Range selection: which surface range a compaction can take, keeping the
 * last nodes (by count or by a character budget) and the system head, and
 * never splitting a tool call from its result. Walks the surface: O(surface
 * length).
 *
 * @module
 */
import type { SessionSeq } from "../core/seq.ts";
import type { Surface } from "../surface/mod.ts";
import { projectEvent } from "../surface/project.ts";
import {
  hasSystemHead,
  isSummary,
  messageChars,
  type Node,
  nodesOf,
  partnersOf,
} from "./surface_nodes.ts";

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
 * whose result is not on the surface yet (the tool may still answer), so
 * it never offers a range `compact` refuses with
 * `ReplaceShadowsUnansweredCall`. A
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
