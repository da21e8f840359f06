/**
 * The fold: {@link applyEvent} checks one event's relational rules and
 * returns the next {@link Surface}; {@link replay} folds many. The input
 * surface is never changed, on success or failure: the fold writes into the
 * persistent store (`store.ts`) and records the writes that take it back.
 * One event applied on its own (an appending session) that appends a node
 * or only advances the log, on a surface folded from its window's start,
 * skips the fold's cursor: the same writes, made directly (`append_one.ts`).
 *
 * This module owns the relational rules. Shapes were checked by the decoder.
 *
 * @module
 */
import type * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import type { SessionSeq } from "../core/seq.ts";
import type { Message } from "../core/message.ts";
import type {
  ReplaceOp,
  RewindOp,
  SessionEvent,
  SurfaceEvent,
  ToolResultEvent,
} from "../core/event.ts";
import { eventTypeName, isSurfaceEvent } from "../core/event.ts";
import {
  NonContiguousSeq,
  ReplaceEndNotOnSurface,
  ReplaceRangeInverted,
  ReplaceShadowsUnansweredCall,
  ReplaceStartNotOnSurface,
  RewindNotHeld,
  ShadowedNodeNotCited,
  type SurfaceError,
  SystemHeadExists,
  SystemHeadProtected,
  ToolResultReplaceChangesMoreThanContent,
  ToolResultReplaceNotSingle,
  ToolResultReplaceTargetNotToolResult,
} from "../core/errors.ts";
import { jsonDiff, type JsonPath } from "../core/json_diff.ts";
import { lazyCall, lazyExit } from "../core/lazy_exit.ts";
import { projectEvent } from "./project.ts";
import { advance, appendNode } from "./append_one.ts";
import { trackCalls, unansweredIn } from "./calls.ts";
import { checkCited, planned, planOn } from "./rewind.ts";
import { noteWork } from "./open_work.ts";
import {
  type Held,
  newStore,
  NONE,
  Ref,
  reroot,
  seqOfSlot,
  slotOf,
  type Store,
  type Writes,
} from "./persistent_arrays.ts";
import {
  basisFor,
  emptySurface,
  heldOf,
  makeSurface,
  refOf,
  seqUnchecked,
  type Surface,
} from "./surface.ts";

/** Mutable fold state while applying events to one store. */
interface Cursor {
  store: Store;
  keepLog: boolean;
  writes: Writes | undefined;
  /** The origin of the dense slots: the slot of seq `s >= held.from` is `s - base`. */
  base: number;
  /** Set for a surface restored from a checkpoint. */
  held: Held | undefined;
  next: number;
  length: number;
  replacements: number;
  head: number;
  tail: number;
  /** Accept a replacement that shadows an open call (a stored log's). */
  stored: boolean;
  /**
   * Set once a rewind is folded: the messages derived before it are no
   * basis for the surface after it (nodes came back that the order keys
   * of those messages cannot place).
   */
  rewound: boolean;
  /** The surface the cursor started from: a rewind folded first onto it may reuse its plan. */
  from: Surface;
}

/** How a fold treats its events. */
export interface FoldOptions {
  /**
   * The events are a stored log, read back: a replacement that shadows an
   * unanswered tool call (`ReplaceShadowsUnansweredCall`), which versions
   * before the rule appended, is accepted so that such logs stay readable.
   * Every other rule is checked. Off by default: events being appended
   * are held to every rule.
   */
  readonly stored?: boolean;
}

const write = <T>(
  cursor: Cursor,
  array: T[],
  index: number,
  value: T,
): void => {
  if (cursor.writes !== undefined) {
    cursor.writes.push(array, index, array[index]);
  }
  array[index] = value;
};

const cursorOf = (
  surface: Surface,
  record: boolean,
  stored: boolean,
): Cursor => {
  const ref = refOf(surface);
  const store = ref === undefined ? newStore() : reroot(ref);
  const held = heldOf(surface);
  const base = held === undefined ? surface.baseSeq : held.origin;
  return {
    store,
    keepLog: surface.keepsLog,
    writes: ref !== undefined && record ? [] : undefined,
    base,
    held,
    next: surface.nextSeq,
    length: surface.length,
    replacements: surface.replacements,
    head: surface.head === undefined ? NONE : slotOf(held, base, surface.head),
    tail: surface.tail === undefined ? NONE : slotOf(held, base, surface.tail),
    stored,
    rewound: false,
    from: surface,
  };
};

