/**
 * The fold: a {@link Surface} is the ordered list of event seqs that
 * currently produce messages, and {@link applyEvent} checks one event's
 * relational rules and returns the next surface.
 *
 * A surface is an immutable value: applying an event never changes the
 * surface it was applied to, and every older surface stays valid. Inside, a
 * surface is a version of one shared store (a doubly linked list over arrays
 * indexed by seq, plus the events by seq). The newest version owns the store;
 * an older version holds the writes that take the store back to it, and
 * reading it "reroots" the store there (Baker's persistent arrays). Linear
 * use costs O(1) per append and O(k) per k-node replace; going back to an
 * older version costs the writes in between. Order between two nodes is
 * decided by order keys: an appended node's key is its seq, a replacement
 * takes the key of its range's first node, so surface order is key order
 * without renumbering.
 *
 * A version that nobody can observe keeps no undo writes: folding from
 * {@link emptySurface} builds a fresh store. Holding an old surface keeps the
 * writes from it to the newest alive, so memory grows with what is held.
 *
 * This module owns the relational rules. Shapes were checked by the decoder.
 *
 * @module
 */
import { Effect, Result } from "effect";
import type { SessionSeq } from "./seq.ts";
import type {
  ReplaceOp,
  SessionEvent,
  SurfaceEvent,
  ToolResultEvent,
} from "./event.ts";
import { isSurfaceEvent } from "./event.ts";
import type { Message } from "./message.ts";
import { projectEvent } from "./project.ts";
import {
  NonContiguousSeq,
  ReplaceEndNotOnSurface,
  ReplaceRangeInverted,
  ReplaceStartNotOnSurface,
  ShadowedNodeNotCited,
  type SurfaceError,
  SystemHeadProtected,
  ToolResultReplaceChangesMoreThanContent,
  ToolResultReplaceNotSingle,
  ToolResultReplaceTargetNotToolResult,
} from "./errors.ts";

// ---------------------------------------------------------------------------
// The shared store and its versions

const NONE = -1;

/** Arrays indexed by `seq - base`. */
interface Store {
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
}

/** Undo log: triples of (array, index, value to restore). */
type Writes = Array<unknown[] | number | unknown>;

/** A version's handle on the store: the store itself, or writes to it. */
class Ref {
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
    if (!isArray(array) || typeof index !== "number") continue;
    inverse.push(array, index, array[index]);
    array[index] = writes[i + 2];
  }
  return inverse;
};

/** Makes `ref` own the store, turning the versions in between into diffs. */
const reroot = (ref: Ref): Store => {
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

const newStore = (): Store => ({
  events: [],
  prev: [],
  next: [],
  key: [],
  messages: [],
});

let refOf: (surface: Surface) => Ref | undefined;
let makeSurface: (
  ref: Ref | undefined,
  baseSeq: SessionSeq,
  nextSeq: SessionSeq,
  length: number,
  replacements: number,
  head: SessionSeq | undefined,
  tail: SessionSeq | undefined,
  keepsLog: boolean,
) => Surface;

/**
 * The ordered projection of a session log onto the events that produce
 * messages, with its window base, next expected seq and replacement count.
 * An immutable value; make one with {@link emptySurface},
 * {@link emptySurfaceAt}, {@link applyEvent} or {@link replay}.
 *
 * @example Reading a surface's counters
 * ```ts
 * import { emptySurfaceAt, SessionSeq } from "@palimpsest/session";
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
  readonly #ref: Ref | undefined;

  private constructor(
    ref: Ref | undefined,
    baseSeq: SessionSeq,
    nextSeq: SessionSeq,
    length: number,
    replacements: number,
    head: SessionSeq | undefined,
    tail: SessionSeq | undefined,
    keepsLog: boolean,
  ) {
    this.#ref = ref;
    this.keepsLog = keepsLog;
    this.baseSeq = baseSeq;
    this.nextSeq = nextSeq;
    this.length = length;
    this.replacements = replacements;
    this.head = head;
    this.tail = tail;
  }

  static {
    refOf = (surface) => surface.#ref;
    makeSurface = (...args) => new Surface(...args);
  }
}

/** The store of a surface, rerooted there; undefined for an empty one. */
const storeOf = (surface: Surface): Store | undefined => {
  const ref = refOf(surface);
  return ref === undefined ? undefined : reroot(ref);
};

/**
 * The surface of an empty log starting at seq 0.
 *
 * @example Folding from the empty surface
 * ```ts
 * import { emptySurface, surfaceNodes } from "@palimpsest/session";
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
 * import { emptySurfaceAt, SessionSeq } from "@palimpsest/session";
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
  );
}

function seqUnchecked(n: number): SessionSeq {
  // Only for seqs derived from other seqs by +1 or known constants.
  return n as SessionSeq;
}

// ---------------------------------------------------------------------------
// Reading

/** True when `seq` is a current node of the store's surface. */
const onSurface = (
  store: Store | undefined,
  surface: Surface,
  seq: number,
): boolean => {
  if (store === undefined || seq < surface.baseSeq || seq >= surface.nextSeq) {
    return false;
  }
  const key = store.key[seq - surface.baseSeq];
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
 * import { decodeEvent, emptySurface, replay, surfaceNodes } from "@palimpsest/session";
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
    f(seq, surfaceEventUnchecked(event));
  });
}

