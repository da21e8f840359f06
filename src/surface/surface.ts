/**
 * The public surface API: a {@link Surface} is the ordered list of event seqs
 * that currently produce messages, an immutable value; this module makes
 * empty ones and reads them (nodes, events, messages). The fold that makes
 * the next surface is `fold.ts`; the persistent store a surface reads from
 * is `store.ts`.
 *
 * @module
 */
import type { SessionSeq } from "../core/seq.ts";
import {
  isSurfaceEvent,
  type SessionEvent,
  type SurfaceEvent,
} from "../core/event.ts";
import type { Message } from "../core/message.ts";
import {
  type Held,
  NONE,
  type Ref,
  reroot,
  seqOfSlot,
  slotOf,
  type Store,
} from "./persistent_arrays.ts";

let getRef: (surface: Surface) => Ref | undefined;
let getDerived: (surface: Surface) => Derived | undefined;
let setDerived: (surface: Surface, derived: Derived) => void;
let getBasis: (surface: Surface) => Derived | undefined;
let getHeld: (surface: Surface) => Held | undefined;
let construct: typeof makeSurface;

/**
 * Order keys (ascending: surface order) in a buffer with room to grow,
 * shared by the derived messages of the surfaces folded by appends from
 * one another: each surface's keys are the first `messages.length`
 * entries, and `used` says how far some surface extended them, so a
 * surface extends them in place only when no other did first.
 * @internal
 */
export interface OrderKeys {
  /** The keys; entries past `used` are room. */
  array: Int32Array;
  /** How many entries some surface claimed. */
  used: number;
  /**
   * Set while the keys are a copy not made yet (a fork's, see
   * `messages.ts`): makes it, filling `array` and `used`.
   */
  pending: (() => void) | undefined;
}

/**
 * The messages a surface derives, kept on the surface once derived, with
 * the counters that say which surface they belong to.
 * @internal
 */
export interface Derived {
  /** The messages, frozen. */
  readonly messages: ReadonlyArray<Message>;
  /** The surface's length. */
  readonly length: number;
  /** The surface's first node (a prepend changes it, and nothing else). */
  readonly head: SessionSeq | undefined;
  /** The surface's last node. */
  readonly tail: SessionSeq | undefined;
  /** The surface's replacement count. */
  readonly replacements: number;
  /** The seq the surface expected next. */
  readonly nextSeq: number;
  /**
   * The order key of each message's node, the first `messages.length`
   * entries: what lets the messages after replaces and prepends be
   * spliced, not walked. Kept from the first derivation after a change
   * other than appends on (a surface only ever appended to, the usual
   * live session, never pays for them; its first such change walks once).
   */
  readonly keys: OrderKeys | undefined;
}

/**
 * The messages of a surface, when already derived.
 * @internal
 */
export function derivedOf(surface: Surface): Derived | undefined {
  return getDerived(surface);
}

/**
 * Keeps the messages of a surface on it.
 * @internal
 */
export function keepDerived(surface: Surface, derived: Derived): void {
  setDerived(surface, derived);
}

/**
 * The derived messages of the nearest surface this one was folded from,
 * if any were derived: what derivation can extend instead of walking.
 * @internal
 */
export function basisOf(surface: Surface): Derived | undefined {
  return getBasis(surface);
}

/**
 * What a surface folded from `from` derives from: `from`'s own messages, or
 * what `from` itself could derive from.
 * @internal
 */
export function basisFor(from: Surface): Derived | undefined {
  return getDerived(from) ?? getBasis(from);
}

/**
 * The store handle of a surface, owned or as undo writes.
 * @internal
 */
export function refOf(surface: Surface): Ref | undefined {
  return getRef(surface);
}

/**
 * What a surface restored from a checkpoint knows of the log before the
 * events it holds; undefined for a surface folded from its window's start.
 * @internal
 */
export function heldOf(surface: Surface): Held | undefined {
  return getHeld(surface);
}

/**
 * Makes a surface over a store handle and its counters.
 * @internal
 */
