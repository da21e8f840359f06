/**
 * Following a growing log: bytes in, events out. The store layers feed it
 * what was appended since their last look; it serves the events of the
 * complete lines from a first seq on and keeps a final line without `\n`
 * until its end arrives, so a torn or half-written line is never served.
 * A source whose bytes past the last complete line may change (a file
 * whose torn tail is cut and written again) drops that partial line
 * ({@link LineFollower.dropPartial}) and feeds again from
 * {@link LineFollower.consumed}: held bytes are never glued to new ones.
 *
 * The header line must be of the current format version (a follower does
 * not migrate): an older one is `FormatTooOld`, a newer one `FormatTooNew`.
 * A complete line that does not decode is `CorruptLine` with its number;
 * lines are decoded by `line.ts`, with the reader's bounds (dense lines,
 * source runs).
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
import { decodeCurrentLine, joinBytes, makeRunBudget } from "./line.ts";

/** Errors of following. */
export type FollowLineError =
  | CorruptLine
  | LineTooLong
  | FormatTooNew
  | FormatTooOld;

/** A follower's state: push bytes, get events. */
export interface LineFollower {
  /**
   * Bytes consumed so far (complete lines only): the offset of the end of
   * the last complete line.
   */
  readonly consumed: () => number;
  /** Bytes held of a line whose `\n` has not come yet. */
  readonly partial: () => number;
  /**
   * Forgets the held partial line: the next bytes pushed start at
   * {@link LineFollower.consumed}.
   */
  readonly dropPartial: () => void;
  /**
   * Takes the next bytes of the log.
   *
   * @returns The events of the lines completed by them, from `fromSeq` on.
   */
  readonly push: (
    bytes: Uint8Array,
  ) => Result.Result<ReadonlyArray<SessionEvent>, FollowLineError>;
}

const NL = 10;

/**
 * Makes a follower.
 *
 * @param fromSeq The first seq to serve.
 * @param vocabulary Extra log-only types.
 * @param maxLineBytes The longest line kept waiting for its end.
 * @returns The follower.
 */
export const makeLineFollower = (
  fromSeq: number,
  vocabulary: Vocabulary | undefined,
  maxLineBytes: number,
): LineFollower => {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const options = vocabulary === undefined ? undefined : { vocabulary };
  let pending = new Uint8Array(0);
  let consumed = 0;
  let line = 0;
  const runs = makeRunBudget();

  const take = (
    bytes: Uint8Array,
  ): Result.Result<SessionEvent | undefined, FollowLineError> => {
    line += 1;
    // The same decoder as the reader's, with the same bounds: the event of
    // line k stands at index k - 2, and the follow has one run budget.
    const event = decodeCurrentLine(decoder, bytes, line, runs, options);
    return Result.isSuccess(event) && event.success !== undefined &&
        event.success.seq < fromSeq
      ? Result.succeed(undefined)
      : event;
  };

  return {
    consumed: () => consumed,
    partial: () => pending.length,
    dropPartial: () => {
      pending = new Uint8Array(0);
    },
    push: (bytes) => {
      const buffer = pending.length === 0 ? bytes : joinBytes(pending, bytes);
      const events: SessionEvent[] = [];
      let start = 0;
      for (
        let nl = buffer.indexOf(NL);
        nl !== -1;
        nl = buffer.indexOf(NL, start)
      ) {
        const taken = take(buffer.subarray(start, nl));
        if (Result.isFailure(taken)) return Result.fail(taken.failure);
        if (taken.success !== undefined) events.push(taken.success);
        consumed += nl + 1 - start;
        start = nl + 1;
      }
      pending = buffer.slice(start);
      if (pending.length > maxLineBytes) {
        return Result.fail(
          new LineTooLong({
            line: line + 1,
            offset: consumed,
            limit: maxLineBytes,
          }),
        );
      }
      return Result.succeed(events);
    },
  };
};
