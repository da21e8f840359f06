/**
 * The lines of a log stored as bytes (a file, the memory layer's chunks)
 * that a checkpoint references, on both sides:
 *
 * - **Writing.** A write handle keeps a {@link LineTable}: where the line
 *   of each seq starts and how long it is, for the seqs it has scanned.
 *   Before a checkpoint is written, the table is brought up to the log's
 *   end by scanning only the bytes past what it knows (the newlines, not
 *   the events), so a checkpoint every K events costs O(K) bytes read, and
 *   the first one on a handle that opened without a checkpoint scans the
 *   log once. An open from a checkpoint seeds the table with the lines the
 *   checkpoint references.
 * - **Opening.** {@link readReferenced} reads the lines of the surface nodes
 *   before the checkpoint's first held seq at their offsets (adjacent lines
 *   in one read of at most a few MiB), and the lines from the first held
 *   seq to the checkpoint's seq in one run; each must be a whole line of
 *   its recorded length (a `\n` before and at its end) and decode to the
 *   event of its seq.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import type { Vocabulary } from "../core/decode.ts";
import type { SessionEvent } from "../core/event.ts";
import type {
  CheckpointReads,
  ReferencedEvents,
  StoredLines,
} from "../log/checkpoint.ts";
import { decodeReferencedLine, makeRunBudget } from "../log/line.ts";

/** Reads `length` bytes from `offset` of a stored log, or fewer at its end. */
export type ReadRange<EIO> = (
  offset: number,
  length: number,
) => Effect.Effect<Uint8Array, EIO>;

/** Where a handle knows the lines of its stored log are. */
export interface LineTable {
  /** Line starts, by seq (-1: not known). */
  starts: Float64Array;
  /** Line lengths with `\n`, by seq (0: not known). */
  lengths: Uint32Array;
  /** The next seq to scan for. */
  seq: number;
  /** Where its line starts; -1 before the header's end is found. */
  offset: number;
}

const NL = 10;
/** How much of a log one read of a scan or an open takes. */
const BLOCK = 1024 * 1024;
/** The widest gap between two referenced lines read through in one read. */
const GAP = 64 * 1024;

/**
 * An empty table: the scan starts at the header.
 *
 * @param baseSeq The log's first seq.
 * @returns The table.
 */
export const makeLineTable = (baseSeq: number): LineTable => ({
  starts: new Float64Array(0),
  lengths: new Uint32Array(0),
  seq: baseSeq,
  offset: -1,
});

const grow = (table: LineTable, seq: number): void => {
  if (seq < table.starts.length) return;
  const size = Math.max(1024, table.starts.length * 2, seq + 1);
  const starts = new Float64Array(size).fill(-1);
  starts.set(table.starts);
  const lengths = new Uint32Array(size);
  lengths.set(table.lengths);
  table.starts = starts;
  table.lengths = lengths;
};

const put = (table: LineTable, seq: number, start: number, length: number) => {
  grow(table, seq);
  table.starts[seq] = start;
  table.lengths[seq] = length;
};

/**
 * The table a handle keeps after an open from a checkpoint: the lines the
 * checkpoint referenced, and a scan that starts at its first held line.
 *
 * @param baseSeq The log's first seq.
 * @param reads What the checkpoint referenced.
 * @param bytes Where the line of the checkpoint's seq starts.
 * @returns The table.
 */
export const seededLineTable = (
  baseSeq: number,
  reads: CheckpointReads,
  bytes: number,
): LineTable => {
  const table = makeLineTable(baseSeq);
  const { pinned, offsets, lengths } = reads;
  for (let i = 0; i < pinned.length; i++) {
    put(table, pinned[i] ?? 0, offsets?.[i] ?? 0, lengths?.[i] ?? 0);
  }
  table.seq = reads.heldFrom;
  table.offset = reads.heldBytes ?? bytes;
  return table;
};

/**
 * Brings a table up to `bytes` (the log's end, after its last `\n`) by
 * scanning the bytes it has not seen; false when the log's lines there are
 * not the `nextSeq - seq` lines expected (the table is then reset).
 *
 * @param table The handle's table.
 * @param range Reads the log.
 * @param bytes The log's length.
 * @param nextSeq The seq after the log's last event.
 * @param baseSeq The log's first seq.
 * @returns Whether the table now knows every line up to `nextSeq`.
 */
