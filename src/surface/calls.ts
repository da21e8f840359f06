/**
 * The open tool calls of a surface's store: each call id an
 * `assistant/message` issued that no `tool/result` folded after it has
 * answered, with the slot of that message (a later message issuing the
 * same id takes the id over). The fold keeps them as it goes, so that a
 * replacement's check costs the blocks of its range, not a scan of the log:
 * a replacement may not shadow a message with an open call.
 *
 * Two places hold them. The calls of the latest `assistant/message` with
 * calls wait in `Store.pendingIds` (its slot and their count in
 * `Store.pendingAt`), a small array, because nearly every result
 * answers a call of the message just before it: answering one there is a
 * string comparison and no hashing. When a later message issues calls, the
 * ones still open move into `Store.calls`, a map by id. A workload whose
 * calls are answered in turn never writes the map.
 *
 * @module
 * @internal
 */
import type { SurfaceEvent } from "../core/event.ts";
import type { Message } from "../core/message.ts";
import type { SessionSeq } from "../core/seq.ts";
import {
  NONE,
  seqOfSlot,
  type Store,
  type Writes,
} from "./persistent_arrays.ts";
import {
  heldOf,
  originOf,
  seqUnchecked,
  storeOf,
  type Surface,
} from "./surface.ts";

const put = <T>(
  writes: Writes | undefined,
  array: Array<T>,
  index: number,
  value: T,
): void => {
  if (writes !== undefined) writes.push(array, index, array[index]);
  array[index] = value;
};

/** Closes `id` in the pending calls; false when none of them is `id`. */
const answerPending = (
  store: Store,
  id: string,
  writes: Writes | undefined,
): boolean => {
  const ids = store.pendingIds;
  const count = store.pendingAt[1] ?? 0;
  let found = false;
  // Every match: a message that issued one id twice has it answered once.
  for (let k = 0; k < count; k++) {
    if (ids[k] === id) {
      put(writes, ids, k, null);
      found = true;
    }
  }
  return found;
};

/** Moves the pending calls still open into the map. */
const spill = (store: Store, writes: Writes | undefined): void => {
  const { pendingIds: ids, pendingAt: at, calls } = store;
  const slot = at[0] ?? NONE;
  const count = at[1] ?? 0;
  for (let k = 0; k < count; k++) {
    const id = ids[k];
    if (id === null || id === undefined) continue;
    if (writes !== undefined) writes.push(calls, id, calls.get(id));
    calls.set(id, slot);
  }
};

/** Whether `id` is among the first `count` pending ids (one message's, twice). */
const issuedBefore = (
  ids: ReadonlyArray<string | null>,
  count: number,
  id: string,
): boolean => {
  for (let k = 0; k < count; k++) if (ids[k] === id) return true;
  return false;
};

/**
 * Keeps the open calls for a surface event at slot `index`, given its type
 * and the message it projects (`projectEvent`, which the fold computes
 * anyway): an `assistant/message` opens each of its tool calls there, a
 * `tool/result` closes its call. Each change is pushed on `writes` as an
 * (array, index, previous value) or (map, key, previous value) triple when
 * `writes` is given. Any other event costs one type test.
 */
export const trackCalls = (
  store: Store,
  type: SurfaceEvent["type"],
  message: Message | null,
  index: number,
  writes: Writes | undefined,
): void => {
  if (message === null) return;
  if (type === "tool/result") {
    const block = message.content[0];
    if (block === undefined || block.type !== "tool-result") return;
    const id = block.toolCallId;
    if (answerPending(store, id, writes)) return;
    const calls = store.calls;
    if (calls.size === 0) return;
    const open = calls.get(id);
    if (open === undefined) return;
    if (writes !== undefined) writes.push(calls, id, open);
    calls.delete(id);
    return;
  }
  if (type !== "assistant/message") return;
  const content = message.content;
  let first = 0;
  while (first < content.length && content[first]?.type !== "tool-call") {
    first++;
  }
  if (first === content.length) return;
  spill(store, writes);
  const { pendingIds: ids, calls } = store;
  let count = 0;
  for (let b = first; b < content.length; b++) {
    const block = content[b];
    if (block === undefined || block.type !== "tool-call") continue;
    const id = block.id;
    // This message takes the id over from an older one.
    if (calls.size !== 0 && calls.has(id)) {
      if (writes !== undefined) writes.push(calls, id, calls.get(id));
      calls.delete(id);
    }
    if (!issuedBefore(ids, count, id)) put(writes, ids, count++, id);
  }
  put(writes, store.pendingAt, 0, index);
  put(writes, store.pendingAt, 1, count);
};

/** Whether `id` is a pending call of the message at `slot`. */
const pendingOpen = (store: Store, slot: number, id: string): boolean =>
  store.pendingAt[0] === slot &&
  issuedBefore(store.pendingIds, store.pendingAt[1] ?? 0, id);

/** Whether any pending call is open. */
const anyPending = (store: Store): boolean => {
  const count = store.pendingAt[1] ?? 0;
  for (let k = 0; k < count; k++) {
    if (typeof store.pendingIds[k] === "string") return true;
  }
  return false;
};

/**
 * The first `assistant/message` of a replaced range (slots, in surface
 * order) with open calls, and those calls in block order: O(blocks of the
 * range's assistant messages), one lookup each.
 */
export const unansweredIn = (
  store: Store,
  range: ReadonlyArray<number>,
  seqOf: (slot: number) => SessionSeq,
):
  | { readonly callSeq: SessionSeq; readonly callIds: string[] }
  | undefined => {
  const calls = store.calls;
  if (calls.size === 0 && !anyPending(store)) return undefined;
  for (const i of range) {
    const event = store.events[i];
    if (event === undefined || event.type !== "assistant/message") continue;
    let open: string[] | undefined;
    for (const block of event.data.message.content) {
      if (
        block.type === "tool-call" &&
        (calls.get(block.id) === i || pendingOpen(store, i, block.id))
      ) {
        (open ??= []).push(block.id);
      }
    }
    if (open !== undefined) return { callSeq: seqOf(i), callIds: open };
  }
  return undefined;
};

/**
 * The open calls of the surface's nodes, as (call id, message seq) pairs:
 * what a surface rebuilt without the log before its nodes must be told.
 * O(open calls).
 */
export const openCallsOf = (
  surface: Surface,
): Array<readonly [string, SessionSeq]> => {
  const store = storeOf(surface);
  const out: Array<readonly [string, SessionSeq]> = [];
  if (store === undefined) return out;
  const held = heldOf(surface);
  const origin = originOf(surface);
  const onSurface = (slot: number): boolean => {
    const key = store.key[slot];
    return key !== undefined && key !== NONE;
  };
  for (const [id, slot] of store.calls) {
    if (onSurface(slot)) {
      out.push([id, seqUnchecked(seqOfSlot(held, origin, slot))]);
    }
  }
  const slot = store.pendingAt[0] ?? NONE;
  if (slot !== NONE && onSurface(slot)) {
    const at = seqUnchecked(seqOfSlot(held, origin, slot));
    const count = store.pendingAt[1] ?? 0;
    for (let k = 0; k < count; k++) {
      const id = store.pendingIds[k];
      if (typeof id === "string") out.push([id, at]);
    }
  }
  return out;
};
