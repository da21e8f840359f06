/**
 * The one pass over a log that the page is drawn from: what each
 * replacement took off the surface (in surface order), the characters on
 * the surface after every event, the crash repairs and interrupted turns,
 * what the log leaves open (a turn or a compaction a crash left, from
 * {@link openWork}), and the counts the header shows.
 *
 * The pass folds the log with the library's own fold ({@link applyEventResult})
 * and asks it, for each replacement, which of the cited nodes were on the
 * surface before and are gone after. That is the answer
 * {@link shadowedBy} gives for one node, for every node at once: calling the
 * provenance functions per node would replay a prefix each time (quadratic).
 *
 * Surface order of the shadowed nodes comes from a rank given to each node
 * as it joins the surface: an appended node ranks after everything, a
 * replacement takes the rank of its range's first node. Two nodes on the
 * surface at the same time never swap places, so sorting a replacement's
 * shadowed nodes by rank gives the order the model saw them in.
 *
 * @module
 */
import * as Result from "effect/Result";
import {
  applyEventResult,
  emptySurfaceAt,
  type Surface,
  surfaceEvent,
  surfaceNodes,
} from "../surface/mod.ts";
import {
  type CoreEvent,
  eventTypeName,
  isSurfaceEvent,
  type SessionEvent,
  type SurfaceEvent,
} from "../core/event.ts";
import type { Message } from "../core/message.ts";
import { messageChars } from "../history/surface_nodes.ts";
import {
  type ReplacementKind,
  replacementKind,
} from "../history/provenance.ts";
import {
  type OpenWork,
  openWork,
  TOOL_NOT_STARTED,
  TOOL_OUTCOME_UNKNOWN,
} from "../session/repair.ts";
import { projectEvent } from "../surface/project.ts";
import { type PartialAnswer, partialAnswers } from "../session/partial.ts";
import type { SessionSeq } from "../core/seq.ts";
import { estimateTokensByChars } from "../core/tokens.ts";

export type { ReplacementKind } from "../history/provenance.ts";

/** One replacement found by the pass. */
export interface Replacement {
  /** The replacing event's seq. */
  readonly seq: number;
  /** Its kind. */
  readonly kind: ReplacementKind;
  /** The nodes it took off the surface, in surface order. */
  readonly shadowed: ReadonlyArray<number>;
  /** Characters of those nodes. */
  readonly charsBefore: number;
  /** Characters of the replacement itself. */
  readonly charsAfter: number;
}

/** An interrupted turn: its `turn/end` and the node it is shown beside. */
export interface Interruption {
  /** The turn number. */
  readonly turn: number;
  /** The seq of the `turn/end { reason: interrupted }` event. */
  readonly seq: number;
  /** The last surface event logged before it, or undefined. */
  readonly after: number | undefined;
  /**
   * What the turn's answer had streamed when it was cut (its
   * `assistant/partial` batches, which no settled answer follows): kept
   * for people, not sent to the model.
   */
  readonly partial?: PartialAnswer;
}

/** One bucket of the size series: a run of consecutive seqs. */
export interface SizeBucket {
  /** The first seq of the bucket. */
  readonly firstSeq: number;
  /** The last seq of the bucket. */
  readonly lastSeq: number;
  /** The least characters on the surface after an event of the bucket. */
  readonly min: number;
  /** The most. */
  readonly max: number;
  /** After the bucket's last event. */
  readonly last: number;
}

