/**
 * What a rewind does to a surface, read from the persistent store without
 * a scan of the log: the surface right after an earlier event `toSeq` (the
 * nodes it restores) and the nodes it takes off, with the rules a rewind is
 * held to. The fold (`fold.ts`) applies the plan; the history operations
 * (`rewind`, `branches`) read the same plan before they append.
 *
 * The log is a tree: an event's parent is the event before it, but for an
 * event carrying a rewind, whose parent is its `toSeq`. The surface right
 * after X is found from the surface of a descendant D of X that the store
 * knows: the current surface when X is on the current path, else the
 * surface the first rewind after X left (kept at that rewind's slot, the
 * tip of the branch X is on). Walking D's nodes in order, a node at or
 * before X stays (a node on D's surface born by X was on X's surface: a
 * node comes back only by a rewind to a point on the same path), and a
 * node after X goes: a replacement gives way to the range it took the
 * place of (kept at its slot), looked at the same way, anything else is
 * dropped. The cost is D's nodes and the replacements after X that it
 * opens, never the log.
 *
 * Only a store that keeps the whole log from its base holds what this
 * needs: a surface restored from a checkpoint, or one that keeps only its
 * nodes' events, refuses a rewind (`RewindNotHeld`).
 *
 * @module
 * @internal
 */
import type { SessionEvent, SurfaceEvent } from "../core/event.ts";

import type { SessionSeq } from "../core/seq.ts";
import {
  RewindBreaksToolPair,
  RewindDropsSystemHead,
  RewindNotHeld,
  RewindPointInsideWork,
  RewindSourcesMismatch,
} from "../core/errors.ts";
import { newStore, NONE, type Store } from "./persistent_arrays.ts";
import { openWorkAt } from "./open_work.ts";
import { heldOf, seqUnchecked, storeOf, type Surface } from "./surface.ts";

/** The part of a surface a rewind reads: a store whose slot is `seq - base`. */
export interface RewindView {
  readonly store: Store;
  readonly base: number;
  /** The head's slot, or NONE. */
  readonly head: number;
  readonly length: number;
  /** The seq the next event must have. */
  readonly next: number;
}

/** What a rewind to a point restores and takes off. */
export interface RewindPlan {
  /** The nodes of the surface right after the point, in surface order. */
  readonly restored: ReadonlyArray<SessionSeq>;
  /** The current nodes not on it, in surface order. */
  readonly takenOff: ReadonlyArray<SessionSeq>;
  /** The current nodes, in surface order (the tip the rewind leaves). */
  readonly current: ReadonlyArray<SessionSeq>;
}

/** The event at `seq` of a view. */
const eventAt = (view: RewindView, seq: number): SessionEvent | undefined =>
  view.store.events[seq - view.base];

/** The point an event carrying a rewind returns to, else undefined. */
export const rewindTarget = (
  event: SessionEvent | undefined,
): SessionSeq | undefined => {
  if (event === undefined || event.type !== "user/message") return undefined;
  const op = event.surfaceOp;
  return typeof op === "object" && op.op === "rewind" ? op.toSeq : undefined;
};

/** The seqs of the events carrying a rewind, ascending. */
export const rewindSeqs = (store: Store): ReadonlyArray<number> => {
  const count = store.rewindCount[0] ?? 0;
  const out: number[] = [];
  for (let k = 0; k < count; k++) {
    const seq = store.rewinds[k];
    if (seq !== undefined) out.push(seq);
  }
  return out;
};

/**
 * Whether `x` is an ancestor of (or is) `e` in the log's tree: the path
 * from `e` back to the base is runs of consecutive seqs joined by rewinds.
 * O(rewinds on the path), each found by a scan of the rewinds from the
 * end (a session holds few).
 */
export const isAncestor = (
  view: RewindView,
  rewinds: ReadonlyArray<number>,
  x: number,
  e: number,
): boolean => {
  let at = e;
  let k = rewinds.length - 1;
  for (;;) {
    if (x > at) return false;
    while (k >= 0 && (rewinds[k] ?? 0) > at) k--;
    const carrier = k < 0 ? undefined : rewinds[k];
    if (carrier === undefined || x >= carrier) return true;
    const target = rewindTarget(eventAt(view, carrier));
    if (target === undefined) return true;
    at = target;
    k--;
  }
};