export const scanLines = <EIO>(
  table: LineTable,
  range: ReadRange<EIO>,
  bytes: number,
  [baseSeq, nextSeq]: readonly [baseSeq: number, nextSeq: number],
): Effect.Effect<boolean, EIO> =>
  Effect.gen(function* () {
    let offset = table.offset < 0 ? 0 : table.offset;
    let lineStart = offset;
    let inHeader = table.offset < 0;
    let seq = table.seq;
    while (offset < bytes) {
      const block = yield* range(offset, Math.min(BLOCK, bytes - offset));
      if (block.length === 0) break;
      let at = 0;
      for (;;) {
        const nl = block.indexOf(NL, at);
        if (nl === -1) break;
        const end = offset + nl + 1;
        if (inHeader) inHeader = false;
        else put(table, seq++, lineStart, end - lineStart);
        lineStart = end;
        at = nl + 1;
      }
      offset += block.length;
    }
    if (inHeader || lineStart !== bytes || seq !== nextSeq) {
      Object.assign(table, makeLineTable(baseSeq));
      return false;
    }
    table.seq = seq;
    table.offset = lineStart;
    return true;
  });

/**
 * A table as the checkpoint encoder asks it.
 *
 * @param table The table.
 * @param bytes The log's length.
 * @returns The stored lines.
 */
export const storedLinesOf = (
  table: LineTable,
  bytes: number,
): StoredLines => ({
  bytes,
  start: (seq) => {
    const start = table.starts[seq];
    return start === undefined || start < 0 ? undefined : start;
  },
  length: (seq) => {
    const length = table.lengths[seq];
    return length === undefined || length === 0 ? undefined : length;
  },
});

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const textOf = (bytes: Uint8Array): string | undefined => {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
};

/** What decoding a checkpoint's windows needs, and what it fills. */
interface Referenced {
  readonly pinned: ReadonlyArray<number>;
  readonly offsets: ReadonlyArray<number>;
  readonly lengths: ReadonlyArray<number>;
  /** The reference of the k-th line in file order (undefined: the k-th). */
  readonly order: ReadonlyArray<number> | undefined;
  readonly runs: ReturnType<typeof makeRunBudget>;
  readonly vocabulary: Vocabulary | undefined;
  readonly events: Array<SessionEvent | undefined>;
}

const byOffset = (into: Referenced, k: number): number =>
  into.order === undefined ? k : into.order[k] ?? 0;

/**
 * Decodes the referenced lines `i..j-1` (in file order) of one window read
 * from byte `from`; false when one is not a whole line of its length or
 * not its seq's event. A plain function, not part of the reading
 * generator: V8 optimizes a loop in a generator late or never, and this
 * one runs once per referenced line.
 */
const decodeWindow = (
  into: Referenced,
  window: Uint8Array,
  from: number,
  [i, j]: readonly [number, number],
): boolean => {
  const { pinned, offsets, lengths, order, runs, vocabulary, events } = into;
  // Each run of adjacent lines decoded from UTF-8 at once.
  let run = i;
  while (run < j) {
    let runEnd = run + 1;
    while (
      runEnd < j &&
      offsets[byOffset(into, runEnd)] ===
        (offsets[byOffset(into, runEnd - 1)] ?? 0) +
          (lengths[byOffset(into, runEnd - 1)] ?? 0)
    ) runEnd++;
    const head = byOffset(into, run);
    const tail = byOffset(into, runEnd - 1);
    const a = (offsets[head] ?? 0) - from;
    const b = (offsets[tail] ?? 0) + (lengths[tail] ?? 0) - from;
    if (window[a - 1] !== NL || window[b - 1] !== NL) return false;
    const text = textOf(window.subarray(a, b - 1));
    if (text === undefined) return false;
    const texts = text.split("\n");
    if (texts.length !== runEnd - run) return false;
    let at = a;
    for (let r = run; r < runEnd; r++) {
      const index = byOffset(into, r);
      const line = texts[r - run] ?? "";
      const length = lengths[index] ?? 0;
      // The line's recorded length: its bytes from `at` to its `\n`.
      if (window[at + length - 1] !== NL) return false;
      at += length;
      const event = decodeReferencedLine(
        line,
        pinned[index] ?? -1,
        runs,
        vocabulary,
      );
      if (event === undefined) return false;
      if (order === undefined) events.push(event);
      else events[index] = event;
    }
    run = runEnd;
  }
  return true;
};

