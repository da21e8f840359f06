/**
 * A second, deliberately simple implementation of the format's rules, used
 * only by the fuzz tests to cross-check the library.
 *
 * Written from docs/format.md alone, over plain values: the surface is a
 * plain array of seqs changed with `indexOf` and `splice`, events are kept
 * in a `Map`, and no data structure is shared with `src/`. It is slow on
 * purpose (O(surface length) per replace) and must stay obvious: when the
 * library and this checker disagree, one of them is wrong, and reading this
 * file should make it clear which.
 *
 * Where the spec is silent the checker follows the library's documented
 * decisions: data objects may carry extra keys; a key whose value may be any
 * JSON must still be present; ids, plugin names, call ids and source kinds
 * are non-empty strings; a tool result's inner content holds text, image and
 * file blocks; `-0` is a valid `turn`, `step` or `time` (only seqs refuse it).
 *
 * @module
 */

/** A rule the checker found broken, with the fields the tests compare. */
export interface CheckerError {
  /** The error tag, as in docs/format.md. */
  readonly tag: string;
  /** The event's seq when it had a valid one. */
  readonly seq: number | undefined;
  /** Tag-specific fields (expected/actual, missing, target...). */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** The checker's verdict on a whole log. */
export type CheckerVerdict =
  | {
    readonly ok: true;
    readonly nodes: ReadonlyArray<number>;
    readonly nextSeq: number;
    readonly replacements: number;
  }
  | {
    readonly ok: false;
    /** Index of the failing event in the input array. */
    readonly index: number;
    /** Local (decode) or relational (fold). */
    readonly phase: "decode" | "fold";
    readonly error: CheckerError;
    /** The surface before the failing event. */
    readonly nodes: ReadonlyArray<number>;
    readonly nextSeq: number;
    readonly replacements: number;
  };

const SURFACE_TYPES = [
  "system/message",
  "user/message",
  "assistant/message",
  "tool/result",
];
const LOG_ONLY_TYPES = [
  "turn/start",
  "turn/end",
  "step/start",
  "step/end",
  "assistant/attempt",
  "assistant/partial",
  "tool/call",
  "request/header",
  "request/context",
  "session/end-seed",
  "compaction/start",
  "compaction/summary",
  "compaction/prune",
  "compaction/end",
  "session/metadata",
];
/** The `kind`s a `turn/end` reason may have. */
export const TURN_END_REASONS: ReadonlyArray<string> = [
  "completed",
  "aborted",
  "blocked",
  "error",
  "max-tokens",
  "interrupted",
];
/** The keys an event line's envelope may have. */
export const ENVELOPE_KEYS: ReadonlyArray<string> = [
  "type",
  "seq",
  "time",
  "data",
  "ignorable",
  "surfaceOp",
  "sourceEventSeqs",
];

// ---------------------------------------------------------------------------
// Small predicates

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
function has(o: Obj, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}
function isSeq(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 &&
    v <= Number.MAX_SAFE_INTEGER && !Object.is(v, -0);
}
function isSafeInt(v: unknown): boolean {
  return typeof v === "number" && Number.isInteger(v) &&
    Math.abs(v) <= Number.MAX_SAFE_INTEGER;
}
function isCounter(v: unknown): boolean {
  return isSafeInt(v) && typeof v === "number" && v >= 0;
}
function isStr(v: unknown): boolean {
  return typeof v === "string";
}
function isNonEmptyStr(v: unknown): boolean {
  return typeof v === "string" && v.length > 0;
}

// ---------------------------------------------------------------------------
// Data shapes (§2.2)

function textLike(b: Obj): boolean {
  return isStr(b.text);
}
function attachmentLike(b: Obj): boolean {
  return has(b, "attachment");
}

function isInnerToolResultBlock(b: unknown): boolean {
  if (!isObj(b)) return false;
  if (b.type === "text") return textLike(b);
  if (b.type === "image" || b.type === "file") return attachmentLike(b);
  return false;
}

function isToolResultBlock(b: unknown): boolean {
  if (!isObj(b) || b.type !== "tool-result") return false;
  if (!isNonEmptyStr(b.toolCallId)) return false;
  if (!Array.isArray(b.content)) return false;
  for (const inner of b.content) {
    if (!isInnerToolResultBlock(inner)) return false;
  }
  if (has(b, "isError") && typeof b.isError !== "boolean") return false;
  return true;
}

function isBlock(b: unknown): boolean {
  if (!isObj(b)) return false;
  switch (b.type) {
    case "text":
    case "reasoning":
      return textLike(b);
    case "image":
    case "file":
      return attachmentLike(b);
    case "tool-call":
      return isNonEmptyStr(b.id) && isStr(b.name) && isStr(b.arguments);
    case "tool-result":
      return isToolResultBlock(b);
    default:
      return false;
  }
}

function isContent(c: unknown): boolean {
  if (!Array.isArray(c)) return false;
  for (const b of c) if (!isBlock(b)) return false;
  return true;
}

function isMessage(
  m: unknown,
  role: string,
  source: (s: Obj) => boolean,
): boolean {
  if (!isObj(m)) return false;
  if (!isNonEmptyStr(m.id) || m.role !== role) return false;
  if (!isContent(m.content)) return false;
  return isObj(m.source) && source(m.source);
}

function turnStep(d: Obj): boolean {
  return isCounter(d.turn) && isCounter(d.step);
}

function isStream(s: unknown): boolean {
  if (!Array.isArray(s)) return false;
  for (const r of s) {
    if (!isObj(r) || !isSafeInt(r.time) || !has(r, "chunk")) return false;
  }
  return true;
}

function isModelSource(s: unknown): boolean {
  return isObj(s) && s.kind === "model" && isStr(s.provider) &&
    isStr(s.model);
}

function isSeqArray(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) {
    if (!(i in v) || !isSeq(v[i])) return false;
  }
  return true;
}

