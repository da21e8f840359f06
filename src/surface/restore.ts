/**
 * A surface rebuilt from a checkpoint's state, without folding the log
 * before it: the store's first slots hold the surface nodes below the first
 * held seq ("pinned", see `Held` in `store.ts`), and the dense part holds
 * the events from there on. Folding onto the result checks every rule as
 * folding onto the surface the checkpoint was taken of: order keys are
 * renumbered, but only their order is ever compared, and the order is the
 * surface's. The open tool calls are given, or else rebuilt from the held
 * events: exact when no pinned node has an open call (a checkpoint holds
 * from the oldest such node), and otherwise a pinned node's calls are
 * taken as answered.
 *
 * Internal: the checkpoint codec (`src/log/checkpoint.ts`) is its user.
 *
 * @module
 * @internal
 */
import {
  isSurfaceEvent,
  type SessionEvent,
  type SurfaceEvent,
} from "../event.ts";
import type { SessionSeq } from "../seq.ts";
import { projectEvent } from "./project.ts";
import { trackCalls } from "./calls.ts";
import { type Held, newStore, NONE, Ref } from "./store.ts";
import { makeSurface, seqUnchecked, type Surface } from "./surface.ts";

/**
 * The counters of a surface to rebuild: the log's first seq, the first seq
 * whose event is held (at most the next), the seq the next event must have,
 * and how many replacements were folded.
 */
export type SurfaceCounters = readonly [
  baseSeq: SessionSeq,
  heldFrom: SessionSeq,
  nextSeq: SessionSeq,
  replacements: number,
];

/**
 * Rebuilds a surface; undefined when the state is not one a fold could
 * have left (a node twice, a held event out of place, a node at or past
 * `nextSeq`): the caller treats that as a checkpoint that does not match.
 *
 * @param counters The surface's counters.
 * @param nodes The surface's events, in surface order.
 * @param held Every event from `heldFrom` to `nextSeq - 1`, in seq order.
 * @param prior What is known of the log before `heldFrom`.
 * @param openCalls The open calls of the nodes, as (call id, message seq)
 * pairs (`openCallsOf` of the surface folded); rebuilt from `held` when
 * absent.
 * @returns The surface, or undefined.
 */
export function restoreSurface(
  counters: SurfaceCounters,
  nodes: ReadonlyArray<SurfaceEvent>,
  held: ReadonlyArray<SessionEvent>,
  prior: unknown,
  openCalls?: ReadonlyArray<readonly [string, number]>,
): Surface | undefined {
  const [baseSeq, heldFrom, nextSeq, replacements] = counters;
  if (heldFrom < baseSeq || heldFrom > nextSeq) return undefined;
  if (held.length !== nextSeq - heldFrom) return undefined;
  const pinnedSeqs: number[] = [];
  const slots = new Map<number, number>();
  const seen = new Set<number>();
  for (const node of nodes) {
    if (!isSurfaceEvent(node)) return undefined;
    if (node.seq < baseSeq || node.seq >= nextSeq || seen.has(node.seq)) {
      return undefined;
    }
    seen.add(node.seq);
    if (node.seq < heldFrom) {
      slots.set(node.seq, pinnedSeqs.length);
      pinnedSeqs.push(node.seq);
    }
  }
  const origin = heldFrom - pinnedSeqs.length;
  const store = newStore();
  for (let i = 0; i < held.length; i++) {
    const event = held[i];
    if (event === undefined || event.seq !== heldFrom + i) return undefined;
    store.events[event.seq - origin] = event;
    if (openCalls === undefined && isSurfaceEvent(event)) {
      trackCalls(store.calls, event, event.seq - origin, undefined);
    }
  }
  for (const [id, seq] of openCalls ?? []) {
    const slot = seq < heldFrom ? slots.get(seq) : seq - origin;
    if (slot === undefined || !seen.has(seq)) return undefined;
    store.calls.set(id, slot);
  }
  let prev = NONE;
  const length = nodes.length;
  for (let j = 0; j < length; j++) {
    const node = nodes[j];
    if (node === undefined) return undefined;
    const slot = node.seq < heldFrom
      ? slots.get(node.seq) ?? NONE
      : node.seq - origin;
    if (node.seq >= heldFrom && store.events[slot] !== node) {
      // A held node must be the held event of its seq.
      const same = store.events[slot];
      if (same === undefined || same.seq !== node.seq) return undefined;
    }
    store.events[slot] = node;
    store.messages[slot] = projectEvent(node) ?? null;
    // Keys only compare: below every seq (and NONE), in surface order.
    store.key[slot] = j - length - 1;
    store.prev[slot] = prev;
    store.next[slot] = NONE;
    if (prev !== NONE) store.next[prev] = slot;
    prev = slot;
  }
  const first = nodes[0];
  const last = nodes[length - 1];
  const restored: Held = {
    from: heldFrom,
    origin,
    seqs: pinnedSeqs,
    slots,
    prior,
  };
  return makeSurface(
    new Ref(store),
    baseSeq,
    nextSeq,
    length,
    replacements,
    first === undefined ? undefined : seqUnchecked(first.seq),
    last === undefined ? undefined : seqUnchecked(last.seq),
    true,
    restored,
  );
}