/** The current nodes, in surface order. */
const currentNodes = (view: RewindView): number[] => {
  const out: number[] = [];
  let slot = view.head;
  for (let n = view.length; n > 0 && slot !== NONE; n--) {
    out.push(slot + view.base);
    slot = view.store.next[slot] ?? NONE;
  }
  return out;
};

/**
 * The nodes of `from` (a descendant's surface) as they were right after
 * `x`: each node after `x` gives way to the range it replaced, or goes.
 */
const expand = (
  view: RewindView,
  from: ReadonlyArray<number>,
  x: number,
): number[] => {
  const out: number[] = [];
  // An explicit stack: replacements of replacements nest without bound.
  const lists: Array<ReadonlyArray<number>> = [from];
  const at: number[] = [0];
  while (lists.length > 0) {
    const top = lists.length - 1;
    const list = lists[top] ?? [];
    const i = at[top] ?? 0;
    if (i >= list.length) {
      lists.pop();
      at.pop();
      continue;
    }
    at[top] = i + 1;
    const seq = list[i] ?? NONE;
    if (seq <= x) {
      out.push(seq);
      continue;
    }
    const range = view.store.ranges[seq - view.base];
    if (range !== undefined) {
      lists.push(range);
      at.push(0);
    }
  }
  return out;
};

/** The first tool call or result of `nodes` left without its partner. */
const unpaired = (
  view: RewindView,
  nodes: ReadonlyArray<number>,
): { readonly node: number; readonly callId: string } | undefined => {
  const open = new Map<string, number>();
  for (const seq of nodes) {
    const event = eventAt(view, seq);
    if (event === undefined) continue;
    if (event.type === "assistant/message") {
      for (const block of event.data.message.content) {
        if (block.type !== "tool-call") continue;
        // A later message issuing an open id takes it over.
        open.delete(block.id);
        open.set(block.id, seq);
      }
    } else if (event.type === "tool/result") {
      const id = event.data.message.content[0].toolCallId;
      if (!open.delete(id)) return { node: seq, callId: id };
    }
  }
  for (const [callId, node] of open) return { node, callId };
  return undefined;
};

/** The errors of a rewind plan, before the sources are compared. */
export type RewindPlanError =
  | RewindNotHeld
  | RewindPointInsideWork
  | RewindDropsSystemHead
  | RewindBreaksToolPair;

/**
 * Plans a rewind to `toSeq` by the event at `seq`, checking in order:
 * `RewindNotHeld`, `RewindPointInsideWork`, `RewindDropsSystemHead`,
 * `RewindBreaksToolPair`.
 */
export const planOn = (
  view: RewindView,
  seq: SessionSeq,
  toSeq: SessionSeq,
): RewindPlan | RewindPlanError => {
  const rewinds = rewindSeqs(view.store);
  const tip = view.next - 1;
  const open = openWorkAt(view.store, toSeq);
  if (open !== undefined) {
    return new RewindPointInsideWork({
      seq,
      toSeq,
      work: open.work,
      openedAt: seqUnchecked(open.openedAt),
    });
  }
  const current = currentNodes(view);
  let from: ReadonlyArray<number> = current;
  if (!isAncestor(view, rewinds, toSeq, tip)) {
    // The tip of the branch `toSeq` is on: the surface the first rewind
    // after it left.
    const first = rewinds.find((r) => r > toSeq);
    const left = first === undefined
      ? undefined
      : view.store.tips[first - view.base];
    if (left !== undefined) from = left;
  }
  const restored = expand(view, from, toSeq);
  const head = current[0];
  if (head !== undefined && eventAt(view, head)?.type === "system/message") {
    const first = restored[0];
    if (
      first === undefined || eventAt(view, first)?.type !== "system/message"
    ) {
      return new RewindDropsSystemHead({
        seq,
        toSeq,
        head: seqUnchecked(head),
      });
    }
  }
  const broken = unpaired(view, restored);
  if (broken !== undefined) {
    return new RewindBreaksToolPair({
      seq,
      toSeq,
      node: seqUnchecked(broken.node),
      callId: broken.callId,
    });
  }
  const kept = new Set(restored);
  return {
    restored: restored.map(seqUnchecked),
    takenOff: current.filter((n) => !kept.has(n)).map(seqUnchecked),
    current: current.map(seqUnchecked),
  };
};

