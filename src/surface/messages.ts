/**
 * The messages a surface derives ({@link messagesOf}), kept on the surface
 * once derived and derived again from the surface it was folded from
 * (its basis) at the cost of what changed:
 *
 * - only log-only events since the basis: the basis's messages, shared;
 * - only appends since the basis: its messages extended by the appended
 *   nodes (one copy of the references, a walk of the new nodes);
 * - any mix of appends, replaces and prepends since the basis (a compaction
 *   then the next user message, many prunes in one update, a system prompt
 *   prepended, a replace of a replacement or of nodes appended since): the
 *   basis's messages with the changed runs spliced ({@link editsSince}): a
 *   look at each event since the basis, a walk of the new nodes still on
 *   the surface, two binary searches in the basis's order keys per run of
 *   them, and one copy of the references (spliced when at most 32 edits
 *   move the array, else copied run by run in one pass), not a walk of the
 *   surface;
 * - no basis (a surface never derived, nor anything it was folded from), or
 *   a basis older than the events a restored surface holds, or a basis that
 *   kept no keys: a walk of the whole surface, once.
 *
 * A derived surface keeps the order key of each message's node from the
 * first derivation after a change other than appends on (the walk of the
 * first derivation, and appends to a surface that kept none, cost no key:
 * a live session only ever appended to never pays for them, and its first
 * replace or prepend walks once)
 * (ascending: surface order, see `store.ts`), kept as a slot ({@link kept})
 * in an `Int32Array` with room to grow ({@link OrderKeys}): what lets a
 * later derivation find a run of messages by binary search. An append
 * extends the basis's keys in place when no other surface did first, so
 * they cost it nothing but its own keys; a fork keeps its own appended keys
 * and copies the basis's when a derivation first reads them
 * ({@link deferred}); a splice copies them run by run (a memory copy each).
 *
 * On a 100k-node surface (`bench/measure.ts`, best of 20, runs alternating
 * with the walk this replaced): a derive after a prune and three appends
 * costs 0.80-0.84 ms (2.15-2.48 ms walked), after five prunes 0.29-0.31 ms
 * (2.14-2.46), after a prepend 0.79-0.86 ms (1.33-1.41). Keys kept from
 * the first derivation on made that first walk 1.4-1.6 ms instead of
 * 1.0-1.1 and a derive after appends 8% slower, so they start at the first
 * change instead. See docs/performance.md.
 *
 * @module
 * @internal
 */
import type { Message } from "../core/message.ts";
import { NONE, type Store } from "./persistent_arrays.ts";
import {
  basisOf,
  type Derived,
  derivedOf,
  heldOf,
  keepDerived,
  type OrderKeys,
  originOf,
  slotIn,
  storeOf,
  type Surface,
} from "./surface.ts";

/** Keys for `count` entries, with room for a few appends more. */
const newKeys = (count: number): OrderKeys => ({
  array: new Int32Array(count + (count >>> 3) + 64),
  used: 0,
  pending: undefined,
});

/** The keys, with their copy made if it was put off. */
const ready = (keys: OrderKeys): OrderKeys => {
  keys.pending?.();
  return keys;
};

/**
 * The keys of a surface folded by appends from one whose keys another
 * surface extended first (a fork): the first `length` of `below`, then
 * `own`. The copy is made when a derivation first reads them, so a fork
 * that is only derived, or only appended to, costs no copy of the keys;
 * `below` is ready, so the copy never waits on another.
 */
const deferred = (
  below: OrderKeys,
  length: number,
  own: OrderKeys,
): OrderKeys => {
  const keys: OrderKeys = { array: own.array, used: 0, pending: undefined };
  keys.pending = () => {
    keys.pending = undefined;
    const array = newKeys(length + own.used).array;
    array.set(below.array.subarray(0, length));
    array.set(own.array.subarray(0, own.used), length);
    keys.array = array;
    keys.used = length + own.used;
  };
  return keys;
};