/** What the page is drawn from. */
export interface Analysis {
  /** The first seq of the log. */
  readonly baseSeq: number;
  /** Events in the log. */
  readonly events: number;
  /** Events by type, in order of first appearance. */
  readonly byType: ReadonlyMap<string, number>;
  /** Every replacement by its seq. */
  readonly replacements: ReadonlyMap<number, Replacement>;
  /** The characters of a surface event's message (0 for log-only events). */
  readonly charsOf: (seq: number) => number;
  /** Tool results that close a call a crash left open, by seq. */
  readonly repairs: ReadonlySet<number>;
  /** Interrupted turns, in log order. */
  readonly interruptions: ReadonlyArray<Interruption>;
  /** The turns and compactions the log leaves open. */
  readonly open: OpenWork;
  /** The size series, at most `buckets` long. */
  readonly series: ReadonlyArray<SizeBucket>;
  /** Characters on the surface after the last event. */
  readonly finalChars: number;
  /** The most characters the surface ever held. */
  readonly peakChars: number;
  /**
   * Estimated tokens on the surface after the last event: the sum of each
   * message's `estimateTokensByChars` (the model-integration estimate).
   */
  readonly finalTokens: number;
  /** The most estimated tokens the surface ever held. */
  readonly peakTokens: number;
  /** The time of the first and the last event. */
  readonly timeSpan: readonly [number, number] | undefined;
}

/**
 * The message a surface event projects to (empty content included).
 *
 * @param event A surface event.
 * @returns Its message.
 */
export function messageOf(event: SurfaceEvent): Message {
  return event.type === "user/message" ? event.data : event.data.message;
}

// Core type names belong to core events only (the vocabulary refuses them
// for extensions), so the name narrows.
const isTurnEnd = (
  event: SessionEvent,
): event is Extract<CoreEvent, { type: "turn/end" }> =>
  event.type === "turn/end";

const isRepairCloser = (event: SurfaceEvent): boolean =>
  event.type === "tool/result" &&
  (event.data.error?.code === TOOL_OUTCOME_UNKNOWN ||
    event.data.error?.code === TOOL_NOT_STARTED);

/**
 * Runs the pass.
 *
 * @param events The log, in seq order, as it replayed.
 * @param baseSeq The seq of its first event.
 * @param buckets The most buckets the size series may have.
 * @returns The analysis.
 */