/** Walks the surface list, calling `f` with each node's entry in `column`. */
const walk = <T>(
  surface: Surface,
  column: (store: Store) => ReadonlyArray<T | null | undefined>,
  f: (seq: SessionSeq, value: T) => void,
): void => {
  const store = storeOf(surface);
  if (store === undefined || surface.head === undefined) return;
  const base = surface.baseSeq;
  const values = column(store);
  const next = store.next;
  let index = surface.head - base;
  for (let n = surface.length; n > 0; n--) {
    const value = values[index];
    if (value !== null && value !== undefined) {
      f(seqUnchecked(index + base), value);
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

// Events stored on the surface list are surface events by construction.
const surfaceEventUnchecked = (event: SessionEvent): SurfaceEvent =>
  event as SurfaceEvent;

/**
 * The event of a current surface node.
 *
 * @param surface A surface.
 * @param seq A seq.
 * @returns The node's event, or undefined when `seq` is not on the surface.
 *
 * @example Looking a node up
 * ```ts
 * import { emptySurface, SessionSeq, surfaceEvent } from "@palimpsest/session";
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
  const event = store.events[seq - surface.baseSeq];
  return event === undefined ? undefined : surfaceEventUnchecked(event);
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
 * import { emptySurface, logEvent, SessionSeq } from "@palimpsest/session";
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
  return store?.events[seq - surface.baseSeq];
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
  const count = surface.nextSeq - surface.baseSeq;
  for (let i = 0; i < count; i++) {
    const event = store.events[i];
    if (event !== undefined) f(event);
  }
}

// ---------------------------------------------------------------------------
// The fold

/** Mutable fold state while applying events to one store. */
interface Cursor {
  store: Store;
  keepLog: boolean;
  writes: Writes | undefined;
  base: number;
  next: number;
  length: number;
  replacements: number;
  head: number;
  tail: number;
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

const cursorOf = (surface: Surface, record: boolean): Cursor => {
  const ref = refOf(surface);
  const store = ref === undefined ? newStore() : reroot(ref);
  return {
    store,
    keepLog: surface.keepsLog,
    writes: ref !== undefined && record ? [] : undefined,
    base: surface.baseSeq,
    next: surface.nextSeq,
    length: surface.length,
    replacements: surface.replacements,
    head: surface.head === undefined ? NONE : surface.head - surface.baseSeq,
    tail: surface.tail === undefined ? NONE : surface.tail - surface.baseSeq,
  };
};

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
    cursor.head === NONE ? undefined : seqUnchecked(cursor.head + cursor.base),
    cursor.tail === NONE ? undefined : seqUnchecked(cursor.tail + cursor.base),
    surface.keepsLog,
  );
};

const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null;

type JsonPath = Array<string | number>;

interface DiffFrame {
  readonly a: unknown;
  readonly b: unknown;
  readonly keys: ReadonlyArray<string | number>;
  next: number;
  /** Whether this frame's path is a prefix of the skipped path. */
  readonly onSkip: boolean;
}

const definedKeys = (
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): string[] => {
  const keys: string[] = [];
  for (const k of Object.keys(a)) if (a[k] !== undefined) keys.push(k);
  for (const k of Object.keys(b)) {
    if (b[k] !== undefined && (a[k] === undefined || !Object.hasOwn(a, k))) {
      keys.push(k);
    }
  }
  return keys;
};

/**
 * The first path where two JSON values differ, ignoring the value at `skip`,
 * or undefined when they are equal. Iterative, so a deeply nested value
 * cannot overflow the call stack, and it allocates no path unless the values
 * differ.
 */
const jsonDiff = (
  a0: unknown,
  b0: unknown,
  skip: ReadonlyArray<string | number>,
): JsonPath | undefined => {
  const stack: DiffFrame[] = [];
  const path = (): JsonPath =>
    stack.map((frame) => frame.keys[frame.next - 1] ?? "");
  // Pushes a frame for the pair, or says whether they are equal leaves.
  const open = (a: unknown, b: unknown, onSkip: boolean): boolean => {
    if (Object.is(a, b)) return true;
    const arrayA = Array.isArray(a);
    const arrayB = Array.isArray(b);
    if (arrayA || arrayB) {
      if (!arrayA || !arrayB || a.length !== b.length) return false;
      const keys: number[] = [];
      for (let i = 0; i < a.length; i++) keys.push(i);
      stack.push({ a, b, keys, next: 0, onSkip });
      return true;
    }
    if (!isObject(a) || !isObject(b)) return false;
    stack.push({ a, b, keys: definedKeys(a, b), next: 0, onSkip });
    return true;
  };
  if (!open(a0, b0, skip.length > 0)) return [];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1];
    if (frame === undefined) break;
    if (frame.next >= frame.keys.length) {
      stack.pop();
      continue;
    }
    const key = frame.keys[frame.next++];
    if (key === undefined) continue;
    const depth = stack.length - 1;
    const onSkip = frame.onSkip && skip[depth] === key;
    if (onSkip && depth === skip.length - 1) continue;
    const a = isObject(frame.a) ? Reflect.get(frame.a, key) : undefined;
    const b = isObject(frame.b) ? Reflect.get(frame.b, key) : undefined;
    if (!open(a, b, onSkip)) return [...path()];
  }
  return undefined;
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
  const { store, base } = cursor;
  const seq = event.seq;
  const startIndex = op.startSeq - base;
  const endIndex = op.endSeq - base;
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
  const cited: (seq: number) => boolean = sources.length > 16
    ? ((set) => (s: number) => set.has(s))(new Set<number>(sources))
    : (s: number) => sources.includes(seqUnchecked(s));
  const missing: SessionSeq[] = [];
  for (const i of range) {
    if (!cited(i + base)) missing.push(seqUnchecked(i + base));
  }
  if (missing.length > 0) return new ShadowedNodeNotCited({ seq, missing });
  if (event.type === "tool/result") {
    if (range.length !== 1) {
      return new ToolResultReplaceNotSingle({ seq, rangeLength: range.length });
    }
    const target = store.events[startIndex];
    if (target === undefined || target.type !== "tool/result") {
      return new ToolResultReplaceTargetNotToolResult({
        seq,
        target: op.startSeq,
        targetType: target?.type ?? "unknown",
      });
    }
    const path = toolResultChange(
      surfaceEventUnchecked(target) as ToolResultEvent,
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
  return range;
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
    if (cursor.keepLog) write(cursor, store.events, index, event);
    cursor.next++;
    return undefined;
  }
  const op = event.surfaceOp;
  if (op === "append") {
    write(cursor, store.events, index, event);
    write(cursor, store.messages, index, projectEvent(event) ?? null);
    write(cursor, store.key, index, index + cursor.base);
    write(cursor, store.prev, index, cursor.tail);
    write(cursor, store.next, index, NONE);
    if (cursor.tail === NONE) cursor.head = index;
    else write(cursor, store.next, cursor.tail, index);
    cursor.tail = index;
    cursor.length++;
    cursor.next++;
    return undefined;
  }
  const checked = checkReplace(cursor, event, op);
  if (!Array.isArray(checked)) return checked;
  const first = op.startSeq - cursor.base;
  const last = op.endSeq - cursor.base;
  const before = store.prev[first] ?? NONE;
  const after = store.next[last] ?? NONE;
  const key = store.key[first] ?? NONE;
  for (const i of checked) {
    write(cursor, store.key, i, NONE);
    if (!cursor.keepLog) write(cursor, store.events, i, undefined);
  }
  write(cursor, store.events, index, event);
  write(cursor, store.messages, index, projectEvent(event) ?? null);
  write(cursor, store.key, index, key);
  write(cursor, store.prev, index, before);
  write(cursor, store.next, index, after);
  if (before === NONE) cursor.head = index;
  else write(cursor, store.next, before, index);
  if (after === NONE) cursor.tail = index;
  else write(cursor, store.prev, after, index);
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
 * @returns The next surface, or the first relational rule the event breaks.
 *
 * @example A gap in seqs
 * ```ts
 * import { applyEventResult, decodeEventResult, emptySurface } from "@palimpsest/session";
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
): Result.Result<Surface, SurfaceError> {
  if (event.seq !== surface.nextSeq) {
    return Result.fail(
      new NonContiguousSeq({ expected: surface.nextSeq, actual: event.seq }),
    );
  }
  const cursor = cursorOf(surface, true);
  const error = step(cursor, event);
  if (error !== undefined) return Result.fail(error);
  return Result.succeed(finish(surface, cursor));
}

/**
 * Applies one decoded event to a surface, checking the relational rules in
 * order: `NonContiguousSeq`, `ReplaceStartNotOnSurface`,
 * `ReplaceEndNotOnSurface`, `ReplaceRangeInverted`, `ShadowedNodeNotCited`,
 * `ToolResultReplaceNotSingle`, `ToolResultReplaceTargetNotToolResult`,
 * `ToolResultReplaceChangesMoreThanContent`, `SystemHeadProtected`.
 *
 * Append puts the event at the tail; replace takes the place of its range;
 * log-only and opaque events only advance the expected seq. The input
 * surface is never changed, on success or failure.
 *
 * @param surface The surface before the event.
 * @param event A decoded event.
 * @returns `Effect<Surface, SurfaceError>`.
 *
 * @example Replacing a node
 * ```ts
 * import { applyEvent, decodeEvent, emptySurface, surfaceNodes } from "@palimpsest/session";
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
  return Effect.suspend(() =>
    Effect.fromResult(applyEventResult(surface, event))
  );
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
 * @returns The folded surface, or the failure and the surface before it.
 *
 * @example Folding until a broken rule
 * ```ts
 * import { decodeEventResult, emptySurface, replayResult } from "@palimpsest/session";
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
): Result.Result<Surface, ReplayFailure> {
  // A lazy iterable runs caller code between events. When `from` shares its
  // store with other versions, that code may read or extend them, which
  // reroots the store under an open cursor: the fold would then write into
  // the wrong version, and a read of `from` would see half-applied writes.
  // So such an iterable is folded in chunks, with no cursor open while it
  // runs. Arrays run no caller code, and a fresh store is reachable by no
  // one else, so both fold in one pass.
  if (Array.isArray(events) || refOf(from) === undefined) {
    return foldBatch(events, from);
  }
  let surface = from;
  let chunk: SessionEvent[] = [];
  for (const event of events) {
    chunk.push(event);
    if (chunk.length === REPLAY_CHUNK) {
      const result = foldBatch(chunk, surface);
      if (Result.isFailure(result)) return result;
      surface = result.success;
      chunk = [];
    }
  }
  return chunk.length === 0
    ? Result.succeed(surface)
    : foldBatch(chunk, surface);
}

const REPLAY_CHUNK = 4096;

/** Folds events with one cursor; caller code must not run in between. */
const foldBatch = (
  events: Iterable<SessionEvent>,
  from: Surface,
): Result.Result<Surface, ReplayFailure> => {
  let cursor: Cursor | undefined;
  let surface = from;
  for (const event of events) {
    if (cursor === undefined) cursor = cursorOf(surface, true);
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
 * import { decodeEventResult, replay, surfaceNodes } from "@palimpsest/session";
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
  return Effect.suspend(() => {
    const result = replayResult(events, from);
    return Result.isSuccess(result)
      ? Effect.succeed(result.success)
      : Effect.fail(result.failure.error);
  });
}
