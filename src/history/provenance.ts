/**
 * Provenance: what a surface node stands for, what took a node off the
 * surface, what the surface was at an earlier point, and how two surfaces
 * differ.
 *
 * Everything here reads; nothing changes a session. The answers come from
 * the log itself (`sourceEventSeqs` and replace ranges), so they hold for any
 * log that replays, whoever wrote it. Reading an earlier surface replays the
 * log's prefix into a fresh surface: O(prefix), and the session's own
 * surface is left where it is.
 *
 * @module
 */
import * as Result from "effect/Result";
import { seqInput, SessionSeq } from "../core/seq.ts";
import type { SessionEvent } from "../core/event.ts";
import { isSurfaceEvent } from "../core/event.ts";
import {
  applyEventResult,
  emptySurfaceAt,
  logEvent,
  replayResult,
  type Surface,
  surfaceEvent,
  surfaceNodes,
} from "../surface/mod.ts";
import { type HeldReadError, Session } from "../session/session.ts";
import { EventsNotHeld } from "../core/errors.ts";
import { rewindTarget } from "../surface/rewind.ts";

/** A read of an event the session does not hold, carried to {@link reading}. */
class Missing {
  constructor(readonly error: HeldReadError) {}
}

/** The event at `at`, or a {@link Missing} thrown to {@link reading}. */
const held = (session: Session, at: number): SessionEvent | undefined => {
  const result = Session.eventAt(session, at);
  if (Result.isFailure(result)) throw new Missing(result.failure);
  return result.success;
};

/**
 * Runs a read over a checked seq: what `f` returns, or the refusal of the
 * seq or of the first event `f` read that the session does not hold.
 */
const reading = <A>(
  seqGiven: number,
  f: (seq: SessionSeq) => A,
): Result.Result<A, HeldReadError> => {
  const seq = seqInput(seqGiven);
  if (Result.isFailure(seq)) return Result.fail(seq.failure);
  try {
    return Result.succeed(f(seq.success));
  } catch (thrown) {
    if (thrown instanceof Missing) return Result.fail(thrown.error);
    throw thrown;
  }
};

/** One event of a lineage tree and the events it stands for. */
export interface LineageNode {
  /** The event's seq. */
  readonly seq: SessionSeq;
  /**
   * The event, or undefined for a source before the session's window base
   * (cited, but not in this log).
   */
  readonly event: SessionEvent | undefined;
  /** The lineage of each of its `sourceEventSeqs`, in the order cited. */
  readonly sources: ReadonlyArray<LineageNode>;
}

const sourcesOf = (event: SessionEvent | undefined): SessionSeq[] => {
  if (event === undefined || !isSurfaceEvent(event)) return [];
  return event.type === "assistant/message"
    ? []
    : [...(event.sourceEventSeqs ?? [])];
};

/**
 * The tree of events an event stands for, following `sourceEventSeqs` down
 * through earlier replacements to the original events: a compaction summary
 * lists its `compaction/start` and `compaction/summary` events and every
 * node it shadowed, each of which lists its own sources in turn. An event
 * cited along several paths appears under each (the subtree object is
 * shared); an event never appears twice on one path.
 *
 * @param session The session.
 * @param seq Any seq of the log, usually a surface node.
 * @returns The lineage tree rooted at `seq`, or undefined when `seq` is not
 * in the log; or `InvalidSessionSeq` for a `seq` that is not a seq, or
 * `EventsNotHeld` when the session holds only its surface and the tree
 * reaches older events (run it inside `store.withHistory`).
 *
 * @example What a summary stands for
 * ```ts
 * import { compact, lineage, Session, SessionSeq } from "@palimpsest/session";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const user = (id: string) => ({
 *   type: "user/message" as const, surfaceOp: "append" as const,
 *   data: { id, role: "user" as const, content: [{ type: "text" as const, text: id }], source: { kind: "user" } },
 * });
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   const session = yield* Session.appendAll(empty, [user("a"), user("b")]);
 *   return yield* compact(session, {
 *     startSeq: SessionSeq.make(0), endSeq: SessionSeq.make(1), summary: "a and b", compactionId: "c1",
 *   });
 * });
 * const session = Effect.runSync(program);
 * const tree = Result.getOrThrow(lineage(session, SessionSeq.make(4)));
 * assert.deepEqual(tree?.sources.map((s) => [s.seq, s.event?.type]), [
 *   [2, "compaction/start"], [3, "compaction/summary"], [0, "user/message"], [1, "user/message"],
 * ]);
 * ```
 */