const writeCall = (
  cursor: Cursor,
  event: SurfaceEvent,
  message: Message | null,
  index: number,
): void => trackCalls(cursor.store, event.type, message, index, cursor.writes);

/** The seq of a slot. */
const seqAt = (cursor: Cursor, slot: number): SessionSeq =>
  seqUnchecked(seqOfSlot(cursor.held, cursor.base, slot));

const finish = (surface: Surface, cursor: Cursor): Surface => {
  const ref = refOf(surface);
  const owner = new Ref(cursor.store);
  if (ref !== undefined) {
    ref.store = undefined;
    ref.writes = cursor.writes ?? [];
    ref.next = owner;
  }
  return makeSurface(
    owner,
    surface.baseSeq,
    seqUnchecked(cursor.next),
    cursor.length,
    cursor.replacements,
    cursor.head === NONE ? undefined : seqAt(cursor, cursor.head),
    cursor.tail === NONE ? undefined : seqAt(cursor, cursor.tail),
    surface.keepsLog,
    cursor.held,
    cursor.rewound ? undefined : basisFor(surface),
  );
};

const TOOL_RESULT_CONTENT: ReadonlyArray<string | number> = [
  "message",
  "content",
  0,
  "content",
];

/** Compares two tool results' data, ignoring the block's inner content. */
const toolResultChange = (
  before: ToolResultEvent,
  after: ToolResultEvent,
): JsonPath | undefined =>
  jsonDiff(before.data, after.data, TOOL_RESULT_CONTENT);

const checkReplace = (
  cursor: Cursor,
  event: SurfaceEvent,
  op: ReplaceOp,
): SurfaceError | number[] => {
  const { store, base, held } = cursor;
  const seq = event.seq;
  const startIndex = slotOf(held, base, op.startSeq);
  const endIndex = slotOf(held, base, op.endSeq);
  const startKey = startIndex >= 0 ? store.key[startIndex] : undefined;
  if (startKey === undefined || startKey === NONE) {
    return new ReplaceStartNotOnSurface({ seq, startSeq: op.startSeq });
  }
  const endKey = endIndex >= 0 ? store.key[endIndex] : undefined;
  if (endKey === undefined || endKey === NONE) {
    return new ReplaceEndNotOnSurface({ seq, endSeq: op.endSeq });
  }
  if (startKey > endKey) {
    return new ReplaceRangeInverted({
      seq,
      startSeq: op.startSeq,
      endSeq: op.endSeq,
    });
  }
  const range: number[] = [];
  for (let i = startIndex;; i = store.next[i] ?? NONE) {
    if (i === NONE) break;
    range.push(i);
    if (i === endIndex) break;
  }
  const sources = event.sourceEventSeqs ?? [];
  const cited = sources.length > 16 ? new Set<number>(sources) : undefined;
  let missing: SessionSeq[] | undefined;
  for (const i of range) {
    const at = seqUnchecked(seqOfSlot(held, base, i));
    if (cited === undefined ? !sources.includes(at) : !cited.has(at)) {
      (missing ??= []).push(at);
    }
  }
  if (missing !== undefined) return new ShadowedNodeNotCited({ seq, missing });
  if (event.type === "tool/result") {
    if (range.length !== 1) {
      return new ToolResultReplaceNotSingle({ seq, rangeLength: range.length });
    }
    const target = store.events[startIndex];
    if (target === undefined || target.type !== "tool/result") {
      return new ToolResultReplaceTargetNotToolResult({
        seq,
        target: op.startSeq,
        targetType: target === undefined ? "unknown" : eventTypeName(target),
      });
    }
    const path = toolResultChange(
      target,
      event,
    );
    if (path !== undefined) {
      return new ToolResultReplaceChangesMoreThanContent({
        seq,
        target: op.startSeq,
        path,
      });
    }
  }
  if (startIndex === cursor.head) {
    const head = store.events[startIndex];
    if (
      head !== undefined && head.type === "system/message" &&
      !(event.type === "system/message" && startIndex === endIndex)
    ) {
      return new SystemHeadProtected({ seq, head: op.startSeq });
    }
  }
  if (!cursor.stored) {
    const unanswered = unansweredIn(
      cursor.store,
      range,
      (slot) => seqAt(cursor, slot),
    );
    if (unanswered !== undefined) {
      return new ReplaceShadowsUnansweredCall({ seq, ...unanswered });
    }
  }
  return range;
};