/**
 * An order key as kept with the messages, with the same order: a small
 * integer. Keys at or above zero are seqs of the surface's window (at or
 * above `origin`, the seq of its first slot), or the one prepended node's,
 * half a step below the head's; keys below zero are those a restored
 * surface gave its nodes (down to minus its length, minus 2), or the
 * prepended node's (only one node can be prepended: the head is then a
 * system/message, which stays the head). Taking `origin` off the seqs
 * makes them slots, and doubling makes the half step an integer; what a
 * fast array can index (and a restored surface's length) is far below
 * 2^30. A surface not restored has no key below zero but a prepended
 * node's when `origin` is 0, so for it this is `2 * (key - origin)`.
 */
const kept = (key: number, origin: number): number =>
  2 * (key < 0 ? key : key - origin);

/**
 * The basis's keys (ready, and no other surface extended them past
 * `length`) with room for `more` entries more: the same buffer, grown if
 * need be (the surfaces sharing it see the same entries).
 */
const keysAfter = (
  keys: OrderKeys,
  length: number,
  more: number,
): OrderKeys => {
  if (length + more > keys.array.length) {
    const grown = newKeys(length + more).array;
    grown.set(keys.array.subarray(0, length));
    keys.array = grown;
  }
  return keys;
};

/**
 * The first index below `end` of `keys` (ascending) whose key is at least
 * `key` (more than `key` when `after`).
 */
