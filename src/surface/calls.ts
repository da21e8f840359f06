/**
 * The open tool calls of a surface's store (`Store.calls`): each call id an
 * `assistant/message` issued that no `tool/result` folded after it has
 * answered, with the slot of that message (a later message issuing the
 * same id takes the id over). The fold keeps them as it goes, so that a
 * replacement's check costs the blocks of its range, not a scan of the log:
 * a replacement may not shadow a message with an open call.
 *
 * @module
 * @internal
 */
import type { SurfaceEvent } from "../event.ts";
import type { SessionSeq } from "../seq.ts";
import { NONE, seqOfSlot, type Store, type Writes } from "./store.ts";
import {
  heldOf,
  originOf,
  seqUnchecked,
  storeOf,
  type Surface,
} from "./surface.ts";

/**
 * Keeps the open calls for a surface event at slot `index`: an
 * `assistant/message` opens each of its tool calls there, a `tool/result`
 * closes its call. Each change is pushed on `writes` as a (map, key,
 * previous value) triple when `writes` is given. Any other event costs one
 * type test.
 */
export const trackCalls = (
  calls: Map<string, number>,
  event: SurfaceEvent,
  index: number,
  writes: Writes | undefined,
): void => {
  if (event.type === "tool/result") {
    const id = event.data.message.content[0].toolCallId;
    const open = calls.get(id);
    if (open === undefined) return;
    if (writes !== undefined) writes.push(calls, id, open);
    calls.delete(id);
    return;
  }
  if (event.type !== "assistant/message") return;
  for (const block of event.data.message.content) {
    if (block.type !== "tool-call") continue;
    if (writes !== undefined) writes.push(calls, block.id, calls.get(block.id));
    calls.set(block.id, index);
  }
};

/**
 * The first `assistant/message` of a replaced range (slots, in surface
 * order) with open calls, and those calls in block order: O(blocks of the
 * range's assistant messages), one map lookup each.
 */
export const unansweredIn = (
  store: Store,
  range: ReadonlyArray<number>,
  seqOf: (slot: number) => SessionSeq,
):
  | { readonly callSeq: SessionSeq; readonly callIds: string[] }
  | undefined => {
  const calls = store.calls;
  if (calls.size === 0) return undefined;
  for (const i of range) {
    const event = store.events[i];
    if (event === undefined || event.type !== "assistant/message") continue;
    let open: string[] | undefined;
    for (const block of event.data.message.content) {
      if (block.type === "tool-call" && calls.get(block.id) === i) {
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
  for (const [id, slot] of store.calls) {
    const key = store.key[slot];
    if (key === undefined || key === NONE) continue;
    out.push([id, seqUnchecked(seqOfSlot(held, origin, slot))]);
  }
  return out;
};