const DATA_RULES: Record<string, (d: unknown) => boolean> = {
  "system/message": (d) =>
    isObj(d) && turnStep(d) &&
    isMessage(
      d.message,
      "system",
      (s) => s.kind === "plugin" && isNonEmptyStr(s.plugin),
    ),
  "user/message": (d) => isMessage(d, "user", (s) => isNonEmptyStr(s.kind)),
  "assistant/message": (d) => {
    if (!isObj(d) || !turnStep(d)) return false;
    if (
      !isMessage(
        d.message,
        "assistant",
        (s) => s.kind === "model" && isStr(s.provider) && isStr(s.model),
      )
    ) return false;
    if (!isStream(d.stream)) return false;
    if (has(d, "interrupted") && typeof d.interrupted !== "boolean") {
      return false;
    }
    return true;
  },
  "tool/result": (d) => {
    if (!isObj(d) || !turnStep(d)) return false;
    const m = d.message;
    if (!isObj(m) || !isNonEmptyStr(m.id) || m.role !== "user") return false;
    if (!isObj(m.source) || m.source.kind !== "tool") return false;
    if (!isNonEmptyStr(m.source.callId)) return false;
    if (!Array.isArray(m.content) || m.content.length !== 1) return false;
    const block: unknown = m.content[0];
    if (!isToolResultBlock(block) || !isObj(block)) return false;
    if (block.toolCallId !== m.source.callId) return false;
    if (has(d, "error")) {
      const e = d.error;
      if (!isObj(e) || !isStr(e.name) || !isStr(e.code)) return false;
    }
    return true;
  },
  "turn/start": (d) => isObj(d) && isCounter(d.turn),
  "turn/end": (d) =>
    isObj(d) && isCounter(d.turn) && isObj(d.reason) &&
    TURN_END_REASONS.indexOf(String(d.reason.kind)) !== -1 &&
    typeof d.reason.kind === "string",
  "step/start": (d) => isObj(d) && turnStep(d),
  "step/end": (d) => isObj(d) && turnStep(d),
  "assistant/attempt": (d) => isObj(d) && turnStep(d) && isStream(d.stream),
  "assistant/partial": (d) =>
    isObj(d) && turnStep(d) && isCounter(d.offset) && isStream(d.stream) &&
    (!has(d, "source") || isModelSource(d.source)),
  "tool/call": (d) =>
    isObj(d) && turnStep(d) && isNonEmptyStr(d.callId) && isStr(d.name) &&
    isStr(d.arguments),
  "request/header": (d) =>
    isObj(d) && isObj(d.header) && isObj(d.header.config) &&
    isStr(d.header.config.provider) && isStr(d.header.config.model) &&
    has(d, "reason"),
  "request/context": (d) =>
    isObj(d) && isStr(d.provider) && isStr(d.model) &&
    (!has(d, "contextWindow") || isCounter(d.contextWindow)),
  "session/end-seed": (d) =>
    isObj(d) && (!has(d, "inherited") || d.inherited === true),
  "compaction/start": (d) =>
    isObj(d) && isNonEmptyStr(d.compactionId) &&
    (d.turn === null || isCounter(d.turn)) &&
    (!has(d, "sourceCommandId") || isNonEmptyStr(d.sourceCommandId)),
  "compaction/summary": (d) =>
    isObj(d) && isNonEmptyStr(d.compactionId) && isStr(d.summary) &&
    isSeqArray(d.shadowedSeqs),
  "compaction/prune": (d) => isObj(d) && isSeqArray(d.shadowedSeqs),
  "compaction/end": (d) =>
    isObj(d) && isNonEmptyStr(d.compactionId) &&
    (!has(d, "turn") || d.turn === null || isCounter(d.turn)) &&
    (!has(d, "sourceCommandId") || isNonEmptyStr(d.sourceCommandId)),
  "session/metadata": (d) =>
    isObj(d) &&
    (!has(d, "title") || d.title === null || isStr(d.title)) &&
    (!has(d, "cwd") || d.cwd === null || isStr(d.cwd)) &&
    (!has(d, "tags") ||
      (Array.isArray(d.tags) && d.tags.every(isNonEmptyStr))) &&
    (!has(d, "labels") ||
      (isObj(d.labels) &&
        Object.values(d.labels).every((v) => v === null || isStr(v)))) &&
    (!has(d, "values") || isObj(d.values)),
};