/**
 * Folds an event carrying a rewind: checks the plan (`rewind.ts`) and the
 * cited sources, then relinks the restored nodes, takes the others off and
 * appends the event at the tail. Restored nodes get fresh order keys from
 * the base up (below every seq after the point), in surface order.
 */
const rewind = (
  cursor: Cursor,
  event: SurfaceEvent,
  op: RewindOp,
): SurfaceError | undefined => {
  const { store, base } = cursor;
  if (cursor.held !== undefined || !cursor.keepLog || op.toSeq < base) {
    return new RewindNotHeld({
      seq: event.seq,
      toSeq: op.toSeq,
      heldFrom: seqUnchecked(
        cursor.keepLog ? cursor.held?.from ?? base : cursor.next,
      ),
    });
  }
  // `rewind` planned on the surface this event folds onto: the same plan.
  const plan =
    (event.seq === cursor.from.nextSeq
      ? planned(cursor.from, op.toSeq)
      : undefined) ?? planOn(
        {
          store,
          base,
          head: cursor.head,
          length: cursor.length,
          next: cursor.next,
        },
        event.seq,
        op.toSeq,
      );
  if (!("restored" in plan)) return plan;
  const mismatch = checkCited(event, op.toSeq, plan.takenOff);
  if (mismatch !== undefined) return mismatch;
  for (const seq of plan.takenOff) write(cursor, store.key, seq - base, NONE);
  const index = cursor.next - base;
  let before = NONE;
  for (let j = 0; j < plan.restored.length; j++) {
    const slot = (plan.restored[j] ?? 0) - base;
    write(cursor, store.key, slot, base + j);
    write(cursor, store.prev, slot, before);
    if (before !== NONE) write(cursor, store.next, before, slot);
    before = slot;
  }
  write(cursor, store.events, index, event);
  const message = projectEvent(event) ?? null;
  write(cursor, store.messages, index, message);
  write(cursor, store.key, index, index + base);
  write(cursor, store.prev, index, before);
  write(cursor, store.next, index, NONE);
  if (before === NONE) cursor.head = index;
  else {
    write(cursor, store.next, before, index);
    cursor.head = (plan.restored[0] ?? 0) - base;
  }
  cursor.tail = index;
  // The restored surface pairs every call: none is open.
  for (const [id, slot] of store.calls) {
    if (cursor.writes !== undefined) cursor.writes.push(store.calls, id, slot);
  }
  store.calls.clear();
  write(cursor, store.pendingAt, 1, 0);
  writeCall(cursor, event, message, index);
  write(cursor, store.tips, index, plan.current);
  const count = store.rewindCount[0] ?? 0;
  write(cursor, store.rewinds, count, event.seq);
  write(cursor, store.rewindCount, 0, count + 1);
  cursor.length = plan.restored.length + 1;
  cursor.rewound = true;
  cursor.next++;
  return undefined;
};

