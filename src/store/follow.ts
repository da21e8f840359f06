/**
 * The options of `follow` that every layer shares, applied around a
 * layer's own follow by `makeSessionStore`: the seqs given (`fromSeq`, the
 * stop seq) are checked, and the stream ends after the event that meets
 * `until`. Waiting for a session to be created is each layer's own (a
 * layer knows how to wait for its storage), see `waitForSession`.
 *
 * @module
 * @internal
 */
import * as Stream from "effect/Stream";
import type { SessionEvent } from "../core/event.ts";
import { InvalidSessionSeq } from "../core/errors.ts";
import { isSessionSeq } from "../core/seq.ts";
import type { FollowError, FollowOptions, FollowUntil } from "./store.ts";

/** Whether `event` meets a stop condition other than a seq. */
const matcher = (
  until: Exclude<FollowUntil, { readonly seq: number }>,
): (event: SessionEvent) => boolean => {
  if (typeof until === "function") return until;
  if (until === "turnEnd") return (event) => event.type === "turn/end";
  const turn = until.turnEnd;
  return (event) => event.type === "turn/end" && event.data.turn === turn;
};

/**
 * A layer's follow with the shared options applied: a `fromSeq` or stop
 * seq that is not a non-negative safe integer fails `InvalidSessionSeq`
 * before anything is read; with `until`, the stream ends after serving
 * the first event that meets it.
 *
 * @param follow The layer's own follow.
 * @returns The store's `follow`.
 */
export const followWithOptions = (
  follow: (
    id: string,
    options?: FollowOptions,
  ) => Stream.Stream<SessionEvent, FollowError>,
) =>
(
  id: string,
  options?: FollowOptions,
): Stream.Stream<SessionEvent, FollowError> => {
  const fromSeq = options?.fromSeq ?? 0;
  if (!isSessionSeq(fromSeq)) {
    return Stream.fail(
      new InvalidSessionSeq({ value: fromSeq, type: undefined }),
    );
  }
  const until = options?.until;
  if (until === undefined) return follow(id, options);
  if (typeof until === "object" && "seq" in until) {
    const stop = until.seq;
    if (!isSessionSeq(stop)) {
      return Stream.fail(
        new InvalidSessionSeq({ value: stop, type: undefined }),
      );
    }
    // Nothing from `fromSeq` on can be at or before the stop.
    if (fromSeq > stop) return Stream.empty;
    return follow(id, options).pipe(
      Stream.takeWhile((event) => event.seq <= stop),
      Stream.takeUntil((event) => event.seq >= stop),
    );
  }
  return Stream.takeUntil(follow(id, options), matcher(until));
};