// ---------------------------------------------------------------------------
// Event-local rules (§2.3), in table order

function err(
  tag: string,
  seq: number | undefined,
  fields: Record<string, unknown> = {},
): CheckerError {
  return { tag, seq, fields };
}

/**
 * Checks one parsed JSON value against the event-local rules.
 *
 * @param v A parsed JSON value.
 * @param extraTypes Extra log-only types with a data predicate.
 * @returns The first broken rule, or undefined when the event is valid.
 */
export function checkLocal(
  v: unknown,
  extraTypes: Readonly<Record<string, (d: unknown) => boolean>> = {},
): CheckerError | undefined {
  if (!isObj(v)) return err("InvalidEnvelope", undefined);
  const seq = isSeq(v.seq) ? v.seq : undefined;
  for (const key of Object.keys(v)) {
    if (ENVELOPE_KEYS.indexOf(key) === -1) return err("InvalidEnvelope", seq);
  }
  if (!isNonEmptyStr(v.type)) return err("InvalidEnvelope", seq);
  if (!isSafeInt(v.time)) return err("InvalidEnvelope", seq);
  if (!has(v, "data")) return err("InvalidEnvelope", seq);
  if (has(v, "ignorable") && v.ignorable !== true) {
    return err("InvalidEnvelope", seq);
  }
  if (seq === undefined) return err("InvalidSessionSeq", undefined);
  const type = String(v.type);
  const surface = SURFACE_TYPES.indexOf(type) !== -1;
  const logOnly = LOG_ONLY_TYPES.indexOf(type) !== -1;
  const extra = has(extraTypes, type) ? extraTypes[type] : undefined;
  if (!surface && !logOnly && extra === undefined) {
    // Opaque: kept as read, metadata not interpreted.
    if (v.ignorable === true) return undefined;
    return err("UnknownEventType", seq, { type });
  }
  const dataOk = extra !== undefined
    ? extra(v.data)
    : (DATA_RULES[type] ?? (() => false))(v.data);
  if (!dataOk) return err("InvalidEventData", seq, { type });
  if (!surface) {
    if (has(v, "surfaceOp")) {
      return err("SurfaceMetadataOnLogOnlyEvent", seq, { field: "surfaceOp" });
    }
    if (has(v, "sourceEventSeqs")) {
      return err("SurfaceMetadataOnLogOnlyEvent", seq, {
        field: "sourceEventSeqs",
      });
    }
    if (type === "request/header" && isObj(v.data) && isObj(v.data.header)) {
      if (has(v.data.header, "system")) {
        return err("RetiredHeaderSystem", seq);
      }
    }
    return undefined;
  }
  if (!has(v, "surfaceOp")) return err("SurfaceOpMissing", seq);
  const op = v.surfaceOp;
  const opOk = op === "append" || op === "prepend" ||
    (isObj(op) && Object.keys(op).length === 3 && op.op === "replace" &&
      isSeq(op.startSeq) && isSeq(op.endSeq)) ||
    (isObj(op) && Object.keys(op).length === 2 && op.op === "rewind" &&
      isSeq(op.toSeq));
  if (!opOk) return err("InvalidSurfaceOp", seq);
  if (op === "prepend" && type !== "system/message") {
    return err("PrependNotSystemMessage", seq);
  }
  const rewind = isObj(op) && op.op === "rewind";
  if (rewind && type !== "user/message") {
    return err("RewindNotUserMessage", seq);
  }
  if (has(v, "sourceEventSeqs")) {
    if (type === "assistant/message") {
      return err("SourcesOnAssistantMessage", seq);
    }
    const sources = v.sourceEventSeqs;
    if (!Array.isArray(sources)) {
      return err("InvalidSourceList", seq, { index: undefined });
    }
    for (let i = 0; i < sources.length; i++) {
      if (!(i in sources) || !isSeq(sources[i])) {
        return err("InvalidSourceList", seq, { index: i });
      }
    }
    if (sources.length === 0) return err("EmptySourceList", seq);
    for (let i = 0; i < sources.length; i++) {
      if (sources.indexOf(sources[i]) !== i) {
        return err("DuplicateSource", seq, { source: sources[i] });
      }
    }
    for (const s of sources) {
      if (s >= seq) return err("SourceNotEarlier", seq, { source: s });
    }
  }
  if (rewind) {
    if (Number(op.toSeq) >= seq) {
      return err("RewindPointNotEarlier", seq, { toSeq: op.toSeq });
    }
  } else if (isObj(op)) {
    if (Number(op.startSeq) >= seq) {
      return err("ReplaceEndpointNotEarlier", seq, { endpoint: "startSeq" });
    }
    if (Number(op.endSeq) >= seq) {
      return err("ReplaceEndpointNotEarlier", seq, { endpoint: "endSeq" });
    }
  }
  if (type === "tool/result" && isObj(v.data) && has(v.data, "error")) {
    const m = v.data.message;
    const block = isObj(m) && Array.isArray(m.content) ? m.content[0] : {};
    if (!isObj(block) || block.isError !== true) {
      return err("ToolErrorWithoutIsError", seq);
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// JSON equality without recursion (inputs may nest 100k deep)

/**
 * Deep JSON equality, iterative. Key order does not matter; `0` equals `-0`.
 *
 * @param a A JSON value.
 * @param b A JSON value.
 * @returns Whether the two values are equal as JSON.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const stack: Array<[unknown, unknown]> = [[a, b]];
  while (stack.length > 0) {
    const pair = stack.pop();
    if (pair === undefined) break;
    const [x, y] = pair;
    if (x === y) continue;
    if (Array.isArray(x) || Array.isArray(y)) {
      if (!Array.isArray(x) || !Array.isArray(y)) return false;
      if (x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
      continue;
    }
    if (!isObj(x) || !isObj(y)) return false;
    const kx = Object.keys(x);
    const ky = Object.keys(y);
    if (kx.length !== ky.length) return false;
    for (const k of kx) {
      if (!has(y, k)) return false;
      stack.push([x[k], y[k]]);
    }
  }
  return true;
}

/** A tool result's data with the block's inner content taken out. */
function withoutInnerContent(data: unknown): unknown {
  if (!isObj(data) || !isObj(data.message)) return data;
  const message = data.message;
  const content = Array.isArray(message.content) ? message.content : [];
  const blocks = content.map((block: unknown, i: number) => {
    if (i !== 0 || !isObj(block)) return block;
    const copy: Obj = {};
    for (const k of Object.keys(block)) {
      if (k !== "content") {
        Object.defineProperty(copy, k, {
          value: block[k],
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    return copy;
  });
  return { ...data, message: { ...message, content: blocks } };
}

// ---------------------------------------------------------------------------
// Relational rules (§2.4)

/** The checker's surface: plain arrays and a map. */
export interface CheckerState {
  /** Node seqs in surface order. */
  readonly nodes: number[];
  /** Every folded event by seq. */
  readonly events: Map<number, Obj>;
  /** The window base. */
  readonly base: number;
  /** The next expected seq. */
  next: number;
  /** Replacements folded. */
  replacements: number;
  /** A stored log read back: a replacement may shadow an unanswered call. */
  stored?: boolean;
}

/** What is open right after an event: the seq that opened it. */
interface Work {
  readonly turn?: number | undefined;
  readonly step?: number | undefined;
  readonly compaction?: number | undefined;
}

/**
 * A fresh checker surface.
 *
 * @param base The window base seq.
 * @returns An empty state expecting `base`.
 */
export function checkerState(base = 0): CheckerState {
  return {
    nodes: [],
    events: new Map(),
    base,
    next: base,
    replacements: 0,
  };
}

function callIdsOf(event: Obj | undefined): string[] {
  if (event === undefined || event.type !== "assistant/message") return [];
  const data = event.data;
  const message = isObj(data) ? data.message : undefined;
  const content = isObj(message) ? message.content : undefined;
  if (!Array.isArray(content)) return [];
  return content.filter((b) => isObj(b) && b.type === "tool-call").map((b) =>
    String((b as Obj).id)
  );
}

function resultIdOf(event: Obj | undefined): string | undefined {
  if (event === undefined || event.type !== "tool/result") return undefined;
  const data = event.data;
  const message = isObj(data) ? data.message : undefined;
  const content = isObj(message) ? message.content : undefined;
  const block = Array.isArray(content) ? content[0] : undefined;
  return isObj(block) ? String(block.toolCallId) : undefined;
}

/**
 * The call ids of the `assistant/message` at `node` that nothing answered
 * before `seq`: no `tool/result` naming the id, and no other message issuing
 * it (which takes the call over), between the message and `seq`. A scan of
 * the log, on purpose.
 */
function unansweredCalls(
  state: CheckerState,
  node: number,
  seq: number,
): string[] {
  const ids = callIdsOf(state.events.get(node));
  return ids.filter((id) => {
    for (let at = node + 1; at < seq; at++) {
      const later = state.events.get(at);
      if (resultIdOf(later) === id || callIdsOf(later).includes(id)) {
        return false;
      }
    }
    return true;
  });
}

/**
 * Applies one locally valid event to the state, or returns the first broken
 * relational rule and leaves the state as it was.
 *
 * @param state The checker state (changed on success).
 * @param v A locally valid event.
 * @returns The broken rule, or undefined.
 */
export function checkRelational(
  state: CheckerState,
  v: Obj,
): CheckerError | undefined {
  return checkRelationalStep(state, v);
}

/** The parent of an event in the log's tree: a rewind's point, else the event before. */
function parentOf(state: CheckerState, seq: number): number {
  const event = state.events.get(seq);
  const op = event?.type === "user/message" ? event.surfaceOp : undefined;
  return isObj(op) && op.op === "rewind" ? Number(op.toSeq) : seq - 1;
}

/**
 * The surface and the open work right after `x`, found the slow way: the
 * path from the base to `x` in the log's tree, replayed from nothing.
 */
function pointOf(
  state: CheckerState,
  x: number,
): { nodes: number[]; work: Work } | undefined {
  if (x < state.base || x >= state.next) return undefined;
  const path: number[] = [];
  for (let at = x; at >= state.base; at = parentOf(state, at)) path.push(at);
  path.reverse();
  const nodes: number[] = [];
  let work: Work = {};
  for (const seq of path) {
    const v = state.events.get(seq);
    if (v === undefined) return undefined;
    // Only surface types place a node (an opaque event keeps its op as read).
    const op = SURFACE_TYPES.indexOf(String(v.type)) === -1
      ? undefined
      : v.surfaceOp;
    if (op === "append" || (isObj(op) && op.op === "rewind")) nodes.push(seq);
    else if (op === "prepend") nodes.unshift(seq);
    else if (isObj(op)) {
      const s = nodes.indexOf(Number(op.startSeq));
      const e = nodes.indexOf(Number(op.endSeq));
      nodes.splice(s, e - s + 1, seq);
    }
    work = workAfter(work, v);
  }
  return { nodes, work };
}

/** The open work after `v`, given the open work before it. */
function workAfter(prior: Work, v: Obj): Work {
  const seq = Number(v.seq);
  switch (v.type) {
    case "turn/start":
      return { ...prior, turn: seq };
    case "turn/end":
      return {};
    case "step/start":
      return { ...prior, step: seq };
    case "step/end":
      return { ...prior, step: undefined };
    case "compaction/start":
      return { ...prior, compaction: seq };
    case "compaction/end":
      return { ...prior, compaction: undefined };
  }
  return prior;
}

function checkRelationalStep(
  state: CheckerState,
  v: Obj,
): CheckerError | undefined {
  const seq = Number(v.seq);
  if (seq !== state.next) {
    return err("NonContiguousSeq", seq, {
      expected: state.next,
      actual: seq,
    });
  }
  const type = String(v.type);
  const isSurface = SURFACE_TYPES.indexOf(type) !== -1;
  if (!isSurface) {
    state.events.set(seq, v);
    state.next++;
    return undefined;
  }
  const op = v.surfaceOp;
  if (op === "append") {
    state.events.set(seq, v);
    state.nodes.push(seq);
    state.next++;
    return undefined;
  }
  if (op === "prepend") {
    const first = state.nodes[0];
    const head = first === undefined ? undefined : state.events.get(first);
    if (head !== undefined && head.type === "system/message") {
      return err("SystemHeadExists", seq, { head: first });
    }
    state.events.set(seq, v);
    state.nodes.unshift(seq);
    state.next++;
    return undefined;
  }
  if (!isObj(op)) throw new Error("checker: replace op expected");
  if (op.op === "rewind") return checkRewind(state, v, Number(op.toSeq));
  const startSeq = Number(op.startSeq);
  const endSeq = Number(op.endSeq);
  const s = state.nodes.indexOf(startSeq);
  if (s === -1) return err("ReplaceStartNotOnSurface", seq, { startSeq });
  const e = state.nodes.indexOf(endSeq);
  if (e === -1) return err("ReplaceEndNotOnSurface", seq, { endSeq });
  if (s > e) return err("ReplaceRangeInverted", seq, { startSeq, endSeq });
  const range = state.nodes.slice(s, e + 1);
  const sources: unknown[] = Array.isArray(v.sourceEventSeqs)
    ? v.sourceEventSeqs
    : [];
  const missing = range.filter((n) => sources.indexOf(n) === -1);
  if (missing.length > 0) {
    return err("ShadowedNodeNotCited", seq, { missing });
  }
  if (type === "tool/result") {
    if (range.length !== 1) {
      return err("ToolResultReplaceNotSingle", seq, {
        rangeLength: range.length,
      });
    }
    const target = state.events.get(startSeq);
    if (target === undefined || target.type !== "tool/result") {
      return err("ToolResultReplaceTargetNotToolResult", seq, {
        target: startSeq,
      });
    }
    if (
      !jsonEqual(withoutInnerContent(target.data), withoutInnerContent(v.data))
    ) {
      return err("ToolResultReplaceChangesMoreThanContent", seq, {
        target: startSeq,
      });
    }
  }
  const headSeq = state.nodes[0];
  const head = headSeq === undefined ? undefined : state.events.get(headSeq);
  if (s === 0 && head !== undefined && head.type === "system/message") {
    if (!(type === "system/message" && s === e)) {
      return err("SystemHeadProtected", seq, { head: headSeq });
    }
  }
  if (state.stored !== true) {
    for (const node of range) {
      const callIds = unansweredCalls(state, node, seq);
      if (callIds.length > 0) {
        return err("ReplaceShadowsUnansweredCall", seq, {
          callSeq: node,
          callIds,
        });
      }
    }
  }
  state.events.set(seq, v);
  state.nodes.splice(s, e - s + 1, seq);
  state.replacements++;
  state.next++;
  return undefined;
}

/**
 * Judges a rewind to `toSeq` by an event at `seq` citing `cited`, in the
 * order of docs/format.md, without changing the state: the first broken
 * rule, or the nodes it restores and takes off.
 *
 * @param state The checker state.
 * @param seq The seq of the event carrying the rewind.
 * @param toSeq The point.
 * @param cited The event's sources, or undefined to skip comparing them.
 * @returns The broken rule, or what the rewind does.
 */
export function judgeRewind(
  state: CheckerState,
  seq: number,
  toSeq: number,
  cited: ReadonlyArray<unknown> | undefined,
): CheckerError | { restored: number[]; takenOff: number[] } {
  const point = pointOf(state, toSeq);
  if (point === undefined) return err("RewindNotHeld", seq, { toSeq });
  const { nodes: restored, work } = point;
  // The innermost: the latest opened.
  let open: [string, number] | undefined;
  for (const kind of ["turn", "step", "compaction"] as const) {
    const openedAt = work[kind];
    if (openedAt !== undefined && (open === undefined || openedAt > open[1])) {
      open = [kind, openedAt];
    }
  }
  if (open !== undefined) {
    return err("RewindPointInsideWork", seq, {
      toSeq,
      work: open[0],
      openedAt: open[1],
    });
  }
  const head = state.nodes[0];
  const typeOf = (n: number | undefined) =>
    n === undefined ? undefined : state.events.get(n)?.type;
  if (
    typeOf(head) === "system/message" &&
    typeOf(restored[0]) !== "system/message"
  ) {
    return err("RewindDropsSystemHead", seq, { toSeq, head });
  }
  const calls: Array<[string, number]> = [];
  for (const n of restored) {
    const event = state.events.get(n);
    for (const id of callIdsOf(event)) {
      // A later message issuing an open id takes it over.
      const i = calls.findIndex(([known]) => known === id);
      if (i !== -1) calls.splice(i, 1);
      calls.push([id, n]);
    }
    const answered = resultIdOf(event);
    if (answered !== undefined) {
      const i = calls.findIndex(([id]) => id === answered);
      if (i === -1) {
        return err("RewindBreaksToolPair", seq, {
          toSeq,
          node: n,
          callId: answered,
        });
      }
      calls.splice(i, 1);
    }
  }
  const left = calls[0];
  if (left !== undefined) {
    return err("RewindBreaksToolPair", seq, {
      toSeq,
      node: left[1],
      callId: left[0],
    });
  }
  const takenOff = state.nodes.filter((n) => restored.indexOf(n) === -1);
  if (cited !== undefined) {
    const missing = takenOff.filter((n) => cited.indexOf(n) === -1);
    const extra = cited.filter((n) => takenOff.indexOf(Number(n)) === -1);
    if (missing.length > 0 || extra.length > 0) {
      return err("RewindSourcesMismatch", seq, { toSeq, missing, extra });
    }
  }
  return { restored, takenOff };
}

/** The rewind rules, then the rewind. */
function checkRewind(
  state: CheckerState,
  v: Obj,
  toSeq: number,
): CheckerError | undefined {
  const seq = Number(v.seq);
  const cited: unknown[] = Array.isArray(v.sourceEventSeqs)
    ? v.sourceEventSeqs
    : [];
  const judged = judgeRewind(state, seq, toSeq, cited);
  if ("tag" in judged) return judged;
  state.events.set(seq, v);
  state.nodes.splice(0, state.nodes.length, ...judged.restored, seq);
  state.next++;
  return undefined;
}

/**
 * Checks a whole log: each value's local rules, then its relational rules,
 * stopping at the first failure.
 *
 * @param values Parsed JSON values, in log order.
 * @param base The window base seq.
 * @param extraTypes Extra log-only types with a data predicate.
 * @returns The verdict.
 */
export function checkLog(
  values: ReadonlyArray<unknown>,
  base = 0,
  extraTypes: Readonly<Record<string, (d: unknown) => boolean>> = {},
): CheckerVerdict {
  const state = checkerState(base);
  for (let index = 0; index < values.length; index++) {
    const v = values[index];
    const local = checkLocal(v, extraTypes);
    const snapshot = () => ({
      nodes: state.nodes.slice(),
      nextSeq: state.next,
      replacements: state.replacements,
    });
    if (local !== undefined) {
      return { ok: false, index, phase: "decode", error: local, ...snapshot() };
    }
    if (!isObj(v)) throw new Error("checker: object expected");
    const rel = checkRelational(state, v);
    if (rel !== undefined) {
      return { ok: false, index, phase: "fold", error: rel, ...snapshot() };
    }
  }
  return {
    ok: true,
    nodes: state.nodes.slice(),
    nextSeq: state.next,
    replacements: state.replacements,
  };
}