/** Applies one event to the cursor; returns an error and changes nothing on failure. */
const step = (
  cursor: Cursor,
  event: SessionEvent,
): SurfaceError | undefined => {
  if (event.seq !== cursor.next) {
    return new NonContiguousSeq({
      expected: seqUnchecked(cursor.next),
      actual: event.seq,
    });
  }
  const { store } = cursor;
  const index = cursor.next - cursor.base;
  if (!isSurfaceEvent(event)) {
    if (cursor.keepLog) {
      write(cursor, store.events, index, event);
      noteWork(store, event.seq, event.type, cursor.writes);
    }
    cursor.next++;
    return undefined;
  }
  const op = event.surfaceOp;
  if (op === "append") {
    write(cursor, store.events, index, event);
    const message = projectEvent(event) ?? null;
    write(cursor, store.messages, index, message);
    write(cursor, store.key, index, index + cursor.base);
    write(cursor, store.prev, index, cursor.tail);
    write(cursor, store.next, index, NONE);
    if (cursor.tail === NONE) cursor.head = index;
    else write(cursor, store.next, cursor.tail, index);
    cursor.tail = index;
    writeCall(cursor, event, message, index);
    cursor.length++;
    cursor.next++;
    return undefined;
  }
  if (op === "prepend") {
    const head = cursor.head;
    if (head !== NONE && store.events[head]?.type === "system/message") {
      return new SystemHeadExists({
        seq: event.seq,
        head: seqAt(cursor, head),
      });
    }
    // Order keys only compare: half a step before the head's key stands
    // before every node. Only one prepend can ever land (the head is then
    // a system/message, which nothing but a system/message may replace).
    const headKey = head === NONE ? NONE : store.key[head] ?? NONE;
    write(cursor, store.events, index, event);
    const message = projectEvent(event) ?? null;
    write(cursor, store.messages, index, message);
    write(
      cursor,
      store.key,
      index,
      headKey === NONE ? index + cursor.base : headKey - 0.5,
    );
    write(cursor, store.prev, index, NONE);
    write(cursor, store.next, index, head);
    if (head === NONE) cursor.tail = index;
    else write(cursor, store.prev, head, index);
    cursor.head = index;
    writeCall(cursor, event, message, index);
    cursor.length++;
    cursor.next++;
    return undefined;
  }
  if (op.op === "rewind") return rewind(cursor, event, op);
  const checked = checkReplace(cursor, event, op);
  if (!Array.isArray(checked)) return checked;
  const first = slotOf(cursor.held, cursor.base, op.startSeq);
  const last = slotOf(cursor.held, cursor.base, op.endSeq);
  const before = store.prev[first] ?? NONE;
  const after = store.next[last] ?? NONE;
  const key = store.key[first] ?? NONE;
  for (const i of checked) {
    write(cursor, store.key, i, NONE);
    if (!cursor.keepLog) {
      // Off the surface for good in this version: let its event and
      // message go (an older version gets them back through its writes).
      write(cursor, store.events, i, undefined);
      write(cursor, store.messages, i, null);
    }
  }
  write(cursor, store.events, index, event);
  const message = projectEvent(event) ?? null;
  write(cursor, store.messages, index, message);
  write(cursor, store.key, index, key);
  write(cursor, store.prev, index, before);
  write(cursor, store.next, index, after);
  if (before === NONE) cursor.head = index;
  else write(cursor, store.next, before, index);
  if (after === NONE) cursor.tail = index;
  else write(cursor, store.prev, after, index);
  writeCall(cursor, event, message, index);
  write(
    cursor,
    store.ranges,
    index,
    checked.map((slot) => seqOfSlot(cursor.held, cursor.base, slot)),
  );
  cursor.length += 1 - checked.length;
  cursor.replacements++;
  cursor.next++;
  return undefined;
};

/**
 * Applies one event synchronously. The same as {@link applyEvent}, as a
 * `Result`.
 *
 * @param surface The surface before the event.
 * @param event A decoded event.
 * @param options Whether the event is read back from a stored log.
 * @returns The next surface, or the first relational rule the event breaks.
 *
 * @example A gap in seqs
 * ```ts
 * import { emptySurface } from "@palimpsest/session";
 * import { applyEventResult } from "@palimpsest/session/internal";
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = Result.getOrThrow(decodeEventResult({ type: "turn/start", seq: 1, time: 0, data: { turn: 0 } }));
 * const result = applyEventResult(emptySurface, event);
 * assert.equal(Result.isFailure(result) && result.failure._tag, "NonContiguousSeq");
 * ```
 */
