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
 * (`line.ts`), with its own index's bound on source runs.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import type { SessionEvent } from "../event.ts";
import type { Vocabulary } from "../decode.ts";
import {
  type CorruptLine,
  type FormatTooNew,
  type FormatTooOld,
  LineTooLong,
} from "./errors.ts";
import { decodeCurrentLine, makeRunBudget } from "./line.ts";

/** Why a range could not be read from the log's bytes. */
export type RangeScanError =
  | CorruptLine
  | LineTooLong
  | FormatTooNew
  | FormatTooOld;

/** A scan of a log's bytes for the events of seqs `[from, to)`. */
export interface RangeScan {
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

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
};

/**
 * A scan for the events of seqs `[from, to)`.
 *
 * @param from The first seq.
 * @param to The seq after the last.
 * @param vocabulary Extra log-only types.
 * @param maxLineBytes The longest line of the range accepted.
 * @returns The scan.
 */
export function makeRangeScan(
  from: number,
  to: number,
  vocabulary: Vocabulary | undefined,
  maxLineBytes: number,
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
  let start = 0;
  const wanted = (n: number): boolean =>
    n === 1 || (n - 2 >= from && n - 2 < to);

  const take = (bytes: Uint8Array): Result.Result<void, RangeScanError> => {
    const event = decodeCurrentLine(decoder, bytes, line, runs, options);
    if (Result.isFailure(event)) return Result.fail(event.failure);
    if (event.success !== undefined) found.push(event.success);
    return Result.void;
  };

  const done = (): boolean => line - 2 >= to;

  return {
    events: () => found,
    push: (bytes) => {
      let at = 0;
      while (at < bytes.length && !done()) {
        const nl = bytes.indexOf(NL, at);
        const keep = wanted(line);
        const end = nl === -1 ? bytes.length : nl;
        if (keep) {
          const part = bytes.subarray(at, end);
          pending = pending.length === 0 ? part.slice() : concat(pending, part);
          if (pending.length > maxLineBytes) {
            return Result.fail(
              new LineTooLong({ line, offset: start, limit: maxLineBytes }),
            );
          }
        }
        if (nl === -1) break;
        if (keep) {
          const taken = take(pending);
          if (Result.isFailure(taken)) return Result.fail(taken.failure);
          pending = new Uint8Array(0);
        }
        line += 1;
        start = offset + nl + 1;
        at = nl + 1;
      }
      offset += bytes.length;
      return Result.succeed(done());
    },
  };
}
