/**
 * Compaction: replacing a surface range with a summary.
 *
 * A compaction is a batch of ordinary drafts appended with one
 * `Session.appendAll`, so it is all or nothing, replays like any other
 * event, and leaves the shadowed events legible in the log. The rules that
 * protect a transcript (the system head stays, a tool call and its result
 * stay together) are checked before anything is appended, each with its own
 * tagged error. What a rewrite stands for is answered by `provenance.ts`.
 *
 * Decisions the format leaves open:
 *
 * - The `turn` of `compaction/start` is read off the log: the latest
 *   `step/start` gives its turn, else the latest `turn/start`, else 0.
 * - The summary message id is `compaction-<compactionId>`, so a compaction id
 *   should be unique within a session.
 * - Checks walk the surface: O(surface length).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { seqInput, SessionSeq } from "../core/seq.ts";
import {
  ReplaceEndNotOnSurface,
  ReplaceRangeInverted,
  ReplaceStartNotOnSurface,
} from "../core/errors.ts";
import {
  CompactionShadowsSystemHead,
  CompactionSplitsToolPair,
} from "./errors.ts";
import type { Surface } from "../surface/mod.ts";
import type { UserMessage } from "../core/event.ts";
import {
  type AppendError,
  type EventDraft,
  Session,
} from "../session/session.ts";
import {
  currentTurnStep,
  findSplit,
  hasSystemHead,
  type Node,
  nodesOf,
  partnersOf,
} from "./surface_nodes.ts";

/** The range and summary of a {@link compact}. */
export interface CompactOptions {
  /** The first node of the range, in surface order (a plain integer will do). */
  readonly startSeq: number;
  /** The last node of the range, in surface order (a plain integer will do). */
  readonly endSeq: number;
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
 * The message a compaction puts in place of its range: id
 * `compaction-<compactionId>`, one text block, source
 * `{kind: "plugin", plugin: "compaction"}`.
 * @internal
 */
export const summaryMessageOf = (
  compactionId: string,
  summary: string,
): UserMessage => ({
  id: `compaction-${compactionId}`,
  role: "user",
  content: [{ type: "text", text: summary }],
  source: { kind: "plugin", plugin: "compaction" },
});

/**
 * The drafts that finish a compaction whose `compaction/start` is
 * `startEvent`, appended so that the summary event gets `summaryEvent`:
 * `compaction/summary`, the summary message replacing the range and citing
 * both events and every shadowed node, and `compaction/end`.
 * @internal
 */
export const finishCompactionDrafts = (input: {
  readonly compactionId: string;
  readonly summary: string;
  readonly startSeq: SessionSeq;
  readonly endSeq: SessionSeq;
  readonly shadowed: ReadonlyArray<SessionSeq>;
  readonly startEvent: SessionSeq;
  readonly summaryEvent: SessionSeq;
}): EventDraft[] => {
  const { compactionId, summary, startSeq, endSeq, shadowed } = input;
  return [
    {
      type: "compaction/summary",
      data: { compactionId, summary, shadowedSeqs: shadowed },
    },
    {
      type: "user/message",
      surfaceOp: { op: "replace", startSeq, endSeq },
      sourceEventSeqs: [input.startEvent, input.summaryEvent, ...shadowed],
      data: summaryMessageOf(compactionId, summary),
    },
    { type: "compaction/end", data: { compactionId } },
  ];
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
 * `system/message` head, when it holds a tool call without its result on
 * the surface or a result without its call, or (the fold's rule, from the
 * same all-or-nothing append) when it holds a tool call that no
 * `tool/result` answered yet.
 *
 * @param session The session.
 * @param options The range, the summary and the compaction id.
 * @returns `Effect<Session, CompactionError | AppendError>`: failing with
 * `ReplaceStartNotOnSurface`, `ReplaceEndNotOnSurface`,
 * `ReplaceRangeInverted`, `CompactionShadowsSystemHead` or
 * `CompactionSplitsToolPair`, or an append error (such as `InvalidEventData`
 * for an empty compaction id, or `ReplaceShadowsUnansweredCall`).
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
    const start = seqInput(options.startSeq);
    if (Result.isFailure(start)) return Effect.fail(start.failure);
    const end = seqInput(options.endSeq);
    if (Result.isFailure(end)) return Effect.fail(end.failure);
    const startSeq = start.success;
    const endSeq = end.success;
    const { summary, compactionId } = options;
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
    const drafts: EventDraft[] = [
      {
        type: "compaction/start",
        data: { compactionId, turn: currentTurnStep(session).turn },
      },
      ...finishCompactionDrafts({
        compactionId,
        summary,
        startSeq,
        endSeq,
        shadowed,
        startEvent: SessionSeq.make(next),
        summaryEvent: SessionSeq.make(next + 1),
      }),
    ];
    return Session.appendAll(session, drafts);
  });
}