export function lineage(
  session: Session,
  seqGiven: number,
): Result.Result<LineageNode | undefined, HeldReadError> {
  return reading(seqGiven, (seq) => lineageOf(session, seq));
}

const lineageOf = (
  session: Session,
  seq: SessionSeq,
): LineageNode | undefined => {
  const root = held(session, seq);
  if (root === undefined) return undefined;
  const done = new Map<number, LineageNode>();
  const open = new Set<number>();
  // A node being built: its event, its sources and the subtrees built so far.
  interface Frame {
    readonly at: SessionSeq;
    readonly event: SessionEvent | undefined;
    readonly pending: ReadonlyArray<SessionSeq>;
    readonly built: LineageNode[];
  }
  const visit = (at: SessionSeq): LineageNode | Frame => {
    const known = done.get(at);
    if (known !== undefined) return known;
    const event = held(session, at);
    if (open.has(at)) return { seq: at, event, sources: [] };
    open.add(at);
    return { at, event, pending: sourcesOf(event), built: [] };
  };
  // Post-order over an explicit stack: a chain of replacements, each citing
  // the one before, can be longer than the call stack is deep.
  const first = visit(seq);
  if (!("pending" in first)) return first;
  const stack: Frame[] = [first];
  for (;;) {
    const top = stack[stack.length - 1];
    // Unreachable: the root's node is returned when it is popped.
    if (top === undefined) return undefined;
    const source = top.pending[top.built.length];
    if (source !== undefined) {
      const child = visit(source);
      if ("pending" in child) stack.push(child);
      else top.built.push(child);
      continue;
    }
    stack.pop();
    open.delete(top.at);
    const node: LineageNode = {
      seq: top.at,
      event: top.event,
      sources: top.built,
    };
    done.set(top.at, node);
    const parent = stack[stack.length - 1];
    if (parent === undefined) return node;
    parent.built.push(node);
  }
};

/**
 * Folds the log's prefix up to `last` into a fresh surface, from `from`.
 * The session's events replayed once already, so the fold cannot fail; a
 * failure would return the surface before the bad event.
 */
const foldUpTo = (
  session: Session,
  from: Surface,
  last: number,
): Surface => {
  const events: SessionEvent[] = [];
  for (let seq = from.nextSeq; seq <= last; seq++) {
    const event = held(session, seq);
    if (event !== undefined) events.push(event);
  }
  const result = replayResult(events, from, { stored: true });
  return Result.isSuccess(result) ? result.success : result.failure.surface;
};

/**
 * The event that took a node off the surface: the replacement whose range
 * held it. Replays the log up to that event.
 *
 * @param session The session.
 * @param seq A seq of the log.
 * @returns The replacing event's seq, or undefined when `seq` is still on
 * the surface, was never a surface node, or is not in the log; or
 * `InvalidSessionSeq` or `EventsNotHeld` as for {@link lineage}.
 *
 * @example A pruned tool result
 * ```ts
 * import { pruneToolResult, Session, SessionSeq, shadowedBy } from "@palimpsest/session";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   const session = yield* Session.append(empty, {
 *     type: "tool/result", surfaceOp: "append",
 *     data: { turn: 0, step: 0, message: {
 *       id: "r0", role: "user", source: { kind: "tool", callId: "c0" },
 *       content: [{ type: "tool-result", toolCallId: "c0", content: [{ type: "text", text: "long" }] }],
 *     } },
 *   });
 *   return yield* pruneToolResult(session, SessionSeq.make(0), []);
 * });
 * const session = Effect.runSync(program);
 * assert.deepEqual(shadowedBy(session, SessionSeq.make(0)), Result.succeed(2));
 * assert.deepEqual(shadowedBy(session, SessionSeq.make(2)), Result.succeed(undefined));
 * ```
 */
export function shadowedBy(
  session: Session,
  seqGiven: number,
): Result.Result<SessionSeq | undefined, HeldReadError> {
  return reading(seqGiven, (seq) => shadowerOf(session, seq));
}

