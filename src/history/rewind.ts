/**
 * Rewinding and branches: {@link rewind} takes the surface back to what it
 * was right after an earlier event and goes on from there with a new event
 * (the new or edited user message), keeping the events after the point in
 * the log as a branch; {@link branches} lists the branches of a log.
 *
 * The fold owns the rewind's rules (`surface/rewind.ts`); this module plans
 * the event that carries it (the nodes it must cite), checks what the
 * caller expects it to drop, and appends it.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { seqInput, SessionSeq } from "../core/seq.ts";
import type { SessionEvent } from "../core/event.ts";
import type {
  EventsNotHeld,
  InvalidSessionSeq,
  RewindBreaksToolPair,
  RewindDropsSystemHead,
  RewindNotHeld,
  RewindPointInsideWork,
} from "../core/errors.ts";
import { RewindDropsUnexpectedTurns } from "./errors.ts";
import {
  type AppendError,
  type EventDraft,
  eventsFrom,
  Session,
} from "../session/session.ts";
import { replayResult, type Surface } from "../surface/mod.ts";
import { heldOf, logEvent } from "../surface/surface.ts";
import {
  onCurrentPath,
  planRewind,
  rewindsOf,
  rewindTarget,
} from "../surface/rewind.ts";

/** A `user/message` draft: the event that carries a rewind. */
export type RewindEventDraft = Extract<EventDraft, { type: "user/message" }>;

/** What the caller declares a rewind drops, checked before it is appended. */
export interface RewindExpectation {
  /**
   * The rewind drops the turns from this number on, and no earlier one:
   * every turn the current path started after the point is numbered at
   * least this, and every turn kept is numbered below it.
   */
  readonly dropsTurnsFrom: number;
}

/** Options of {@link rewind}. */
export interface RewindOptions {
  /** The event right after which the surface is taken back (a plain integer will do). */
  readonly to: number;
  /**
   * The event the session goes on from: a `user/message` draft (its
   * `surfaceOp` and `sourceEventSeqs` are set by the rewind).
   */
  readonly event: RewindEventDraft;
  /** What the rewind must drop, and nothing else. */
  readonly expect?: RewindExpectation;
}

/** Why {@link rewind} refused before appending anything. */
export type RewindError =
  | RewindNotHeld
  | RewindPointInsideWork
  | RewindDropsSystemHead
  | RewindBreaksToolPair
  | RewindDropsUnexpectedTurns;

/** The parent of `seq` in the log's tree: a rewind's point, else the event before. */
const parentOf = (surface: Surface, seq: number): number =>
  rewindTarget(logEvent(surface, SessionSeq.make(seq))) ?? seq - 1;

/** The turn of a `turn/start` or `turn/end` event, else undefined. */
const turnOf = (event: SessionEvent | undefined): number | undefined =>
  event?.type === "turn/start" || event?.type === "turn/end"
    ? event.data.turn
    : undefined;

/**
 * The seqs on the path from the base to `seq`, as ascending runs
 * `[first, last]` of consecutive seqs.
 */
const pathRuns = (
  surface: Surface,
  seq: number,
): Array<readonly [number, number]> => {
  const rewinds = rewindsOf(surface);
  const runs: Array<readonly [number, number]> = [];
  let at = seq;
  let k = rewinds.length - 1;
  while (at >= surface.baseSeq) {
    while (k >= 0 && (rewinds[k] ?? 0) > at) k--;
    const carrier = k < 0 ? undefined : rewinds[k];
    if (carrier === undefined) {
      runs.push([surface.baseSeq, at]);
      break;
    }
    runs.push([carrier, at]);
    at = parentOf(surface, carrier);
    k--;
  }
  return runs.reverse();
};

/** The turns a rewind to `to` keeps through and drops from. */
const turnsAround = (
  surface: Surface,
  to: number,
): { keptThrough: number | undefined; droppedFrom: number | undefined } => {
  let keptThrough: number | undefined;
  for (let at = to; at >= surface.baseSeq; at = parentOf(surface, at)) {
    keptThrough = turnOf(logEvent(surface, SessionSeq.make(at)));
    if (keptThrough !== undefined) break;
  }
  // The last event both paths share, then the first turn the current path
  // started after it.
  const tip = surface.nextSeq - 1;
  let fork = to;
  if (!onCurrentPath(surface, SessionSeq.make(to))) {
    const mine = pathRuns(surface, to);
    fork = surface.baseSeq - 1;
    for (const [lo, hi] of pathRuns(surface, tip)) {
      for (const [a, b] of mine) {
        const top = Math.min(hi, b);
        if (top >= Math.max(lo, a)) fork = Math.max(fork, top);
      }
    }
  }
  for (const [lo, hi] of pathRuns(surface, tip)) {
    for (let at = Math.max(lo, fork + 1); at <= hi; at++) {
      const event = logEvent(surface, SessionSeq.make(at));
      if (event?.type === "turn/start") {
        return { keptThrough, droppedFrom: event.data.turn };
      }
    }
  }
  return { keptThrough, droppedFrom: undefined };
};