export function applyEventResult(
  surface: Surface,
  event: SessionEvent,
  options?: FoldOptions,
): Result.Result<Surface, SurfaceError> {
  if (event.seq !== surface.nextSeq) {
    return Result.fail(
      new NonContiguousSeq({ expected: surface.nextSeq, actual: event.seq }),
    );
  }
  if (heldOf(surface) === undefined) {
    if (!isSurfaceEvent(event)) return Result.succeed(advance(surface, event));
    if (event.surfaceOp === "append") {
      return Result.succeed(appendNode(surface, event));
    }
  }
  const cursor = cursorOf(surface, true, options?.stored === true);
  const error = step(cursor, event);
  if (error !== undefined) return Result.fail(error);
  return Result.succeed(finish(surface, cursor));
}

/**
 * Applies one decoded event to a surface, checking the relational rules in
 * order: `NonContiguousSeq`, `ReplaceStartNotOnSurface`,
 * `ReplaceEndNotOnSurface`, `ReplaceRangeInverted`, `ShadowedNodeNotCited`,
 * `ToolResultReplaceNotSingle`, `ToolResultReplaceTargetNotToolResult`,
 * `ToolResultReplaceChangesMoreThanContent`, `SystemHeadProtected`,
 * `ReplaceShadowsUnansweredCall`; `SystemHeadExists` for a prepend.
 *
 * An unanswered call is a `tool-call` block of an `assistant/message` that
 * no `tool/result` naming its id answered in an event after that message
 * (a later message issuing the same id takes the call over). The fold
 * keeps the open calls as it goes, so the check costs the range's blocks.
 *
 * Append puts the event at the tail; prepend (a `system/message` only)
 * before the head; replace takes the place of its range;
 * log-only and opaque events only advance the expected seq. The input
 * surface is never changed, on success or failure.
 *
 * @param surface The surface before the event.
 * @param event A decoded event.
 * @returns `Effect<Surface, SurfaceError>`.
 *
 * @example Replacing a node
 * ```ts
 * import { applyEvent, emptySurface } from "@palimpsest/session";
 * import { decodeEvent } from "@palimpsest/session/schema";
 * import { surfaceNodes } from "@palimpsest/session/internal";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const user = (seq: number, extra: object) => ({
 *   type: "user/message", seq, time: 0,
 *   data: { id: `u${seq}`, role: "user", content: [{ type: "text", text: "t" }], source: { kind: "user" } },
 *   ...extra,
 * });
 * const program = Effect.gen(function* () {
 *   const a = yield* decodeEvent(user(0, { surfaceOp: "append" }));
 *   const b = yield* decodeEvent(user(1, {
 *     surfaceOp: { op: "replace", startSeq: 0, endSeq: 0 }, sourceEventSeqs: [0],
 *   }));
 *   const s1 = yield* applyEvent(emptySurface, a);
 *   const s2 = yield* applyEvent(s1, b);
 *   return [surfaceNodes(s1), surfaceNodes(s2)];
 * });
 * assert.deepEqual(Effect.runSync(program), [[0], [1]]);
 * ```
 */
export function applyEvent(
  surface: Surface,
  event: SessionEvent,
): Effect.Effect<Surface, SurfaceError> {
  return lazyCall(applyEventResult, surface, event);
}

/** A fold failure with the index of the event that broke a rule. */
export interface ReplayFailure {
  /** The rule the event broke. */
  readonly error: SurfaceError;
  /** The surface before that event: everything earlier folded. */
  readonly surface: Surface;
}

/**
 * Folds events synchronously, stopping at the first failure with the
 * surface folded so far.
 *
 * @param events Decoded events in seq order.
 * @param from The surface to start from.
 * @param options Whether the events are read back from a stored log.
 * @returns The folded surface, or the failure and the surface before it.
 *
 * @example Folding until a broken rule
 * ```ts
 * import { emptySurface } from "@palimpsest/session";
 * import { replayResult } from "@palimpsest/session";
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const e = (seq: number) => Result.getOrThrow(decodeEventResult({ type: "turn/start", seq, time: 0, data: { turn: 0 } }));
 * const result = replayResult([e(0), e(2)], emptySurface);
 * assert.equal(Result.isFailure(result) && result.failure.surface.nextSeq, 1);
 * ```
 */
