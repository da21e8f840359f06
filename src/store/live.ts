/**
 * What running operations of this process hold open on a write handle: the
 * turns `runTurn` is running and the compactions `compactIfNeeded` is
 * running. A `turn/start` or `compaction/start` without its end is either
 * abandoned (its process died, or its fiber was stopped before the release
 * step) or live (its operation is still running in this process: the
 * writer claim rules out any other process). Repair closes only what is
 * abandoned; the turn loop and the compaction engine refuse to start inside
 * live work.
 *
 * The record is kept per handle object, outside the handle's own state, so
 * every store layer has it without storing anything: it lives exactly as
 * long as the operations that hold it (a scoped acquire and release).
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import type { LiveWork } from "../session/repair.ts";
import type { SessionSeq } from "../core/seq.ts";
import type { SessionHandle } from "./store.ts";

interface Held {
  readonly turns: Map<number, SessionSeq>;
  readonly compactions: Map<string, SessionSeq>;
}

const held = new WeakMap<SessionHandle, Held>();

const of = (handle: SessionHandle): Held => {
  let work = held.get(handle);
  if (work === undefined) {
    work = { turns: new Map(), compactions: new Map() };
    held.set(handle, work);
  }
  return work;
};

/** A piece of live work: its key and the seq of its start. */
export interface Holder<K> {
  /** The turn number or compaction id. */
  readonly key: K;
  /** The seq its start has or will have. */
  readonly startSeq: SessionSeq;
}

/**
 * Takes `key` in `map` until the scope closes, unless the map holds
 * something already: then nothing is taken and the holder is returned.
 * The check and the take are one synchronous step, so two fibers cannot
 * both take.
 */
const take = <K>(
  map: Map<K, SessionSeq>,
  key: K,
  startSeq: SessionSeq,
): Effect.Effect<Holder<K> | undefined, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync((): Holder<K> | undefined => {
      for (const [k, seq] of map) return { key: k, startSeq: seq };
      map.set(key, startSeq);
      return undefined;
    }),
    (refused) =>
      Effect.sync(() => {
        if (refused === undefined) map.delete(key);
      }),
  );

/**
 * What running operations hold on a handle now.
 * @internal
 */
export const liveWork = (handle: SessionHandle): LiveWork => {
  const work = held.get(handle);
  return {
    turns: new Set(work?.turns.keys()),
    compactions: new Set(work?.compactions.keys()),
  };
};

/**
 * Marks a turn as run by this process until the scope closes; refused
 * (the running turn returned) while another turn runs on the handle.
 * @internal
 */
export const holdTurn = (
  handle: SessionHandle,
  turn: number,
  startSeq: SessionSeq,
): Effect.Effect<Holder<number> | undefined, never, Scope.Scope> =>
  take(of(handle).turns, turn, startSeq);

/**
 * Marks a compaction as run by this process until the scope closes;
 * refused (the running one returned) while another compaction runs on the
 * handle.
 * @internal
 */
export const holdCompaction = (
  handle: SessionHandle,
  compactionId: string,
  startSeq: SessionSeq,
): Effect.Effect<Holder<string> | undefined, never, Scope.Scope> =>
  take(of(handle).compactions, compactionId, startSeq);