/** The session with a surface that holds its whole log, folded if need be. */
const wholeOf = (
  session: Session,
): Result.Result<Session, EventsNotHeld> => {
  const surface = session.surface;
  // A surface a store read with a bound on what it holds (`held`) holds
  // what a rewind reads only for the events after its bound, even when it
  // holds every event: it is folded afresh too.
  if (
    surface.heldFrom === surface.baseSeq && surface.keepsLog &&
    heldOf(surface) === undefined
  ) {
    return Result.succeed(session);
  }
  const events = eventsFrom(session, surface.baseSeq);
  if (Result.isFailure(events)) return Result.fail(events.failure);
  // The stored log, read back: folded as a reader would.
  const folded = replayResult(
    events.success,
    undefined,
    { stored: true },
  );
  if (Result.isFailure(folded)) {
    // The events folded once already: a broken invariant.
    throw folded.failure.error;
  }
  return Result.succeed({ ...session, surface: folded.success });
};

/**
 * Rewinds a session: the surface goes back to what it was right after the
 * event `to`, and `event` (the new or edited user message) is appended at
 * its tail, citing every node the rewind takes off. The events after `to`
 * stay in the log, as a branch ({@link branches}); rewinding to a branch's
 * tip goes back to it. Checked before anything is appended, in order:
 * `RewindPointInsideWork` (a turn, a step or a compaction open at `to`),
 * `RewindDropsSystemHead`, `RewindBreaksToolPair`, then the caller's
 * `expect` (`RewindDropsUnexpectedTurns`).
 *
 * A session that holds only its surface and latest events (opened from a
 * checkpoint, or a long log) fails with `EventsNotHeld`, which
 * `store.update(handle, (s) => rewind(s, options))` answers by reading the
 * log through the store and running it again (as `store.withHistory`
 * does); the rewind then folds the log once. On a session that holds its
 * log, the cost is the surfaces it reads and the nodes it takes off, never
 * the log (docs/rewriting-history.md).
 *
 * @param session The session.
 * @param options The point, the event and what it must drop.
 * @returns `Effect<Session, RewindError | AppendError | EventsNotHeld | InvalidSessionSeq>`.
 *
 * @example Editing the first message and going on from there
 * ```ts
 * import { branches, deriveMessages, Draft, rewind, Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   let session = Session.make({ id: "demo", createdAt: 0, isSeeded: false });
 *   session = yield* Session.appendAll(session, [
 *     Draft.user("My name is Ada.", { id: "u0" }), // seq 0
 *     Draft.user("I live in Lisbon.", { id: "u1" }), // seq 1
 *   ]);
 *   // Back to right after seq 0, with an edited second message.
 *   session = yield* rewind(session, {
 *     to: 0,
 *     event: Draft.user("I live in Porto.", { id: "u1b" }),
 *   });
 *   return session;
 * });
 * const session = Effect.runSync(program);
 * assert.deepEqual(deriveMessages(session.surface).map((m) => m.id), ["u0", "u1b"]);
 * assert.equal(Effect.runSync(branches(session)).length, 2);
 * ```
 */
export function rewind(
  session: Session,
  options: RewindOptions,
): Effect.Effect<
  Session,
  RewindError | AppendError | EventsNotHeld | InvalidSessionSeq
> {
  return Effect.suspend((): Effect.Effect<
    Session,
    RewindError | AppendError | EventsNotHeld | InvalidSessionSeq
  > => {
    const to = seqInput(options.to);
    if (Result.isFailure(to)) return Effect.fail(to.failure);
    const whole = wholeOf(session);
    if (Result.isFailure(whole)) return Effect.fail(whole.failure);
    const base = whole.success;
    const surface = base.surface;
    const plan = planRewind(surface, to.success);
    if (!("restored" in plan)) return Effect.fail(plan);
    const expect = options.expect;
    if (expect !== undefined) {
      const { keptThrough, droppedFrom } = turnsAround(surface, to.success);
      if (
        (keptThrough !== undefined && keptThrough >= expect.dropsTurnsFrom) ||
        (droppedFrom !== undefined && droppedFrom < expect.dropsTurnsFrom)
      ) {
        return Effect.fail(
          new RewindDropsUnexpectedTurns({
            toSeq: to.success,
            expectedFrom: expect.dropsTurnsFrom,
            keptThrough,
            droppedFrom,
          }),
        );
      }
    }
    const { sourceEventSeqs: _sources, ...draft } = options.event;
    return Session.append(base, {
      ...draft,
      surfaceOp: { op: "rewind", toSeq: to.success },
      ...(plan.takenOff.length === 0 ? {} : { sourceEventSeqs: plan.takenOff }),
    });
  });
}