const shadowerOf = (
  session: Session,
  seq: SessionSeq,
): SessionSeq | undefined => {
  const target = held(session, seq);
  if (target === undefined || !isSurfaceEvent(target)) return undefined;
  if (surfaceEvent(session.surface, seq) !== undefined) return undefined;
  let surface = emptySurfaceAt(session.surface.baseSeq);
  for (let at = seq + 1; at < session.surface.nextSeq; at++) {
    const event = held(session, at);
    if (
      event === undefined || !isSurfaceEvent(event) ||
      typeof event.surfaceOp !== "object" ||
      !sourcesOf(event).includes(seq)
    ) continue;
    // A candidate: it cites the node. It shadows it when the node is on the
    // surface just before it and gone just after.
    surface = foldUpTo(session, surface, at - 1);
    if (surfaceEvent(surface, seq) === undefined) return undefined;
    const after = applyEventResult(surface, event, { stored: true });
    if (
      Result.isSuccess(after) && surfaceEvent(after.success, seq) === undefined
    ) {
      return event.seq;
    }
  }
  return undefined;
};

/**
 * The kind of a replacement: `prune`, `system-prompt` or `compaction`.
 * The command line's `stats` and the viewer group replacements by it.
 */
export type ReplacementKind =
  | "compaction"
  | "prune"
  | "system-prompt"
  | "rewind";

/**
 * What kind of replacement an event that takes surface nodes off is: one
 * carrying a rewind is a rewind; otherwise, told by its type, a
 * `tool/result` is a prune, a `system/message` a system-prompt change,
 * anything else (a summary message) a compaction.
 *
 * @param event The replacing event.
 * @returns Its kind.
 *
 * @example The kind of a prune
 * ```ts
 * import { replacementKind } from "@palimpsest/session/internal";
 * import { decodeEvent } from "@palimpsest/session/schema";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const prune = Effect.runSync(decodeEvent({
 *   type: "tool/result", seq: 3, time: 0, sourceEventSeqs: [1],
 *   surfaceOp: { op: "replace", startSeq: 1, endSeq: 1 },
 *   data: { turn: 0, step: 0, message: {
 *     id: "r", role: "user", source: { kind: "tool", callId: "c" },
 *     content: [{ type: "tool-result", toolCallId: "c", content: [] }],
 *   } },
 * }));
 * assert.equal(replacementKind(prune), "prune");
 * ```
 */
export function replacementKind(event: SessionEvent): ReplacementKind {
  return rewindTarget(event) !== undefined
    ? "rewind"
    : event.type === "tool/result"
    ? "prune"
    : event.type === "system/message"
    ? "system-prompt"
    : "compaction";
}

/**
 * The surface as it was right after the event `seq`: the log's prefix up to
 * and including it, replayed into a fresh surface. O(prefix).
 *
 * @param session The session.
 * @param seq A seq of the log.
 * @returns The surface after `seq`, or undefined when `seq` is not in the
 * log; or `InvalidSessionSeq` or `EventsNotHeld` as for {@link lineage}.
 *
 * @example Before and after a compaction
 * ```ts
 * import { compact, Session, SessionSeq, surfaceAt } from "@palimpsest/session";
 * import { surfaceNodes } from "@palimpsest/session/internal";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const user = (id: string) => ({
 *   type: "user/message" as const, surfaceOp: "append" as const,
 *   data: { id, role: "user" as const, content: [{ type: "text" as const, text: id }], source: { kind: "user" } },
 * });
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   const session = yield* Session.appendAll(empty, [user("a"), user("b"), user("c")]);
 *   return yield* compact(session, {
 *     startSeq: SessionSeq.make(0), endSeq: SessionSeq.make(1), summary: "a, b", compactionId: "c1",
 *   });
 * });
 * const session = Effect.runSync(program);
 * const before = Result.getOrThrow(surfaceAt(session, SessionSeq.make(2)));
 * assert.deepEqual(before && surfaceNodes(before), [0, 1, 2]);
 * assert.deepEqual(surfaceNodes(session.surface), [5, 2]);
 * ```
 */
export function surfaceAt(
  session: Session,
  seqGiven: number,
): Result.Result<Surface | undefined, HeldReadError> {
  return reading(
    seqGiven,
    (seq) =>
      held(session, seq) === undefined
        ? undefined
        : foldUpTo(session, emptySurfaceAt(session.surface.baseSeq), seq),
  );
}