export function analyse(
  events: ReadonlyArray<SessionEvent>,
  baseSeq: SessionSeq,
  buckets: number,
): Analysis {
  const count = events.length;
  const byType = new Map<string, number>();
  const replacements = new Map<number, Replacement>();
  // Indexed by seq - baseSeq: a log of a million events stays two arrays.
  const chars = new Float64Array(count);
  const rank = new Float64Array(count);
  const tokens = new Float64Array(count);
  let totalTokens = 0;
  let peakTokens = 0;
  const repairs = new Set<number>();
  const interruptions: Interruption[] = [];
  // A cut answer's batches, by turn: the last one a turn left.
  const partials = new Map<number, PartialAnswer>();
  for (const answer of partialAnswers(events)) {
    partials.set(answer.turn, answer);
  }
  const series: SizeBucket[] = [];
  const width = Math.max(1, Math.min(buckets, count));
  let surface: Surface = emptySurfaceAt(baseSeq);
  let total = 0;
  let peak = 0;
  let nextRank = 0;
  let firstRank = -1;
  let lastSurface: number | undefined;
  let bucket: {
    firstSeq: number;
    lastSeq: number;
    min: number;
    max: number;
    last: number;
  } | undefined;
  let bucketIndex = -1;
  const at = (seq: number): number => seq - baseSeq;
  for (let i = 0; i < count; i++) {
    const event = events[i];
    if (event === undefined) continue;
    const name = eventTypeName(event);
    byType.set(name, (byType.get(name) ?? 0) + 1);
    let shadowing: ReadonlyArray<SessionSeq> = [];
    if (isSurfaceEvent(event)) {
      // A node that derives no message (empty content) costs nothing.
      const message = projectEvent(event);
      const weight = messageChars(message);
      chars[at(event.seq)] = weight;
      const cost = message === undefined ? 0 : estimateTokensByChars([message]);
      tokens[at(event.seq)] = cost;
      if (isRepairCloser(event)) repairs.add(event.seq);
      const op = event.surfaceOp;
      if (op === "append" || op === "prepend" || op.op === "rewind") {
        // A rewind's event goes at the tail of the surface it restores.
        // A prepended system prompt stands before every node.
        rank[at(event.seq)] = op === "prepend" ? firstRank-- : nextRank++;
        total += weight;
        totalTokens += cost;
        if (op !== "append" && op !== "prepend") {
          shadowing = (event.sourceEventSeqs ?? []).filter((seq) =>
            surfaceEvent(surface, seq) !== undefined
          );
        }
      } else {
        // A replacement takes its range's place, so its first node's rank.
        rank[at(event.seq)] = rank[at(op.startSeq)] ?? nextRank++;
        const cited = event.type === "assistant/message"
          ? []
          : (event.sourceEventSeqs ?? []);
        shadowing = cited.filter((seq) =>
          surfaceEvent(surface, seq) !== undefined
        );
      }
      lastSurface = event.seq;
    } else if (
      isTurnEnd(event) && event.data.reason.kind === "interrupted"
    ) {
      const partial = partials.get(event.data.turn);
      interruptions.push({
        turn: event.data.turn,
        seq: event.seq,
        after: lastSurface,
        ...(partial !== undefined && partial.seqs[0] !== undefined &&
            partial.seqs[0] < event.seq
          ? { partial }
          : {}),
      });
    }
    const next = applyEventResult(surface, event, { stored: true });
    // The session replayed already; stop where a fold would fail.
    if (Result.isFailure(next)) break;
    surface = next.success;
    if (isSurfaceEvent(event) && typeof event.surfaceOp === "object") {
      const gone = shadowing.filter((seq) =>
        surfaceEvent(surface, seq) === undefined
      );
      gone.sort((a, b) => (rank[at(a)] ?? 0) - (rank[at(b)] ?? 0));
      let charsBefore = 0;
      for (const seq of gone) {
        charsBefore += chars[at(seq)] ?? 0;
        totalTokens -= tokens[at(seq)] ?? 0;
      }
      totalTokens += tokens[at(event.seq)] ?? 0;
      const weight = chars[at(event.seq)] ?? 0;
      if (
        typeof event.surfaceOp === "object" && event.surfaceOp.op === "rewind"
      ) {
        // Nodes came back too: the surface's size is counted afresh (a
        // rewind is rare, and walks the surface it restores once).
        total = 0;
        totalTokens = 0;
        for (const node of surfaceNodes(surface)) {
          total += chars[at(node)] ?? 0;
          totalTokens += tokens[at(node)] ?? 0;
        }
      }
      replacements.set(event.seq, {
        seq: event.seq,
        kind: replacementKind(event),
        shadowed: gone,
        charsBefore,
        charsAfter: weight,
      });
      if (
        typeof event.surfaceOp !== "object" || event.surfaceOp.op !== "rewind"
      ) {
        total += weight - charsBefore;
      }
    }
    if (total > peak) peak = total;
    if (totalTokens > peakTokens) peakTokens = totalTokens;
    const index = Math.floor((at(event.seq) * width) / count);
    if (bucket === undefined || index !== bucketIndex) {
      if (bucket !== undefined) series.push(bucket);
      bucketIndex = index;
      bucket = {
        firstSeq: event.seq,
        lastSeq: event.seq,
        min: total,
        max: total,
        last: total,
      };
    } else {
      bucket.lastSeq = event.seq;
      if (total < bucket.min) bucket.min = total;
      if (total > bucket.max) bucket.max = total;
      bucket.last = total;
    }
  }
  if (bucket !== undefined) series.push(bucket);
  const first = events[0];
  const last = events[count - 1];
  return {
    baseSeq,
    events: count,
    byType,
    replacements,
    charsOf: (seq) => chars[at(seq)] ?? 0,
    repairs,
    interruptions,
    open: openWork(events),
    series,
    finalChars: total,
    peakChars: peak,
    finalTokens: totalTokens,
    peakTokens,
    timeSpan: first === undefined || last === undefined
      ? undefined
      : [first.time, last.time],
  };
}
