/**
 * One event applied on its own (an appending session) on a surface folded
 * from its window's start, when it appends a node or only advances the log:
 * the writes the fold's `step` and `finish` would make, without a cursor,
 * and the undo writes in one array made at its final length. No relational
 * rule applies to either; `applyEventResult` (`fold.ts`) chooses this path
 * after checking the seq.
 *
 * @module
 * @internal
 */
import type { SessionEvent, SurfaceEvent } from "../core/event.ts";
import { projectEvent } from "./project.ts";
import { trackCalls } from "./calls.ts";
import { noteWork } from "./open_work.ts";
import {
  newStore,
  NONE,
  Ref,
  reroot,
  type Store,
  type Writes,
} from "./persistent_arrays.ts";
import {
  basisFor,
  makeSurface,
  refOf,
  seqUnchecked,
  type Surface,
} from "./surface.ts";

/** Makes a new version own the store, leaving `writes` to get back. */
const handOver = (
  ref: Ref | undefined,
  store: Store,
  writes: Writes,
): Ref => {
  const owner = new Ref(store);
  if (ref !== undefined) {
    ref.store = undefined;
    ref.writes = writes;
    ref.next = owner;
  }
  return owner;
};

/**
 * A log-only (or opaque) event: the log keeps it, the nodes stay.
 * @internal
 */
export const advance = (surface: Surface, event: SessionEvent): Surface => {
  const ref = refOf(surface);
  const store = ref === undefined ? newStore() : reroot(ref);
  let writes: Writes = [];
  if (surface.keepsLog) {
    const events = store.events;
    const index = event.seq - surface.baseSeq;
    writes = [events, index, events[index]];
    events[index] = event;
    noteWork(store, event.seq, event.type, writes);
  }
  return makeSurface(
    handOver(ref, store, writes),
    surface.baseSeq,
    seqUnchecked(event.seq + 1),
    surface.length,
    surface.replacements,
    surface.head,
    surface.tail,
    surface.keepsLog,
    undefined,
    basisFor(surface),
  );
};

/**
 * A surface event appended at the tail.
 * @internal
 */
export const appendNode = (surface: Surface, event: SurfaceEvent): Surface => {
  const ref = refOf(surface);
  const store = ref === undefined ? newStore() : reroot(ref);
  const { events, messages, key, prev, next } = store;
  const base = surface.baseSeq;
  const seq = event.seq;
  const index = seq - base;
  const tail = surface.tail === undefined ? NONE : surface.tail - base;
  // The tail's link is the last write; without a tail it repeats the new
  // node's (undoing the same write twice is undoing it once).
  const linked = tail === NONE ? index : tail;
  const writes: Writes = [
    events,
    index,
    events[index],
    messages,
    index,
    messages[index],
    key,
    index,
    key[index],
    prev,
    index,
    prev[index],
    next,
    index,
    next[index],
    next,
    linked,
    next[linked],
  ];
  events[index] = event;
  const message = projectEvent(event) ?? null;
  messages[index] = message;
  key[index] = seq;
  prev[index] = tail;
  next[index] = NONE;
  if (tail !== NONE) next[tail] = index;
  trackCalls(store, event.type, message, index, writes);
  return makeSurface(
    handOver(ref, store, writes),
    base,
    seqUnchecked(seq + 1),
    surface.length + 1,
    surface.replacements,
    tail === NONE ? seq : surface.head,
    seq,
    surface.keepsLog,
    undefined,
    basisFor(surface),
  );
};