export function makeSurface(
  ref: Ref | undefined,
  baseSeq: SessionSeq,
  nextSeq: SessionSeq,
  length: number,
  replacements: number,
  head: SessionSeq | undefined,
  tail: SessionSeq | undefined,
  keepsLog: boolean,
  held: Held | undefined,
  basis?: Derived,
): Surface {
  return construct(
    ref,
    baseSeq,
    nextSeq,
    length,
    replacements,
    head,
    tail,
    keepsLog,
    held,
    basis,
  );
}

/**
 * The ordered projection of a session log onto the events that produce
 * messages, with its window base, next expected seq and replacement count.
 * An immutable value; make one with {@link emptySurface},
 * {@link emptySurfaceAt}, {@link applyEvent} or {@link replay}.
 *
 * @example Reading a surface's counters
 * ```ts
 * import { SessionSeq } from "@palimpsest/session";
 * import { emptySurfaceAt } from "@palimpsest/session/internal";
 * import assert from "node:assert/strict";
 *
 * const surface = emptySurfaceAt(SessionSeq.make(10));
 * assert.equal(surface.nextSeq, 10);
 * assert.equal(surface.length, 0);
 * ```
 */
export class Surface {
  /** The first seq of the window this surface folds. */
  readonly baseSeq: SessionSeq;
  /** The seq the next event must have. */
  readonly nextSeq: SessionSeq;
  /** How many nodes are on the surface. */
  readonly length: number;
  /** How many replacements were folded. */
  readonly replacements: number;
  /** The first node, or undefined when empty. */
  readonly head: SessionSeq | undefined;
  /** The last node, or undefined when empty. */
  readonly tail: SessionSeq | undefined;
  /**
   * Whether the surface keeps every event of its window ({@link logEvent}),
   * or only the events of its current nodes (memory O(surface length)).
   */
  readonly keepsLog: boolean;
  /**
   * The first seq whose event the surface holds: `baseSeq`, unless the
   * surface was restored from a checkpoint, which holds only its nodes
   * and the events from the checkpoint on (and those of work left open).
   */
  readonly heldFrom: SessionSeq;
  readonly #ref: Ref | undefined;
  readonly #held: Held | undefined;
  // A cache, not state: the messages once derived, and the messages of the
  // surface this one was folded from, which derivation extends.
  #derived: Derived | undefined;
  #basis: Derived | undefined;

  private constructor(
    ref: Ref | undefined,
    baseSeq: SessionSeq,
    nextSeq: SessionSeq,
    length: number,
    replacements: number,
    head: SessionSeq | undefined,
    tail: SessionSeq | undefined,
    keepsLog: boolean,
    held: Held | undefined,
    basis: Derived | undefined,
  ) {
    this.#ref = ref;
    this.#held = held;
    this.heldFrom = held === undefined ? baseSeq : seqUnchecked(held.from);
    this.#derived = undefined;
    this.#basis = basis;
    this.keepsLog = keepsLog;
    this.baseSeq = baseSeq;
    this.nextSeq = nextSeq;
    this.length = length;
    this.replacements = replacements;
    this.head = head;
    this.tail = tail;
  }

  static {
    getRef = (surface) => surface.#ref;
    getDerived = (surface) => surface.#derived;
    getBasis = (surface) => surface.#basis;
    getHeld = (surface) => surface.#held;
    setDerived = (surface, derived) => {
      surface.#derived = derived;
      // Its own messages supersede the basis: let the basis go.
      surface.#basis = undefined;
    };
    // Named parameters, not a rest array: one fewer allocation per fold.
    construct = (
      ref,
      baseSeq,
      nextSeq,
      length,
      replacements,
      head,
      tail,
      keepsLog,
      held,
      basis,
    ) =>
      new Surface(
        ref,
        baseSeq,
        nextSeq,
        length,
        replacements,
        head,
        tail,
        keepsLog,
        held,
        basis,
      );
  }
}

/** The store of a surface, rerooted there; undefined for an empty one. */
/** @internal */
export const storeOf = (surface: Surface): Store | undefined => {
  const ref = refOf(surface);
  return ref === undefined ? undefined : reroot(ref);
};