/** One replacement between two surfaces. */
export interface SurfaceReplacement {
  /** The node of the newer surface that stands for the shadowed nodes. */
  readonly by: SessionSeq;
  /** The nodes of the older surface it shadows, in their surface order. */
  readonly shadowed: ReadonlyArray<SessionSeq>;
}

/** How two surfaces differ; see {@link diffSurfaces}. */
export interface SurfaceDiff {
  /** Nodes of `b` that stand for no node of `a`, in `b`'s order. */
  readonly added: ReadonlyArray<SessionSeq>;
  /** Nodes of `a` that no node of `b` stands for, in `a`'s order. */
  readonly removed: ReadonlyArray<SessionSeq>;
  /** Nodes of `b` that replace nodes of `a`, in `b`'s order. */
  readonly replaced: ReadonlyArray<SurfaceReplacement>;
}

/**
 * How surface `b` differs from an earlier surface `a` of the same log. A
 * node of `b` that is not in `a` is a replacement when its sources lead
 * (directly, or through replacements folded after `a`) to nodes of `a` that
 * `b` no longer has; otherwise it is added. Nodes of `a` missing from `b`
 * that no replacement accounts for are removed. Each node appears in one
 * list only.
 *
 * @param a The older surface.
 * @param b The newer surface.
 * @returns The nodes added, removed and replaced; or `EventsNotHeld` when
 * `b` holds only its surface (a session opened from a checkpoint) and a
 * replacement folded after `a` that it needs is not held (inside
 * `store.withHistory`, `surfaceAt(session, lastSeq)` is the same surface
 * folded whole).
 *
 * @example A compaction seen as a diff
 * ```ts
 * import { compact, diffSurfaces, Session, SessionSeq } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const user = (id: string) => ({
 *   type: "user/message" as const, surfaceOp: "append" as const,
 *   data: { id, role: "user" as const, content: [{ type: "text" as const, text: id }], source: { kind: "user" } },
 * });
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   const before = yield* Session.appendAll(empty, [user("a"), user("b")]);
 *   const compacted = yield* compact(before, {
 *     startSeq: SessionSeq.make(0), endSeq: SessionSeq.make(0), summary: "a", compactionId: "c1",
 *   });
 *   const after = yield* Session.append(compacted, user("c"));
 *   return yield* Effect.fromResult(diffSurfaces(before.surface, after.surface));
 * });
 * assert.deepEqual(Effect.runSync(program), {
 *   added: [6], removed: [], replaced: [{ by: 4, shadowed: [0] }],
 * });
 * ```
 */
export function diffSurfaces(
  a: Surface,
  b: Surface,
): Result.Result<SurfaceDiff, EventsNotHeld> {
  const aNodes = surfaceNodes(a);
  const bNodes = surfaceNodes(b);
  const inA = new Set<number>(aNodes);
  const inB = new Set<number>(bNodes);
  const gone = new Set<number>(aNodes.filter((seq) => !inB.has(seq)));
  const accounted = new Set<number>();
  const added: SessionSeq[] = [];
  const replaced: SurfaceReplacement[] = [];
  for (const seq of bNodes) {
    if (inA.has(seq)) continue;
    // Walk the sources down to nodes of `a`, through events newer than `a`.
    const hits = new Set<number>();
    const seen = new Set<number>();
    const stack: number[] = [seq];
    while (stack.length > 0) {
      const at = stack.pop();
      if (at === undefined || seen.has(at)) continue;
      seen.add(at);
      const event = logEvent(b, SessionSeq.make(at));
      if (event === undefined && at >= b.baseSeq && at < b.heldFrom) {
        // A surface that holds only its nodes (restored from a checkpoint)
        // cannot say what this event stood for.
        return Result.fail(
          new EventsNotHeld({
            fromSeq: SessionSeq.make(at),
            heldFrom: b.heldFrom,
          }),
        );
      }
      for (const source of sourcesOf(event)) {
        if (gone.has(source)) hits.add(source);
        else if (source >= a.nextSeq) stack.push(source);
      }
    }
    if (hits.size === 0) {
      added.push(seq);
      continue;
    }
    for (const hit of hits) accounted.add(hit);
    replaced.push({
      by: seq,
      shadowed: aNodes.filter((node) => hits.has(node)),
    });
  }
  const removed = aNodes.filter((seq) => gone.has(seq) && !accounted.has(seq));
  return Result.succeed({ added, removed, replaced });
}
