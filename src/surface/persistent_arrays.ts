/**
 * The persistent store under every {@link Surface}: a doubly linked list
 * over arrays indexed by seq, plus the events by seq and the message each
 * node derives.
 *
 * The newest surface version owns the store; an older version holds the
 * writes that take the store back to it, and reading it "reroots" the store
 * there (Baker's persistent arrays). Linear use costs O(1) per append and
 * O(k) per k-node replace; going back to an older version costs the writes
 * in between. Order between two nodes is decided by order keys: an appended
 * node's key is its seq, a replacement takes the key of its range's first
 * node, so surface order is key order without renumbering.
 *
 * A version that nobody can observe keeps no undo writes: folding from an
 * empty surface builds a fresh store. Holding an old surface keeps the writes
 * from it to the newest alive, so memory grows with what is held.
 *
 * Internal: nothing here is exported from an entry point.
 *
 * @module
 */
import type { SessionEvent } from "../core/event.ts";
import type { Message } from "../core/message.ts";

/** The link and key of no node. */
export const NONE = -1;

/**
 * What a surface restored from a checkpoint knows of the log before the
 * events it holds. Its store's slots `0..seqs.length-1` hold the surface
 * nodes below `from` ("pinned", in seq order, so a pinned seq's slot is
 * found by a binary search, not a map: a few bytes per node); from `from`
 * on, the slot of seq `s` is `s - origin`, as in any store. Shared,
 * unchanged, by every version folded from the restored surface.
 */
export interface Held {
  /** The first seq whose event the store holds at `seq - origin`. */
  readonly from: number;
  /** `from` minus the number of pinned slots. */
  readonly origin: number;
  /** The seqs of the pinned slots, by slot: ascending. */
  readonly seqs: Float64Array;
  /** What the checkpoint recorded of the log before `from`. */
  readonly prior: unknown;
}

/** The slot of a pinned seq (a binary search of `seqs`), or NONE. */
const pinnedSlot = (seqs: Float64Array, seq: number): number => {
  let lo = 0;
  let hi = seqs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = seqs[mid] ?? 0;
    if (at === seq) return mid;
    if (at < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return NONE;
};

/**
 * The slot of `seq` in a store whose dense part starts at `origin`
 * (`held` for a restored one): NONE when the store has none for it.
 */
export const slotOf = (
  held: Held | undefined,
  origin: number,
  seq: number,
): number =>
  held === undefined || seq >= held.from
    ? seq - origin
    : pinnedSlot(held.seqs, seq);

/** The seq of a slot; the inverse of {@link slotOf}. */
export const seqOfSlot = (
  held: Held | undefined,
  origin: number,
  slot: number,
): number =>
  held === undefined || slot >= held.seqs.length
    ? slot + origin
    : held.seqs[slot] ?? NONE;

/** Arrays indexed by slot: `seq - base` (see {@link Held} for a restored store). */
export interface Store {
  readonly events: Array<SessionEvent | undefined>;
  readonly prev: Array<number>;
  readonly next: Array<number>;
  /** Order key of a node on the surface; NONE (or a hole) when off it. */
  readonly key: Array<number>;
  /**
   * The message each node derives, or null when it derives none: projected
   * once when the node is linked, so derivation is a walk and no dispatch.
   */
  readonly messages: Array<Message | null>;
  /**
   * The open tool calls, but for those in `pending`: each call id an `assistant/message` issued that no
   * `tool/result` folded after it answered, with the slot of the message
   * (the latest one to issue the id). A replacement may not shadow a
   * message with an open call; a `tool/result` closes its call.
   */
  readonly calls: Map<string, number>;
  /**
   * The call ids of the latest `assistant/message` with calls, before they
   * move into `calls`, each null once answered (`calls.ts` owns them).
   * Written through the undo log like the other arrays.
   */
  readonly pendingIds: Array<string | null>;
  /** `[slot, count]`: that message's slot and how many ids are pending. */
  readonly pendingAt: Array<number>;
  /**
   * The range a replacement node took the place of, as seqs in surface
   * order (set only at a replacement's slot): what a rewind to a point
   * before the replacement puts back, without a scan of the log.
   */
  readonly ranges: Array<ReadonlyArray<number> | undefined>;
  /**
   * The surface a rewind left, as seqs in surface order (set only at the
   * slot of an event carrying a rewind): the tip of the branch it left,
   * from which a rewind to a point on that branch expands.
   */
  readonly tips: Array<ReadonlyArray<number> | undefined>;
  /** The seqs of the events carrying a rewind, ascending, the first `rewindCount[0]`. */
  readonly rewinds: Array<number>;
  /** `[count]`: how many entries of `rewinds` this version has. */
  readonly rewindCount: Array<number>;
  /**
   * The open-work index (`open_work.ts`): four numbers per turn, step or
   * compaction start or end event, the first `workCount[0]` entries.
   */
  readonly work: Array<number>;
  /** `[count]`: how many entries of `work` this version has. */
  readonly workCount: Array<number>;
}

/**
 * Undo log: triples of (array, index, value to restore), or of (map, key,
 * value to restore), undefined meaning absent.
 */
export type Writes = Array<unknown[] | number | unknown>;

/** A version's handle on the store: the store itself, or writes to it. */
export class Ref {
  store: Store | undefined;
  writes: Writes | undefined;
  next: Ref | undefined;
  constructor(store: Store | undefined) {
    this.store = store;
    this.writes = undefined;
    this.next = undefined;
  }
}

const isArray = (u: unknown): u is unknown[] => Array.isArray(u);

/** Applies an undo log in reverse and returns the log that undoes it. */
const applyWrites = (writes: Writes): Writes => {
  const inverse: Writes = [];
  for (let i = writes.length - 3; i >= 0; i -= 3) {
    const array = writes[i];
    const index = writes[i + 1];
    if (array instanceof Map) {
      const value = writes[i + 2];
      inverse.push(array, index, array.get(index));
      if (value === undefined) array.delete(index);
      else array.set(index, value);
      continue;
    }
    if (!isArray(array) || typeof index !== "number") continue;
    inverse.push(array, index, array[index]);
    array[index] = writes[i + 2];
  }
  return inverse;
};

/** Makes `ref` own the store, turning the versions in between into diffs. */
export const reroot = (ref: Ref): Store => {
  if (ref.store !== undefined) return ref.store;
  const path: Ref[] = [];
  let current: Ref = ref;
  while (current.store === undefined) {
    path.push(current);
    if (current.next === undefined) {
      throw new Error("Surface invariant broken: a version lost its store");
    }
    current = current.next;
  }
  const store = current.store;
  for (let i = path.length - 1; i >= 0; i--) {
    const diff = path[i];
    if (diff === undefined || diff.writes === undefined) continue;
    const owner = diff.next;
    if (owner === undefined) continue;
    owner.writes = applyWrites(diff.writes);
    owner.next = diff;
    owner.store = undefined;
    diff.store = store;
    diff.writes = undefined;
    diff.next = undefined;
  }
  return store;
};

export const newStore = (): Store => ({
  events: [],
  prev: [],
  next: [],
  key: [],
  messages: [],
  calls: new Map(),
  pendingIds: [],
  pendingAt: [NONE, 0],
  ranges: [],
  tips: [],
  rewinds: [],
  rewindCount: [0],
  work: [],
  workCount: [0],
});
