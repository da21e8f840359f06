/**
 * Reading a range of a stored log's events without reading the rest: the
 * bytes of a log (a file's, or the memory store's) are fed in chunks; only
 * the header line and the lines of the range are decoded, the others are
 * counted, and the scan says when the range is complete so the caller
 * stops reading. A stored log starts at seq 0 and is dense, so the event
 * of line k is seq k - 2; an event whose seq is not its line's is a log
 * the scan does not read (the caller reads the log whole, which reports
 * why). A final line without `\n` (a torn tail) is never decoded.
 *
 * Each line is decoded as the reader and the follower decode it
 * (`line.ts`), with its own index's bound on source runs. A scan given a
 * {@link LineIndex} starts from the nearest line it knows and adds the
 * lines it passes.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import type { SessionEvent } from "../core/event.ts";
import type { Vocabulary } from "../core/decode.ts";
import {
  type CorruptLine,
  type FormatTooNew,
  type FormatTooOld,
  LineTooLong,
} from "./errors.ts";
import {
  decodeCurrentLine,
  decodeCurrentText,
  joinBytes,
  makeRunBudget,
} from "./line.ts";

/** Why a range could not be read from the log's bytes. */
export type RangeScanError =
  | CorruptLine
  | LineTooLong
  | FormatTooNew
  | FormatTooOld;

/**
 * Where some lines of a stored log start: the byte offset of every
 * {@link INDEX_EVERY}th seq's line a scan passed, so that a later scan of
 * the same log starts near its range instead of at the top. A stored log's
 * complete lines never move (it is append-only; only a torn tail is cut),
 * and a scan that finds another seq where it expected one is read whole by
 * the caller.
 */
export interface LineIndex {
  /** Line start offsets, by seq. */
  readonly starts: Map<number, number>;
}

/** How far apart the lines a {@link LineIndex} remembers are, in seqs. */
export const INDEX_EVERY = 1024;

/**
 * An empty index.
 *
 * @returns The index.
 */
export const makeLineIndex = (): LineIndex => ({ starts: new Map() });

/** A scan of a log's bytes for the events of seqs `[from, to)`. */
export interface RangeScan {
  /** The byte offset to feed the log from. */
  readonly offset: number;
  /**
   * Takes the log's next bytes.
   *
   * @returns true once the range is complete (feed no more), false to go on.
   */
  readonly push: (bytes: Uint8Array) => Result.Result<boolean, RangeScanError>;
  /** The events of the range found so far, in seq order. */
  readonly events: () => ReadonlyArray<SessionEvent>;
}

const NL = 10;

/**
 * A scan for the events of seqs `[from, to)`.
 *
 * @param from The first seq.
 * @param to The seq after the last.
 * @param vocabulary Extra log-only types.
 * @param maxLineBytes The longest line of the range accepted.
 * @param index Where lines of this log start, read and added to.
 * @returns The scan.
 */
export function makeRangeScan(
  from: number,
  to: number,
  vocabulary: Vocabulary | undefined,
  maxLineBytes: number,
  index?: LineIndex,
): RangeScan {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const options = vocabulary === undefined ? undefined : { vocabulary };
  const runs = makeRunBudget();
  const found: SessionEvent[] = [];
  // The 1-based number of the line being read, its bytes so far when it is
  // one to decode, and the byte offset where it starts.
  let line = 1;
  let pending: Uint8Array = new Uint8Array(0);
  let offset = 0;
  // Start at the nearest line the index knows at or before the range
  // (the header was checked by the scan that found it).
  for (let seq = from - (from % INDEX_EVERY); index !== undefined && seq > 0;) {
    const known = index.starts.get(seq);
    if (known !== undefined) {
      line = seq + 2;
      offset = known;
      break;
    }
    seq -= INDEX_EVERY;
  }
  const first = offset;
  let start = offset;
  const wanted = (n: number): boolean =>
    n === 1 || (n - 2 >= from && n - 2 < to);

  // The range's complete lines, `count` of them from line `first`, as one
  // block of bytes: decoded from UTF-8 at once (per line only to find a bad
  // one), then line by line.
  const takeBlock = (
    block: Uint8Array,
    first: number,
    count: number,
  ): Result.Result<void, RangeScanError> => {
    let texts: string[] | undefined;
    try {
      texts = decoder.decode(block).split("\n");
    } catch {
      texts = undefined;
    }
    let at = 0;
    for (let i = 0; i < count; i++) {
      let event;
      if (texts === undefined) {
        const nl = block.indexOf(NL, at);
        event = decodeCurrentLine(
          decoder,
          block.subarray(at, nl),
          first + i,
          runs,
          options,
        );
        at = nl + 1;
      } else {
        event = decodeCurrentText(texts[i] ?? "", first + i, runs, options);
      }
      if (Result.isFailure(event)) return Result.fail(event.failure);
      if (event.success !== undefined) found.push(event.success);
    }
    return Result.void;
  };

  const done = (): boolean => line - 2 >= to;

  return {
    offset: first,
    events: () => found,
    push: (bytes) => {
      let at = 0;
      // The range's lines completed in these bytes and not taken yet: from
      // `blockFrom` to `blockEnd` (after the pending bytes), from line
      // `blockLine`, `count` of them. The header and the range are each
      // one run of lines: a block is taken when its run ends.
      let blockFrom = -1;
      let blockEnd = -1;
      let blockLine = 0;
      let count = 0;
      const flush = (): Result.Result<void, RangeScanError> => {
        if (count === 0) return Result.void;
        const tail = bytes.subarray(blockFrom, blockEnd);
        const block = pending.length === 0 ? tail : joinBytes(pending, tail);
        pending = new Uint8Array(0);
        const taken = takeBlock(block, blockLine, count);
        blockFrom = -1;
        count = 0;
        return taken;
      };
      while (at < bytes.length && !done()) {
        const nl = bytes.indexOf(NL, at);
        const keep = wanted(line);
        if (!keep && count > 0) {
          const taken = flush();
          if (Result.isFailure(taken)) return Result.fail(taken.failure);
        }
        // This line's bytes before these ones (a line begun in a chunk before).
        const before = at === 0 ? pending.length : 0;
        if (keep && blockFrom === -1) {
          blockFrom = at;
          blockLine = line;
        }
        const end = nl === -1 ? bytes.length : nl;
        if (keep && before + end - at > maxLineBytes) {
          return Result.fail(
            new LineTooLong({ line, offset: start, limit: maxLineBytes }),
          );
        }
        if (nl === -1) break;
        if (keep) {
          blockEnd = nl + 1;
          count += 1;
        }
        line += 1;
        start = offset + nl + 1;
        at = nl + 1;
        if ((line - 2) % INDEX_EVERY === 0 && line - 2 < to) {
          index?.starts.set(line - 2, start);
        }
      }
      const taken = flush();
      if (Result.isFailure(taken)) return Result.fail(taken.failure);
      // A wanted line not complete yet: its bytes so far.
      if (!done() && wanted(line) && at < bytes.length) {
        const part = bytes.subarray(at);
        pending = pending.length === 0
          ? part.slice()
          : joinBytes(pending, part);
      }
      offset += bytes.length;
      return Result.succeed(done());
    },
  };
}