/**
 * Compares a rewind's cited sources with the nodes it takes off.
 */
export const checkCited = (
  event: SurfaceEvent,
  toSeq: SessionSeq,
  takenOff: ReadonlyArray<SessionSeq>,
): RewindSourcesMismatch | undefined => {
  const cited = event.type === "assistant/message"
    ? []
    : event.sourceEventSeqs ?? [];
  const off = new Set<number>(takenOff);
  const citedSet = new Set<number>(cited);
  const missing = takenOff.filter((n) => !citedSet.has(n));
  const extra = cited.filter((n) => !off.has(n));
  return missing.length === 0 && extra.length === 0
    ? undefined
    : new RewindSourcesMismatch({ seq: event.seq, toSeq, missing, extra });
};

/** The view of a surface, or the refusal when it does not hold its log. */
export const viewOf = (
  surface: Surface,
  seq: SessionSeq,
  toSeq: SessionSeq,
): RewindView | RewindNotHeld => {
  const held = heldOf(surface);
  if (held !== undefined || !surface.keepsLog || toSeq < surface.baseSeq) {
    return new RewindNotHeld({
      seq,
      toSeq,
      heldFrom: surface.keepsLog ? surface.heldFrom : surface.nextSeq,
    });
  }
  const store = storeOf(surface);
  const base = surface.baseSeq;
  return {
    // An empty surface: a fresh store, only read.
    store: store ?? newStore(),
    base,
    head: surface.head === undefined ? NONE : surface.head - base,
    length: surface.length,
    next: surface.nextSeq,
  };
};

/**
 * The rewind a surface would fold for an event at its next seq returning
 * to `toSeq`: what it restores and takes off, or the rule it breaks.
 * @internal
 */
export function planRewind(
  surface: Surface,
  toSeq: SessionSeq,
): RewindPlan | RewindPlanError {
  const seq = surface.nextSeq;
  const view = viewOf(surface, seq, toSeq);
  if (!("store" in view)) return view;
  const plan = planOn(view, seq, toSeq);
  if ("restored" in plan) plans.set(surface, { toSeq, plan });
  return plan;
}

/**
 * The last plan {@link planRewind} made on a surface, by surface: the fold
 * of the event that carries it, onto the same surface, reuses it instead
 * of planning again. A plan is a function of the surface (a value) and
 * the point, so this only saves work; it is weakly held.
 */
const plans = new WeakMap<
  Surface,
  { readonly toSeq: SessionSeq; readonly plan: RewindPlan }
>();

/**
 * The plan {@link planRewind} made on `surface` for a rewind to `toSeq`,
 * if it made one.
 * @internal
 */
export function planned(
  surface: Surface,
  toSeq: SessionSeq,
): RewindPlan | undefined {
  const found = plans.get(surface);
  return found !== undefined && found.toSeq === toSeq ? found.plan : undefined;
}

/** The events carrying a rewind of a surface that holds its log. @internal */
export function rewindsOf(surface: Surface): ReadonlyArray<SessionSeq> {
  const store = storeOf(surface);
  return store === undefined ? [] : rewindSeqs(store).map(seqUnchecked);
}

/** Whether `x` is on the path of the surface's latest event. @internal */
export function onCurrentPath(surface: Surface, x: SessionSeq): boolean {
  const store = storeOf(surface);
  if (store === undefined) return false;
  const view: RewindView = {
    store,
    base: surface.baseSeq,
    head: NONE,
    length: 0,
    next: surface.nextSeq,
  };
  return isAncestor(view, rewindSeqs(store), x, surface.nextSeq - 1);
}
