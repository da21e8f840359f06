/**
 * A surface rebuilt from a checkpoint's state, without folding the log
 * before it: the store's first slots hold the surface nodes below the first
 * held seq ("pinned", in seq order, see `Held` in `store.ts`), and the
 * dense part holds the events from there on. Beside the store it keeps
 * only the pinned seqs, one float each (no map or set by seq). Folding
 * onto the result checks every rule as folding onto the surface the
 * checkpoint was taken of: order keys are renumbered, but only their order
 * is ever compared, and the order is the surface's. The open tool calls are
 * given, or else rebuilt from the held events: exact when no pinned node
 * has an open call (a checkpoint holds from the oldest such node), and
 * otherwise a pinned node's calls are taken as answered.
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
} from "../core/event.ts";
import type { SessionSeq } from "../core/seq.ts";
import { projectEvent } from "./project.ts";
import { trackCalls } from "./calls.ts";
import { type Held, newStore, NONE, Ref, slotOf } from "./persistent_arrays.ts";
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
  let pinned = 0;
  for (const node of nodes) {
    if (!isSurfaceEvent(node)) return undefined;
    if (node.seq < baseSeq || node.seq >= nextSeq) return undefined;
    if (node.seq < heldFrom) pinned++;
  }
  // The pinned seqs in seq order: their slots (see `Held`).
  const seqs = new Float64Array(pinned);
  let count = 0;
  let sorted = true;
  for (const node of nodes) {
    if (node.seq >= heldFrom) continue;
    if (count > 0 && node.seq <= (seqs[count - 1] ?? 0)) sorted = false;
    seqs[count++] = node.seq;
  }
  if (!sorted) seqs.sort();
  const origin = heldFrom - pinned;
  const restored: Held = { from: heldFrom, origin, seqs, prior };
  const store = newStore();
  // Every slot filled in order first, so that the arrays stay packed
  // whatever order the slots are then written in (an array written past
  // its end becomes a dictionary, several times slower and larger).
  const slots = pinned + held.length;
  for (let slot = 0; slot < slots; slot++) {
    store.events.push(undefined);
    store.messages.push(null);
    store.key.push(NONE);
    store.prev.push(NONE);
    store.next.push(NONE);
  }
  for (let i = 0; i < held.length; i++) {
    const event = held[i];
    if (event === undefined || event.seq !== heldFrom + i) return undefined;
    store.events[event.seq - origin] = event;
    if (openCalls === undefined && isSurfaceEvent(event)) {
      trackCalls(
        store,
        event.type,
        projectEvent(event) ?? null,
        event.seq - origin,
        undefined,
      );
    }
  }
  let prev = NONE;
  const length = nodes.length;
  for (let j = 0; j < length; j++) {
    const node = nodes[j];
    if (node === undefined) return undefined;
    const slot = slotOf(restored, origin, node.seq);
    // A node twice (its slot is linked already).
    if (slot === NONE || store.key[slot] !== NONE) return undefined;
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
    if (prev !== NONE) store.next[prev] = slot;
    prev = slot;
  }
  for (const [id, seq] of openCalls ?? []) {
    const slot = seq < baseSeq || seq >= nextSeq
      ? NONE
      : slotOf(restored, origin, seq);
    // Only a node's call is open.
    if (slot === NONE || store.key[slot] === NONE) return undefined;
    store.calls.set(id, slot);
  }
  const first = nodes[0];
  const last = nodes[length - 1];
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