const bound = (
  keys: Int32Array,
  end: number,
  key: number,
  after: boolean,
): number => {
  let lo = 0;
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = keys[mid] ?? Infinity;
    if (at < key || (after && at === key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * Walks the surface from `slot`, `count` nodes, into `out` and `keys`
 * (from `keys.used` on, which it advances; `keys` has room for `count`),
 * or into `out` alone.
 */
const walkInto = (
  surface: Surface,
  store: Store,
  slot: number,
  count: number,
  out: Message[],
  keys: OrderKeys | undefined,
): void => {
  let index = slot;
  if (keys === undefined) {
    for (let n = count; n > 0; n--) {
      const message = store.messages[index];
      if (message !== null && message !== undefined) out.push(message);
      index = store.next[index] ?? NONE;
    }
    return;
  }
  const origin = originOf(surface);
  const array = keys.array;
  let used = keys.used;
  // Two loops, so a surface not restored pays no test per key (see kept).
  if (heldOf(surface) === undefined) {
    for (let n = count; n > 0; n--) {
      const message = store.messages[index];
      if (message !== null && message !== undefined) {
        out.push(message);
        array[used++] = 2 * ((store.key[index] ?? NONE) - origin);
      }
      index = store.next[index] ?? NONE;
    }
  } else {
    for (let n = count; n > 0; n--) {
      const message = store.messages[index];
      if (message !== null && message !== undefined) {
        out.push(message);
        array[used++] = kept(store.key[index] ?? NONE, origin);
      }
      index = store.next[index] ?? NONE;
    }
  }
  keys.used = used;
};

/**
 * One change to the basis's messages: the `removed` of them from `at` give
 * way to `messages` (whose nodes' keys are `keys`).
 */
interface Edit {
  readonly at: number;
  readonly removed: number;
  readonly messages: Message[];
  readonly keys: number[];
}

/**
 * The edits, in ascending `at`, that turn the basis's messages into the
 * surface's; undefined when the events since the basis are not held.
 *
 * The nodes of the surface are old (on the basis's surface: a slot below
 * the basis's next seq's) or new. Each maximal run of old nodes on the
 * surface is a run of the basis's surface too, none missing in between:
 * a replace puts its replacement where its range was, and that node, or
 * whatever replaced it later, is new, so a run of old nodes with no new
 * node between them lost none. So the surface is found from the new nodes
 * alone: each run of new nodes is walked from its first node (a new node
 * whose previous node is old, or the head); the runs are put in surface
 * order by their first node's order key; and the old nodes between two
 * runs of new nodes are the basis's messages whose keys run from the key
 * of the node after the first run to that of the node before the second,
 * two binary searches. What lies between two kept runs of the basis is
 * what a change took out, and the new nodes between them what it put in.
 *
 * The cost: a look at each event since the basis, a sort of the runs of
 * new nodes, a walk of the new nodes still on the surface and two binary
 * searches per run.
 */
const editsSince = (
  surface: Surface,
  basis: Derived,
  basisKeys: OrderKeys,
  store: Store,
): Edit[] | undefined => {
  if (surface.heldFrom > basis.nextSeq) return undefined;
  const length = basis.messages.length;
  const keys = ready(basisKeys).array;
  const edits: Edit[] = [];
  if (surface.head === undefined || surface.tail === undefined) {
    if (length > 0) {
      edits.push({ at: 0, removed: length, messages: [], keys: [] });
    }
    return edits;
  }
  const { key, prev, next } = store;
  const origin = originOf(surface);
  // Slots from here on hold the events since the basis; every other node
  // (pinned slots of a restored surface included) is old.
  const firstNew = slotIn(surface, basis.nextSeq);
  const end = slotIn(surface, surface.nextSeq);
  const starts: number[] = [];
  for (let slot = firstNew; slot < end; slot++) {
    const at = key[slot];
    if (at === undefined || at === NONE) continue;
    const before = prev[slot] ?? NONE;
    if (before === NONE || before < firstNew) starts.push(slot);
  }
  starts.sort((a, b) => (key[a] ?? NONE) - (key[b] ?? NONE));
  let at = 0;
  let messages: Message[] = [];
  let added: number[] = [];
  // Keeps the basis's messages of the old nodes `first` to `last`
  // (consecutive on the surface); what lies before them since the last
  // kept run gives way to the new nodes walked since.
  const keep = (first: number, last: number): void => {
    const from = bound(keys, length, kept(key[first] ?? NONE, origin), false);
    if (from > at || messages.length > 0) {
      edits.push({ at, removed: from - at, messages, keys: added });
      messages = [];
      added = [];
    }
    at = bound(keys, length, kept(key[last] ?? NONE, origin), true);
  };
  const head = slotIn(surface, surface.head);
  const tail = slotIn(surface, surface.tail);
  if (head < firstNew) {
    const first = starts[0];
    keep(head, first === undefined ? tail : prev[first] ?? NONE);
  }
  for (let i = 0; i < starts.length; i++) {
    let slot = starts[i] ?? NONE;
    while (slot !== NONE && slot >= firstNew) {
      const message = store.messages[slot];
      if (message !== null && message !== undefined) {
        messages.push(message);
        added.push(kept(key[slot] ?? NONE, origin));
      }
      slot = next[slot] ?? NONE;
    }
    if (slot === NONE) continue;
    const following = starts[i + 1];
    keep(slot, following === undefined ? tail : prev[following] ?? NONE);
  }
  if (length > at || messages.length > 0) {
    edits.push({ at, removed: length - at, messages, keys: added });
  }
  return edits;
};

/**
 * Up to this many edits that move the messages after them are applied by
 * splicing a copy (each splice moves the rest of the array, a memmove);
 * more, or a larger insertion than a call's arguments should carry, and the
 * messages are copied run by run in one pass.
 */
const SPLICE_MOVES = 32;
const SPLICE_INSERTED = 4096;

/**
 * The basis's messages with `edits` applied, their keys into `keys` (the
 * basis's keys are ready: {@link editsSince} made them).
 */
const applyEdits = (
  basis: Derived,
  basisKeys: OrderKeys,
  edits: ReadonlyArray<Edit>,
  keys: OrderKeys,
): Message[] => {
  const from = basisKeys.array;
  const to = keys.array;
  // The keys, run by run: a memory copy each.
  let read = 0;
  let write = 0;
  let moves = 0;
  let inserted = 0;
  for (const edit of edits) {
    to.set(from.subarray(read, edit.at), write);
    write += edit.at - read;
    for (const key of edit.keys) to[write++] = key;
    read = edit.at + edit.removed;
    if (edit.messages.length !== edit.removed) moves++;
    inserted += edit.messages.length;
  }
  const length = basis.messages.length;
  to.set(from.subarray(read, length), write);
  keys.used = write + length - read;
  if (moves <= SPLICE_MOVES && inserted <= SPLICE_INSERTED) {
    // Spread, not slice: V8 copies a frozen array by slice element by
    // element, about 80x slower. Back to front, so each edit's index
    // still holds.
    const out = [...basis.messages];
    for (let i = edits.length - 1; i >= 0; i--) {
      const edit = edits[i];
      if (edit !== undefined) {
        out.splice(edit.at, edit.removed, ...edit.messages);
      }
    }
    return out;
  }
  const out: Message[] = [];
  read = 0;
  const copy = (end: number): void => {
    for (let i = read; i < end; i++) {
      const message = basis.messages[i];
      if (message !== undefined) out.push(message);
    }
  };
  for (const edit of edits) {
    copy(edit.at);
    for (const message of edit.messages) out.push(message);
    read = edit.at + edit.removed;
  }
  copy(length);
  return out;
};

/**
 * The messages a surface derives, in surface order, frozen and kept on the
 * surface: deriving an unchanged surface again costs nothing, and one
 * derived from its basis costs what changed (see the module doc).
 *
 * @param surface The surface.
 * @returns Its messages.
 * @internal
 */
export function messagesOf(surface: Surface): ReadonlyArray<Message> {
  const cached = derivedOf(surface);
  if (cached !== undefined) return cached.messages;
  const basis = basisOf(surface);
  const store = storeOf(surface);
  if (
    basis !== undefined && basis.replacements === surface.replacements &&
    basis.head === surface.head && basis.length === surface.length
  ) {
    // Only log-only events since the basis: the same messages.
    keepDerived(surface, basis);
    return basis.messages;
  }
  let out: Message[] = [];
  let keys: OrderKeys | undefined;
  if (
    basis !== undefined && basis.replacements === surface.replacements &&
    basis.head === surface.head && basis.length <= surface.length
  ) {
    // No replacement and no prepend since the basis: its nodes are still
    // the surface's first ones, in order, and the rest follow its tail.
    // Spread, not slice (see applyEdits).
    out = [...basis.messages];
    const count = surface.length - basis.length;
    const length = basis.messages.length;
    // The basis's keys, if it kept any, extended in place when no other
    // surface extended them first; else the appended keys alone, the copy
    // put off.
    const below = basis.keys;
    const shared = below !== undefined && ready(below).used === length;
    const own = below === undefined
      ? undefined
      : shared
      ? keysAfter(below, length, count)
      : newKeys(count);
    if (store !== undefined && surface.head !== undefined) {
      const from = basis.tail === undefined
        ? slotIn(surface, surface.head)
        : store.next[slotIn(surface, basis.tail)] ?? NONE;
      walkInto(surface, store, from, count, out, own);
    }
    keys = below === undefined || own === undefined || shared
      ? own
      : deferred(below, length, own);
  } else {
    const edits = basis?.keys === undefined || store === undefined
      ? undefined
      : editsSince(surface, basis, basis.keys, store);
    if (basis?.keys !== undefined && edits !== undefined) {
      let length = basis.messages.length;
      for (const edit of edits) {
        length += edit.messages.length - edit.removed;
      }
      keys = newKeys(length);
      out = applyEdits(basis, basis.keys, edits, keys);
    } else {
      // The first derivation walks without keys; the first after a change
      // other than appends walks with them, so the next change splices.
      keys = basis === undefined ? undefined : newKeys(surface.length);
      if (store !== undefined && surface.head !== undefined) {
        const head = slotIn(surface, surface.head);
        walkInto(surface, store, head, surface.length, out, keys);
      }
    }
  }
  const messages = Object.freeze(out);
  keepDerived(surface, {
    messages,
    length: surface.length,
    head: surface.head,
    tail: surface.tail,
    replacements: surface.replacements,
    nextSeq: surface.nextSeq,
    keys,
  });
  return messages;
}
