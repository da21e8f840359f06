/**
 * A model of what the streaming reader must do with a byte string, written
 * from docs/persistence.md (Reading, torn tails and corruption) and the reader's documented rules, for the fuzz tests: split
 * on `\n` (a final piece without one is a torn tail), strip one `\r`, refuse
 * a line longer than the limit, then judge line 1 as the header and every
 * other line with the reference checker. It holds the whole input and reads
 * it line by line with `indexOf`: no chunks, no streaming, so it cannot
 * share the reader's chunk-boundary mistakes.
 *
 * Under `recover`, an error on an event line (line 2 on) is not fatal: the
 * lines before it are served and the error is reported where reading
 * stopped. Header errors are always fatal.
 *
 * @module
 */
import { Result } from "effect";
import { expandSourceSeqs } from "@palimpsest/session/jsonl";
import {
  type CheckerState,
  checkerState,
  checkLocal,
  checkRelational,
} from "./reference_checker.ts";

/** An error as the model predicts it. */
export interface ModelError {
  /** The reader error tag. */
  readonly tag: string;
  /** The 1-based line, when the error has one. */
  readonly line: number | undefined;
  /** The inner tag of `CorruptLine` / `FoldFailed`. */
  readonly innerTag: string | undefined;
  /** The event seq of `FoldFailed`. */
  readonly seq: number | undefined;
  /** The byte offset of the line (where a recovering read stops). */
  readonly offset: number;
}

/** What the model predicts for a read. */
export type ModelResult =
  | {
    readonly ok: true;
    /** How many events are served. */
    readonly events: number;
    /** The surface nodes after folding them. */
    readonly nodes: ReadonlyArray<number>;
    /** Complete lines served, the header included. */
    readonly lines: number;
    /** Bytes of the served lines. */
    readonly bytes: number;
    /** The torn tail, when there is one and reading did not stop. */
    readonly tornTail:
      | { readonly offset: number; readonly bytes: number }
      | undefined;
    /** Where a recovering read stopped. */
    readonly stoppedAt: ModelError | undefined;
  }
  | { readonly ok: false; readonly error: ModelError };

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const SURFACE = [
  "system/message",
  "user/message",
  "assistant/message",
  "tool/result",
];
const HEADER_KEYS = [
  "type",
  "version",
  "id",
  "createdAt",
  "isSeeded",
  "parentSession",
  "meta",
];

/** The header rules; returns the reader's tag for a bad header. */
const judgeHeader = (
  text: string,
): { tag: string; inner?: string } | undefined => {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { tag: "CorruptLine", inner: "InvalidJson" };
  }
  const bad = { tag: "CorruptLine", inner: "InvalidHeader" };
  if (!isObj(v) || v.type !== "session") return bad;
  const version = v.version;
  if (
    typeof version !== "number" || !Number.isSafeInteger(version) || version < 0
  ) {
    return bad;
  }
  if (version > 3) return { tag: "FormatTooNew" };
  if (version < 3) return { tag: "FormatTooOld" };
  for (const k of Object.keys(v)) if (HEADER_KEYS.indexOf(k) === -1) return bad;
  if (typeof v.id !== "string" || v.id.length === 0) return bad;
  if (!Number.isSafeInteger(v.createdAt)) return bad;
  if (typeof v.isSeeded !== "boolean") return bad;
  if (Object.hasOwn(v, "parentSession")) {
    if (typeof v.parentSession !== "string" || v.parentSession.length === 0) {
      return bad;
    }
  }
  if (Object.hasOwn(v, "meta") && !isObj(v.meta)) return bad;
  return undefined;
};

/**
 * A line over 64 KiB with more than one array or object per 16 characters,
 * outside strings, is refused before it is parsed.
 */
const tooDense = (text: string): boolean => {
  if (text.length <= 65536) return false;
  let containers = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === "[" || c === "{") {
      containers++;
    }
  }
  return containers > Math.floor(text.length / 16);
};