/**
 * The surface of an empty log starting at seq 0.
 *
 * @example Folding from the empty surface
 * ```ts
 * import { emptySurface } from "@palimpsest/session";
 * import { surfaceNodes } from "@palimpsest/session/internal";
 * import assert from "node:assert/strict";
 *
 * assert.equal(emptySurface.nextSeq, 0);
 * assert.deepEqual(surfaceNodes(emptySurface), []);
 * ```
 */
export const emptySurface: Surface = makeSurface(
  undefined,
  seqUnchecked(0),
  seqUnchecked(0),
  0,
  0,
  undefined,
  undefined,
  true,
  undefined,
);

/** Options of {@link emptySurfaceAt}. */
export interface EmptySurfaceOptions {
  /**
   * Keep every event of the window (the default), or only the events of the
   * current nodes, for streaming validation of logs larger than memory.
   */
  readonly keepLog?: boolean;
}

/**
 * The empty surface of a window whose first event has seq `baseSeq`.
 * Replacements may not name seqs below the base; sources below it are
 * accepted unchecked.
 *
 * @param baseSeq The seq of the window's first event.
 * @param options Whether to keep the whole log or only the surface's events.
 * @returns An empty surface expecting `baseSeq` next.
 *
 * @example A window starting at 100
 * ```ts
 * import { SessionSeq } from "@palimpsest/session";
 * import { emptySurfaceAt } from "@palimpsest/session/internal";
 * import assert from "node:assert/strict";
 *
 * assert.equal(emptySurfaceAt(SessionSeq.make(100)).nextSeq, 100);
 * ```
 */
export function emptySurfaceAt(
  baseSeq: SessionSeq,
  options?: EmptySurfaceOptions,
): Surface {
  return makeSurface(
    undefined,
    baseSeq,
    baseSeq,
    0,
    0,
    undefined,
    undefined,
    options?.keepLog ?? true,
    undefined,
  );
}

export function seqUnchecked(n: number): SessionSeq {
  // Only for seqs derived from other seqs by +1 or known constants.
  return n as SessionSeq;
}

// ---------------------------------------------------------------------------
// Reading

/** The origin of a surface's dense slots: `seq - origin` is a slot. */
/** @internal */
export const originOf = (surface: Surface): number =>
  heldOf(surface)?.origin ?? surface.baseSeq;

/** The slot of `seq` in a surface's store; NONE when it has none. */
/** @internal */
export const slotIn = (surface: Surface, seq: number): number =>
  slotOf(heldOf(surface), originOf(surface), seq);

/** True when `seq` is a current node of the store's surface. */
const onSurface = (
  store: Store | undefined,
  surface: Surface,
  seq: number,
): boolean => {
  if (store === undefined || seq < surface.baseSeq || seq >= surface.nextSeq) {
    return false;
  }
  const key = store.key[slotIn(surface, seq)];
  return key !== undefined && key !== NONE;
};

/**
 * The seqs of the surface's nodes, in surface order. O(surface length).
 *
 * @param surface A surface.
 * @returns The node seqs, in order.
 *
 * @example Nodes after an append
 * ```ts
 * import { emptySurface, replay } from "@palimpsest/session";
 * import { decodeEvent } from "@palimpsest/session/schema";
 * import { surfaceNodes } from "@palimpsest/session/internal";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = Effect.runSync(decodeEvent({
 *   type: "user/message", seq: 0, time: 0, surfaceOp: "append",
 *   data: { id: "u0", role: "user", content: [], source: { kind: "user" } },
 * }));
 * const surface = Effect.runSync(replay([event], emptySurface));
 * assert.deepEqual(surfaceNodes(surface), [0]);
 * ```
 */
export function surfaceNodes(surface: Surface): ReadonlyArray<SessionSeq> {
  const out: SessionSeq[] = [];
  forEachNode(surface, (seq) => {
    out.push(seq);
  });
  return out;
}

/**
 * Calls `f` with each node and its event, in surface order.
 * @internal
 */
export function forEachNode(
  surface: Surface,
  f: (seq: SessionSeq, event: SurfaceEvent) => void,
): void {
  walk(surface, (store) => store.events, (seq, event) => {
    if (isSurfaceEvent(event)) f(seq, event);
  });
}