export function replayResult(
  events: Iterable<SessionEvent>,
  from: Surface = emptySurface,
  options?: FoldOptions,
): Result.Result<Surface, ReplayFailure> {
  const stored = options?.stored === true;
  // A lazy iterable runs caller code between events. When `from` shares its
  // store with other versions, that code may read or extend them, which
  // reroots the store under an open cursor: the fold would then write into
  // the wrong version, and a read of `from` would see half-applied writes.
  // So such an iterable is folded in chunks, with no cursor open while it
  // runs. Arrays run no caller code, and a fresh store is reachable by no
  // one else, so both fold in one pass.
  if (Array.isArray(events) || refOf(from) === undefined) {
    return foldBatch(events, from, true, stored);
  }
  let surface = from;
  let chunk: SessionEvent[] = [];
  for (const event of events) {
    chunk.push(event);
    if (chunk.length === REPLAY_CHUNK) {
      const result = foldBatch(chunk, surface, true, stored);
      if (Result.isFailure(result)) return result;
      surface = result.success;
      chunk = [];
    }
  }
  return chunk.length === 0
    ? Result.succeed(surface)
    : foldBatch(chunk, surface, true, stored);
}

const REPLAY_CHUNK = 4096;

/**
 * Folds events onto a surface that no one else can observe: the reader's
 * own, between two chunks of a log. Unlike {@link replayResult} it records
 * no writes to take the store back to `from`, so `from` (and any surface
 * folded before it) must never be read again.
 *
 * @param events Decoded events in seq order (an array: no caller code runs).
 * @param from The surface to fold onto, given up.
 * @param options Whether the events are read back from a stored log.
 * @returns The folded surface, or the failure and the surface before it.
 * @internal
 */
export function replayOwned(
  events: ReadonlyArray<SessionEvent>,
  from: Surface,
  options?: FoldOptions,
): Result.Result<Surface, ReplayFailure> {
  return foldBatch(events, from, false, options?.stored === true);
}

/** Folds events with one cursor; caller code must not run in between. */
const foldBatch = (
  events: Iterable<SessionEvent>,
  from: Surface,
  record: boolean,
  stored: boolean,
): Result.Result<Surface, ReplayFailure> => {
  let cursor: Cursor | undefined;
  let surface = from;
  for (const event of events) {
    if (cursor === undefined) cursor = cursorOf(surface, record, stored);
    const error = step(cursor, event);
    if (error !== undefined) {
      // A failing step writes nothing: publish what came before it.
      surface = finish(surface, cursor);
      return Result.fail({ error, surface });
    }
  }
  return Result.succeed(
    cursor === undefined ? surface : finish(surface, cursor),
  );
};

/**
 * Folds decoded events onto a surface (by default {@link emptySurface}).
 * Folding `a ++ b` equals folding `b` onto the fold of `a`; with no events it
 * returns `from` itself.
 *
 * @param events Decoded events in seq order.
 * @param from The surface to start from.
 * @returns `Effect<Surface, SurfaceError>`: the first broken relational rule.
 *
 * @example Incremental replay
 * ```ts
 * import { replay } from "@palimpsest/session";
 * import { surfaceNodes } from "@palimpsest/session/internal";
 * import { decodeEventResult } from "@palimpsest/session/schema";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const user = (seq: number) => Result.getOrThrow(decodeEventResult({
 *   type: "user/message", seq, time: 0, surfaceOp: "append",
 *   data: { id: `u${seq}`, role: "user", content: [], source: { kind: "user" } },
 * }));
 * const first = Effect.runSync(replay([user(0), user(1)]));
 * const more = Effect.runSync(replay([user(2)], first));
 * assert.deepEqual(surfaceNodes(more), [0, 1, 2]);
 * ```
 */
export function replay(
  events: Iterable<SessionEvent>,
  from: Surface = emptySurface,
): Effect.Effect<Surface, SurfaceError> {
  return lazyExit(() => {
    const result = replayResult(events, from);
    return Result.isSuccess(result)
      ? Result.succeed(result.success)
      : Result.fail(result.failure.error);
  });
}