/** One event line against the checker; the error, if any. */
const judgeEvent = (
  text: string,
  state: CheckerState,
): { tag: string; inner: string; seq?: number } | undefined => {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { tag: "CorruptLine", inner: "InvalidJson" };
  }
  // On disk, a surface event's sources may hold [start, end] runs: the
  // codec expands and validates them before the event is decoded, once the
  // event's seq is readable.
  if (
    isObj(v) && Array.isArray(v.sourceEventSeqs) &&
    SURFACE.indexOf(String(v.type)) !== -1 &&
    v.sourceEventSeqs.some((s) => Array.isArray(s))
  ) {
    const seq = typeof v.seq === "number" && Number.isSafeInteger(v.seq) &&
        v.seq >= 0 && !Object.is(v.seq, -0)
      ? v.seq
      : undefined;
    // A line's runs expand to no more seqs than the events before it.
    const expanded = expandSourceSeqs(v.sourceEventSeqs, seq, state.next);
    if (Result.isFailure(expanded)) {
      return { tag: "CorruptLine", inner: "InvalidSourceRange" };
    }
    v = { ...v, sourceEventSeqs: expanded.success };
  }
  const local = checkLocal(v);
  if (local !== undefined) return { tag: "CorruptLine", inner: local.tag };
  if (!isObj(v)) return { tag: "CorruptLine", inner: "InvalidEnvelope" };
  const rel = checkRelational(state, v);
  if (rel !== undefined) {
    return { tag: "FoldFailed", inner: rel.tag, seq: Number(v.seq) };
  }
  return undefined;
};

/**
 * Predicts the reader's result for `bytes`.
 *
 * @param bytes The whole input.
 * @param options `recover` and `maxLineBytes` as given to the reader.
 * @returns The prediction.
 */
export function modelRead(
  bytes: Uint8Array,
  options: { readonly recover?: boolean; readonly maxLineBytes?: number } = {},
): ModelResult {
  const max = options.maxLineBytes ?? 256 * 1024 * 1024;
  const recover = options.recover === true;
  const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  // The reader reads a stored log back (see `FoldOptions.stored`).
  const state: CheckerState = { ...checkerState(0), stored: true };
  let events = 0;
  let line = 0;
  let start = 0;
  const fail = (error: ModelError): ModelResult => {
    if (recover && error.line !== undefined && error.line > 1) {
      return {
        ok: true,
        events,
        nodes: state.nodes.slice(),
        lines: error.line - 1,
        bytes: error.offset,
        tornTail: undefined,
        stoppedAt: error,
      };
    }
    return { ok: false, error };
  };
  const lineError = (
    tag: string,
    innerTag?: string,
    seq?: number,
  ): ModelError => ({ tag, line, innerTag, seq, offset: start });
  for (;;) {
    const nl = bytes.indexOf(10, start);
    if (nl === -1) break;
    line++;
    if (nl - start > max) return fail(lineError("LineTooLong"));
    let text: string;
    try {
      text = utf8.decode(bytes.subarray(start, nl));
    } catch {
      return fail(lineError("CorruptLine", "InvalidUtf8"));
    }
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (tooDense(text)) {
      return line === 1
        ? { ok: false, error: lineError("CorruptLine", "TooManyContainers") }
        : fail(lineError("CorruptLine", "TooManyContainers"));
    }
    if (line === 1) {
      const bad = judgeHeader(text);
      if (bad !== undefined) {
        return { ok: false, error: lineError(bad.tag, bad.inner) };
      }
    } else {
      const bad = judgeEvent(text, state);
      if (bad !== undefined) {
        return fail(lineError(bad.tag, bad.inner, bad.seq));
      }
      events++;
    }
    start = nl + 1;
  }
  const tail = bytes.length - start;
  if (tail > max) {
    line++;
    return fail(lineError("LineTooLong"));
  }
  if (line === 0) {
    return {
      ok: false,
      error: {
        tag: "MissingHeader",
        line: undefined,
        innerTag: undefined,
        seq: undefined,
        offset: 0,
      },
    };
  }
  return {
    ok: true,
    events,
    nodes: state.nodes.slice(),
    lines: line,
    bytes: start,
    tornTail: tail > 0 ? { offset: start, bytes: tail } : undefined,
    stoppedAt: undefined,
  };
}
