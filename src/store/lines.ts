/**
 * The line form the JSONL and memory layers both keep a session in: a
 * new log and a batch encoded as lines, and `follow` over stored bytes (serve what is
 * new, wait when nothing is).
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Option from "effect/Option";
import * as Result from "effect/Result";
import * as Stream from "effect/Stream";
import type { Vocabulary } from "../core/decode.ts";
import type { SessionEvent } from "../core/event.ts";
import {
  knownEvents,
  type Session,
  type SessionHeader,
} from "../session/session.ts";
import type { SessionSeq } from "../core/seq.ts";
import { encodeEventLine, encodeHeaderLine } from "../log/codec.ts";
import { type LineFollower, makeLineFollower } from "../log/follow.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../log/reader.ts";
import type { FollowError, FollowOptions } from "./store.ts";

const encoder = new TextEncoder();

/**
 * Events as stored lines, each ending in `\n`.
 *
 * @param events The events, in seq order.
 * @param vocabulary Extra log-only types.
 * @returns The lines, joined.
 */
export const encodeEventLines = (
  events: Iterable<SessionEvent>,
  vocabulary: Vocabulary | undefined,
): string => {
  const options = vocabulary === undefined ? undefined : { vocabulary };
  let text = "";
  for (const event of events) text += encodeEventLine(event, options);
  return text;
};

/**
 * A batch as stored lines: the events of `session` from seq `from` on.
 *
 * @param session The session after the batch.
 * @param from The first seq of the batch.
 * @returns The bytes to store.
 */
export const encodeBatch = (session: Session, from: SessionSeq): Uint8Array =>
  encoder.encode(
    encodeEventLines(knownEvents(session, from), session.vocabulary),
  );

/**
 * Whether the batch of `session` from seq `from` on must be made durable
 * before it counts as stored: every batch but one of `assistant/partial`
 * events alone, which a store writes (a killed process keeps them) without
 * waiting for the disk; the next durable batch, at the latest the settled
 * answer's, makes them durable too.
 *
 * @param session The session after the batch.
 * @param from The first seq of the batch.
 * @returns False for a batch of partial answers only.
 */
export const batchNeedsSync = (session: Session, from: SessionSeq): boolean => {
  for (const event of knownEvents(session, from)) {
    if (event.type !== "assistant/partial") return true;
  }
  return false;
};

/**
 * A new session as stored lines: its header line, then its events.
 *
 * @param header The session's header.
 * @param session The session.
 * @param vocabulary Extra log-only types.
 * @returns The bytes of the log.
 */
export const encodeLog = (
  header: SessionHeader,
  session: Session,
  vocabulary: Vocabulary | undefined,
): Uint8Array =>
  encoder.encode(
    encodeHeaderLine(header) +
      encodeEventLines(
        knownEvents(session, session.surface.baseSeq),
        vocabulary,
      ),
  );

/** Where a follower reads a stored log's bytes. */
export interface LineSource {
  /** Pushes the bytes stored since the last read; the events completed. */
  readonly read: Effect.Effect<ReadonlyArray<SessionEvent>, FollowError>;
  /** Waits until more bytes may be stored. */
  readonly idle: Effect.Effect<void>;
}

/**
 * A layer's `follow` over stored lines: `locate` finds the session when
 * the stream starts (with `waitForSession`, a missing session is looked
 * for again after each `created`), then the stream serves what each read
 * completes from `options.fromSeq` on, and idles when a read brings
 * nothing.
 *
 * @param locate Finds the session, or fails.
 * @param options The follow's options.
 * @param source The reads of the located session, into `follower`.
 * @param created Waits until the session may have been created.
 * @returns The stream of committed events.
 */
export const followLines = <L>(
  locate: () => Result.Result<L, FollowError>,
  options: FollowOptions | undefined,
  source: (located: L, follower: LineFollower) => LineSource,
  created: Effect.Effect<void>,
): Stream.Stream<SessionEvent, FollowError> => {
  const located: Effect.Effect<L, FollowError> = Effect.suspend(() => {
    const found = locate();
    if (Result.isSuccess(found)) return Effect.succeed(found.success);
    return found.failure._tag === "SessionNotFound" &&
        options?.waitForSession === true
      ? Effect.andThen(created, located)
      : Effect.fail(found.failure);
  });
  return Stream.unwrap(Effect.map(located, (found) => {
    const { read, idle } = source(
      found,
      makeLineFollower(
        options?.fromSeq ?? 0,
        options?.vocabulary,
        DEFAULT_MAX_LINE_BYTES,
      ),
    );
    const poll = Effect.flatMap(read, (events) => {
      const next = [events, Option.some(undefined)] as const;
      return events.length > 0 ? Effect.succeed(next) : Effect.as(idle, next);
    });
    return Stream.paginate(undefined, () => poll);
  }));
};