/** Walks the surface list, calling `f` with each node's entry in `column`. */
/** @internal */
export const walk = <T>(
  surface: Surface,
  column: (store: Store) => ReadonlyArray<T | null | undefined>,
  f: (seq: SessionSeq, value: T) => void,
): void => {
  const store = storeOf(surface);
  if (store === undefined || surface.head === undefined) return;
  const held = heldOf(surface);
  const base = originOf(surface);
  const values = column(store);
  const next = store.next;
  let index = slotIn(surface, surface.head);
  // Two loops, so a store with no pinned slot pays nothing for them.
  if (held === undefined) {
    for (let n = surface.length; n > 0; n--) {
      const value = values[index];
      if (value !== null && value !== undefined) {
        f(seqUnchecked(index + base), value);
      }
      index = next[index] ?? NONE;
    }
    return;
  }
  for (let n = surface.length; n > 0; n--) {
    const value = values[index];
    if (value !== null && value !== undefined) {
      f(seqUnchecked(seqOfSlot(held, base, index)), value);
    }
    index = next[index] ?? NONE;
  }
};

/**
 * Calls `f` with each node that derives a message, in surface order.
 * @internal
 */
export function forEachMessage(
  surface: Surface,
  f: (seq: SessionSeq, message: Message) => void,
): void {
  walk(surface, (store) => store.messages, f);
}

/**
 * The event of a current surface node.
 *
 * @param surface A surface.
 * @param seq A seq.
 * @returns The node's event, or undefined when `seq` is not on the surface.
 *
 * @example Looking a node up
 * ```ts
 * import { emptySurface, SessionSeq } from "@palimpsest/session";
 * import { surfaceEvent } from "@palimpsest/session/internal";
 * import assert from "node:assert/strict";
 *
 * assert.equal(surfaceEvent(emptySurface, SessionSeq.make(0)), undefined);
 * ```
 */
export function surfaceEvent(
  surface: Surface,
  seq: SessionSeq,
): SurfaceEvent | undefined {
  const store = storeOf(surface);
  if (!onSurface(store, surface, seq) || store === undefined) return undefined;
  const event = store.events[slotIn(surface, seq)];
  return event !== undefined && isSurfaceEvent(event) ? event : undefined;
}

/**
 * Any event of the surface's window, on the surface or not.
 *
 * @param surface A surface.
 * @param seq A seq.
 * @returns The event folded at `seq`, or undefined outside the window (or,
 * on a surface that does not keep its log, when `seq` is off the surface).
 *
 * @example Outside the window
 * ```ts
 * import { emptySurface, SessionSeq } from "@palimpsest/session";
 * import { logEvent } from "@palimpsest/session/internal";
 * import assert from "node:assert/strict";
 *
 * assert.equal(logEvent(emptySurface, SessionSeq.make(3)), undefined);
 * ```
 */
export function logEvent(
  surface: Surface,
  seq: SessionSeq,
): SessionEvent | undefined {
  if (seq < surface.baseSeq || seq >= surface.nextSeq) return undefined;
  const store = storeOf(surface);
  return store?.events[slotIn(surface, seq)];
}

/**
 * Calls `f` with each event of the window, in seq order.
 * @internal
 */
export function forEachLogEvent(
  surface: Surface,
  f: (event: SessionEvent) => void,
): void {
  const store = storeOf(surface);
  if (store === undefined) return;
  const count = surface.nextSeq - originOf(surface);
  for (let i = slotIn(surface, surface.heldFrom); i < count; i++) {
    const event = store.events[i];
    if (event !== undefined) f(event);
  }
}

/**
 * The events of the window from `fromSeq` on (the base by default), in seq
 * order: the log is indexed by seq, so this costs the events returned.
 * @internal
 */
export function logEventsFrom(
  surface: Surface,
  fromSeq?: number,
): SessionEvent[] {
  const out: SessionEvent[] = [];
  const store = storeOf(surface);
  if (store === undefined) return out;
  const origin = originOf(surface);
  const count = surface.nextSeq - origin;
  const start = fromSeq === undefined || fromSeq <= surface.heldFrom
    ? surface.heldFrom - origin
    : Math.ceil(fromSeq - origin);
  for (let i = start; i < count; i++) {
    const event = store.events[i];
    if (event !== undefined) out.push(event);
  }
  return out;
}