/**
 * Where the window that starts at the `i`-th line in file order ends: the
 * lines after it join while they follow within {@link GAP} and the window
 * stays within {@link BLOCK}.
 */
const windowOf = (
  into: Referenced,
  i: number,
): { readonly from: number; readonly to: number; readonly j: number } => {
  const { offsets, lengths, pinned } = into;
  const first = byOffset(into, i);
  const from = (offsets[first] ?? 0) - 1;
  let to = from + 1 + (lengths[first] ?? 0);
  let j = i + 1;
  while (j < pinned.length) {
    const k = byOffset(into, j);
    const start = offsets[k] ?? 0;
    const end = start + (lengths[k] ?? 0);
    if (start < to || start - to > GAP || end - from > BLOCK) break;
    to = end;
    j++;
  }
  return { from, to, j };
};

/** Decodes the held lines, `heldFrom` to `seq - 1`, from one window. */
const decodeHeld = (
  window: Uint8Array,
  [heldFrom, seq]: readonly [number, number],
  runs: ReturnType<typeof makeRunBudget>,
  vocabulary: Vocabulary | undefined,
): SessionEvent[] | undefined => {
  if (window[0] !== NL || window[window.length - 1] !== NL) return undefined;
  const text = textOf(window.subarray(1, window.length - 1));
  if (text === undefined) return undefined;
  const texts = text.split("\n");
  if (texts.length !== seq - heldFrom) return undefined;
  const held: SessionEvent[] = [];
  for (let k = 0; k < texts.length; k++) {
    const event = decodeReferencedLine(
      texts[k] ?? "",
      heldFrom + k,
      runs,
      vocabulary,
    );
    if (event === undefined) return undefined;
    held.push(event);
  }
  return held;
};

/**
 * Reads and decodes the lines a checkpoint references; undefined when one
 * is not a whole line of its length, or not its seq's event.
 *
 * @param reads What the checkpoint references.
 * @param seq The checkpoint's seq.
 * @param bytes Where the line of `seq` starts.
 * @param range Reads the log.
 * @param vocabulary The open's vocabulary.
 * @returns The events, or undefined.
 */
export const readReferenced = <EIO>(
  reads: CheckpointReads,
  seq: number,
  bytes: number,
  range: ReadRange<EIO>,
  vocabulary: Vocabulary | undefined,
): Effect.Effect<ReferencedEvents | undefined, EIO> =>
  Effect.gen(function* () {
    const { pinned, offsets, lengths, heldFrom, heldBytes } = reads;
    if (offsets === undefined || lengths === undefined) return undefined;
    if (heldBytes === undefined) return undefined;
    // Lines in file order, read a window at a time.
    let sorted = true;
    for (let k = 1; k < offsets.length && sorted; k++) {
      sorted = (offsets[k] ?? 0) > (offsets[k - 1] ?? 0);
    }
    const order = sorted
      ? undefined
      : Array.from(pinned.keys()).sort((a, b) =>
        (offsets[a] ?? 0) - (offsets[b] ?? 0)
      );
    const into: Referenced = {
      pinned,
      offsets,
      lengths,
      order,
      runs: makeRunBudget(),
      vocabulary,
      // Pushed or filled, not `new Array(n)`: past 100,000 elements that
      // makes a dictionary, several times slower and larger.
      events: [],
    };
    if (order !== undefined) {
      for (let k = 0; k < pinned.length; k++) into.events.push(undefined);
    }
    let i = 0;
    while (i < pinned.length) {
      const { from, to, j } = windowOf(into, i);
      const window = yield* range(from, to - from);
      if (window.length !== to - from || window[0] !== NL) return undefined;
      if (!decodeWindow(into, window, from, [i, j])) return undefined;
      i = j;
    }
    // The held lines: one run from `heldBytes` to `bytes`.
    let held: SessionEvent[] = [];
    if (heldFrom < seq) {
      const window = yield* range(heldBytes - 1, bytes - heldBytes + 1);
      if (window.length !== bytes - heldBytes + 1) return undefined;
      const decoded = decodeHeld(
        window,
        [heldFrom, seq],
        into.runs,
        vocabulary,
      );
      if (decoded === undefined) return undefined;
      held = decoded;
    } else if (heldBytes !== bytes) return undefined;
    // Every one was set, or the read returned undefined above.
    return { pinned: into.events as SessionEvent[], held };
  });
