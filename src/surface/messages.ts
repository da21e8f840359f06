/**
 * The messages a surface derives ({@link messagesOf}), kept on the surface
 * once derived and derived again from the surface it was folded from
 * (its basis) at the cost of what changed:
 *
 * - only log-only events since the basis: the basis's messages, shared;
 * - appends since the basis: its messages extended by the appended nodes
 *   (one copy of the references, a walk of the new nodes);
 * - one replace since the basis, and nothing else on the surface: its
 *   messages with the replaced run spliced out and the replacement's
 *   message in. The run is found by its order keys (ascending in surface
 *   order), by binary search in the keys the basis kept, so the cost is
 *   the replace's nodes and one copy of the references, not a walk. The
 *   keys are kept from the first derivation after a replace on (so a
 *   surface that is only ever appended to never pays for them), and an
 *   append extends the basis's keys in place when no other surface did
 *   first, so they cost an append nothing but its own keys;
 * - anything else: a walk of the whole surface, once.
 *
 * @module
 * @internal
 */
import { isSurfaceEvent } from "../event.ts";
import type { Message } from "../message.ts";
import { NONE } from "./store.ts";
import {
  basisOf,
  type Derived,
  derivedOf,
  keepDerived,
  slotIn,
  storeOf,
  type Surface,
} from "./surface.ts";

/** The first index below `end` of `keys` (ascending) whose key is at least `key`. */
const lowerBound = (
  keys: ReadonlyArray<number>,
  end: number,
  key: number,
): number => {
  let lo = 0;
  let hi = end;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] ?? Infinity) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/** Walks the surface from `slot`, `count` nodes, into `out` (and `keys`). */
const walkInto = (
  surface: Surface,
  slot: number,
  count: number,
  out: Message[],
  keys: number[] | undefined,
): void => {
  const store = storeOf(surface);
  if (store === undefined) return;
  let index = slot;
  for (let n = count; n > 0; n--) {
    const message = store.messages[index];
    if (message !== null && message !== undefined) {
      out.push(message);
      keys?.push(store.key[index] ?? NONE);
    }
    index = store.next[index] ?? NONE;
  }
};

/**
 * The one replace folded since `basis`, when nothing else since then
 * changed the surface: its slot; undefined otherwise.
 */
const onlyReplaceSince = (
  surface: Surface,
  basis: Derived,
): number | undefined => {
  if (
    surface.replacements !== basis.replacements + 1 ||
    basis.keys === undefined || surface.heldFrom > basis.nextSeq
  ) {
    return undefined;
  }
  const store = storeOf(surface);
  if (store === undefined) return undefined;
  let found: number | undefined;
  for (let seq = basis.nextSeq; seq < surface.nextSeq; seq++) {
    const slot = slotIn(surface, seq);
    const event = store.events[slot];
    if (event === undefined || !isSurfaceEvent(event)) continue;
    if (found !== undefined || typeof event.surfaceOp !== "object") {
      return undefined;
    }
    found = slot;
  }
  return found;
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
    // Only log-only events since the basis: the same messages (and a
    // later replace is looked for from the basis's next seq on).
    keepDerived(surface, basis);
    return basis.messages;
  }
  const extends_ = basis !== undefined &&
    basis.replacements === surface.replacements &&
    basis.head === surface.head && basis.length <= surface.length;
  const replaced = basis === undefined || extends_
    ? undefined
    : onlyReplaceSince(surface, basis);
  let out: Message[] = [];
  let keys: number[] | undefined;
  if (basis !== undefined && extends_) {
    // No replacement and no prepend since the basis: its nodes are still
    // the surface's first ones, in order, and the rest follow its tail.
    // Spread, not slice: V8 copies a frozen array by slice element by
    // element, about 80x slower.
    out = [...basis.messages];
    // The basis's keys, extended in place when no other surface extended
    // them first (then they are copied).
    const length = basis.messages.length;
    keys = basis.keys === undefined
      ? undefined
      : basis.keys.length === length
      ? basis.keys
      : basis.keys.slice(0, length);
    if (store !== undefined && surface.head !== undefined) {
      const from = basis.tail === undefined
        ? slotIn(surface, surface.head)
        : store.next[slotIn(surface, basis.tail)] ?? NONE;
      walkInto(surface, from, surface.length - basis.length, out, keys);
    }
  } else if (
    basis?.keys !== undefined && store !== undefined && replaced !== undefined
  ) {
    // One replace: the basis's messages whose keys run from the
    // replacement's (its range's first node's) to the next node's are
    // left out, the replacement's message is put in. Spread then splice:
    // a copy of the references and one move.
    const key = store.key[replaced] ?? NONE;
    const after = store.next[replaced] ?? NONE;
    const afterKey = after === NONE ? Infinity : store.key[after] ?? Infinity;
    const length = basis.messages.length;
    const from = lowerBound(basis.keys, length, key);
    const to = lowerBound(basis.keys, length, afterKey);
    out = [...basis.messages];
    keys = basis.keys.slice(0, length);
    const message = store.messages[replaced];
    if (message !== null && message !== undefined) {
      out.splice(from, to - from, message);
      keys.splice(from, to - from, key);
    } else {
      out.splice(from, to - from);
      keys.splice(from, to - from);
    }
  } else if (surface.head !== undefined) {
    // A walk of the whole surface; after a replace, keeping the keys for
    // the next one.
    keys = basis !== undefined && basis.replacements !== surface.replacements
      ? []
      : undefined;
    walkInto(surface, slotIn(surface, surface.head), surface.length, out, keys);
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
