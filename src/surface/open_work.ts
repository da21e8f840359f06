/**
 * The open-work index a surface that keeps its log carries for the rewind
 * rule "no turn, step or compaction is open at the point": one entry per
 * `turn/`, `step/` and `compaction/` start or end event, holding its seq
 * and, after it, the seq that opened the turn, the step and the compaction
 * still open (NONE for each closed). The fold adds an entry for those six
 * types only, so every other event pays one type test; a rewind reads the
 * work open right after any point with two binary searches, never a scan
 * of the log.
 *
 * Entries are in seq order, and the path from a point back to the base is
 * consecutive seqs down to the latest rewind before it, whose own point
 * had nothing open: so the entry that speaks for a point is the last one
 * at or before it, unless a rewind came between.
 *
 * @module
 * @internal
 */
import type { OpenWork } from "../core/errors.ts";
import type { SessionEvent } from "../core/event.ts";
import { NONE, type Store, type Writes } from "./persistent_arrays.ts";

/** Numbers per entry: the seq, then the turn, step and compaction opened. */
const WIDTH = 4;
const TURN = 1;
const STEP = 2;
const COMPACTION = 3;

/**
 * Records one log-only event of a surface that keeps its log, when it
 * starts or ends a turn, a step or a compaction; `writes` (when given)
 * gets the undo writes.
 */
export const noteWork = (
  store: Store,
  seq: number,
  type: SessionEvent["type"],
  writes: Writes | undefined,
): void => {
  switch (type) {
    case "turn/start":
    case "turn/end":
    case "step/start":
    case "step/end":
    case "compaction/start":
    case "compaction/end":
      break;
    default:
      return;
  }
  const work = store.work;
  const count = store.workCount[0] ?? 0;
  const last = (count - 1) * WIDTH;
  // The state before: the previous entry's, unless a rewind (which lands
  // where nothing is open) came after it.
  const rewinds = store.rewindCount[0] ?? 0;
  const rewound = rewinds === 0 ? NONE : store.rewinds[rewinds - 1] ?? NONE;
  const carry = count > 0 && (work[last] ?? NONE) > rewound;
  let turn = carry ? work[last + TURN] ?? NONE : NONE;
  let step = carry ? work[last + STEP] ?? NONE : NONE;
  let compaction = carry ? work[last + COMPACTION] ?? NONE : NONE;
  switch (type) {
    case "turn/start":
      turn = seq;
      step = NONE;
      compaction = NONE;
      break;
    case "turn/end":
      turn = NONE;
      step = NONE;
      compaction = NONE;
      break;
    case "step/start":
      step = seq;
      break;
    case "step/end":
      step = NONE;
      break;
    case "compaction/start":
      compaction = seq;
      break;
    default:
      compaction = NONE;
  }
  const at = count * WIDTH;
  if (writes !== undefined) {
    writes.push(
      work,
      at,
      work[at],
      work,
      at + TURN,
      work[at + TURN],
      work,
      at + STEP,
      work[at + STEP],
      work,
      at + COMPACTION,
      work[at + COMPACTION],
      store.workCount,
      0,
      count,
    );
  }
  work[at] = seq;
  work[at + TURN] = turn;
  work[at + STEP] = step;
  work[at + COMPACTION] = compaction;
  store.workCount[0] = count + 1;
};

/** The index of the last of `count` ascending values at or below `x`, or -1. */
const lastAtOrBelow = (
  values: ReadonlyArray<number>,
  stride: number,
  count: number,
  x: number,
): number => {
  let lo = 0;
  let hi = count - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if ((values[mid * stride] ?? NONE) <= x) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
};

/**
 * The work open right after `x` (the latest opened of what is open), or
 * undefined: O(log entries + log rewinds).
 */
export const openWorkAt = (
  store: Store,
  x: number,
): { readonly work: OpenWork; readonly openedAt: number } | undefined => {
  const entry = lastAtOrBelow(store.work, WIDTH, store.workCount[0] ?? 0, x);
  if (entry < 0) return undefined;
  const at = entry * WIDTH;
  const rewind = lastAtOrBelow(store.rewinds, 1, store.rewindCount[0] ?? 0, x);
  if (
    rewind >= 0 && (store.rewinds[rewind] ?? NONE) > (store.work[at] ?? NONE)
  ) {
    return undefined;
  }
  const turn = store.work[at + TURN] ?? NONE;
  const step = store.work[at + STEP] ?? NONE;
  const compaction = store.work[at + COMPACTION] ?? NONE;
  if (turn === NONE && step === NONE && compaction === NONE) return undefined;
  if (step >= turn && step >= compaction) {
    return { work: "step", openedAt: step };
  }
  return compaction >= turn
    ? { work: "compaction", openedAt: compaction }
    : { work: "turn", openedAt: turn };
};