/** One branch of a log: a run of events after a rewind (or from the base). */
export interface Branch {
  /** Its first event: the base, or the event that carries its rewind. */
  readonly fromSeq: SessionSeq;
  /** The point it leaves the log's tree at; undefined for the first branch. */
  readonly leavesAt: SessionSeq | undefined;
  /** Its last event. */
  readonly tipSeq: SessionSeq;
  /** The turns it started, in order. */
  readonly turns: ReadonlyArray<number>;
  /** The text of its first user message, if any. */
  readonly firstUserText: string | undefined;
  /** Whether it holds the session's latest event. */
  readonly current: boolean;
}

/**
 * The branches of a session's log, in log order: the run of events from
 * the base, then one run per rewind (from the event that carries it to the
 * event before the next one, or the latest). Going back to a branch is a
 * {@link rewind} to its `tipSeq`. O(log): it reads every event once.
 *
 * @param session The session.
 * @returns `Effect<ReadonlyArray<Branch>, EventsNotHeld>`.
 *
 * @example A log without rewinds is one branch
 * ```ts
 * import { branches, Draft, Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const session = Effect.runSync(Session.append(
 *   Session.make({ id: "demo", createdAt: 0, isSeeded: false }),
 *   Draft.user("hi"),
 * ));
 * const [only] = Effect.runSync(branches(session));
 * assert.equal(only?.current, true);
 * assert.equal(only?.firstUserText, "hi");
 * ```
 */
export function branches(
  session: Session,
): Effect.Effect<ReadonlyArray<Branch>, EventsNotHeld> {
  return Effect.suspend(() => {
    const events = eventsFrom(session, session.surface.baseSeq);
    return Result.isFailure(events)
      ? Effect.fail(events.failure)
      : Effect.succeed(branchesOf(events.success));
  });
}

/**
 * The branches of a log, from its events in seq order: {@link branches}
 * on events already read (the view, the command line).
 *
 * @param events The log from its base.
 * @returns The branches, in log order.
 * @internal
 */
export function branchesOf(
  events: ReadonlyArray<SessionEvent>,
): ReadonlyArray<Branch> {
  const out: Branch[] = [];
  let from: SessionSeq | undefined;
  let leavesAt: SessionSeq | undefined;
  let turns: number[] = [];
  let text: string | undefined;
  let last: SessionSeq | undefined;
  const close = (current: boolean) => {
    if (from === undefined || last === undefined) return;
    out.push({
      fromSeq: from,
      leavesAt,
      tipSeq: last,
      turns,
      firstUserText: text,
      current,
    });
  };
  for (const event of events) {
    const target = rewindTarget(event);
    if (from === undefined || target !== undefined) {
      close(false);
      from = event.seq;
      leavesAt = target;
      turns = [];
      text = undefined;
    }
    if (event.type === "turn/start") turns.push(event.data.turn);
    if (event.type === "user/message" && text === undefined) {
      const first = event.data.content.find((b) => b.type === "text");
      if (first !== undefined && first.type === "text") text = first.text;
    }
    last = event.seq;
  }
  close(true);
  return out;
}

/** A branch and its depth in the tree (0: the first branch). */
export interface BranchInTree {
  readonly branch: Branch;
  readonly depth: number;
}

/**
 * The branches as a tree, in pre-order: each branch after the one it
 * leaves (its `leavesAt` lies in that branch's run), siblings in log
 * order. Without recursion: a chain of rewinds nests as deep as it is long.
 *
 * @param list The branches of a log ({@link branchesOf}).
 * @returns Every branch once, with its depth.
 * @internal
 */
export function branchTree(
  list: ReadonlyArray<Branch>,
): ReadonlyArray<BranchInTree> {
  const children = new Map<number, number[]>();
  const roots: number[] = [];
  list.forEach((branch, i) => {
    const at = branch.leavesAt;
    const parent = at === undefined
      ? -1
      : list.findIndex((p) => p.fromSeq <= at && at <= p.tipSeq);
    if (parent < 0) roots.push(i);
    else children.set(parent, [...(children.get(parent) ?? []), i]);
  });
  const out: BranchInTree[] = [];
  const stack: Array<readonly [number, number]> = roots.map((i) =>
    [i, 0] as const
  ).reverse();
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [i, depth] = top;
    const branch = list[i];
    if (branch === undefined) continue;
    out.push({ branch, depth });
    const under = children.get(i) ?? [];
    for (let k = under.length - 1; k >= 0; k--) {
      stack.push([under[k] ?? 0, depth + 1]);
    }
  }
  return out;
}
