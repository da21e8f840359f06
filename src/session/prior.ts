/**
 * What a session opened from a checkpoint knows of the log before the
 * events it holds ({@link LogPrior}), and the backward scans that need it:
 * the last turn started and the turn and step the log is in. A session
 * that holds its whole log answers them from its events alone.
 *
 * @module
 * @internal
 */
import type { SessionEvent } from "../core/event.ts";
import { isObject } from "../core/json.ts";
import type { Session } from "./session.ts";
import { makeWorkTracker } from "./repair.ts";
import {
  applyMetadata,
  EMPTY_METADATA,
  type SessionMetadata,
} from "./metadata_fold.ts";
import {
  heldOf,
  logEvent,
  logEventsFrom,
  seqUnchecked,
} from "../surface/surface.ts";

/** What the log before a session's first held event tells its readers. */
export interface LogPrior {
  /** The number of the last `turn/start` before it, if any. */
  readonly lastTurn: number | undefined;
  /** The turn and step of the last `step/start` or `turn/start` before it. */
  readonly turnStep:
    | { readonly turn: number; readonly step: number }
    | undefined;
  /**
   * What its `session/metadata` events set; absent in a prior written
   * before metadata events existed, which then set nothing.
   */
  readonly metadata?: SessionMetadata | undefined;
}

/** What a log says about its turns, read backwards from a seq. */
export interface TurnMarks {
  /** The number of the last `turn/start`, if any. */
  readonly lastTurn: number | undefined;
  /** The turn and step of the last `step/start` or `turn/start`, if any. */
  readonly turnStep:
    | { readonly turn: number; readonly step: number }
    | undefined;
}

const counter = (u: unknown): number =>
  typeof u === "number" && Number.isSafeInteger(u) && u >= 0 ? u : 0;

/**
 * The prior a session was restored with, or undefined for a session that
 * holds its whole log.
 *
 * @param session The session.
 * @returns Its prior.
 */
export const priorOf = (session: Session): LogPrior | undefined => {
  const prior = heldOf(session.surface)?.prior;
  return isObject(prior) ? prior as unknown as LogPrior : undefined;
};

/**
 * The turn marks of the log before `beforeSeq` (the next seq by default):
 * read backwards over the held events, then from the prior.
 *
 * @param session The session.
 * @param beforeSeq The first seq not to read.
 * @param since Read no further back than `heldFrom`, then take `prior`
 * (what a checkpoint at `heldFrom` recorded); the session's own by default.
 * @returns The marks.
 */
export const turnMarks = (
  session: Session,
  beforeSeq: number = session.surface.nextSeq,
  since?: { readonly heldFrom: number; readonly prior: LogPrior | undefined },
): TurnMarks => {
  let lastTurn: number | undefined;
  let turnStep: { turn: number; step: number } | undefined;
  const surface = session.surface;
  const last = Math.min(beforeSeq, surface.nextSeq) - 1;
  const floor = since === undefined
    ? surface.heldFrom
    : Math.max(since.heldFrom, surface.heldFrom);
  for (let seq = last; seq >= floor; seq--) {
    const event: SessionEvent | undefined = logEvent(
      surface,
      seqUnchecked(seq),
    );
    if (event === undefined || !isObject(event.data)) continue;
    if (event.type === "turn/start") {
      const turn = counter(event.data.turn);
      if (lastTurn === undefined) lastTurn = turn;
      if (turnStep === undefined) turnStep = { turn, step: 0 };
    } else if (event.type === "step/start" && turnStep === undefined) {
      turnStep = {
        turn: counter(event.data.turn),
        step: counter(event.data.step),
      };
    }
    if (lastTurn !== undefined && turnStep !== undefined) break;
  }
  const prior = since === undefined ? priorOf(session) : since.prior;
  return {
    lastTurn: lastTurn ?? prior?.lastTurn,
    turnStep: turnStep ?? prior?.turnStep,
  };
};

/**
 * What the `session/metadata` events of the log before `beforeSeq` set:
 * the prior's metadata, then the held events up to `beforeSeq`.
 *
 * @param session The session.
 * @param beforeSeq The first seq not to read.
 * @param since Read no further back than `heldFrom`, then take `prior`
 * (what a checkpoint at `heldFrom` recorded), when the session holds the
 * events from there; the session's own prior otherwise.
 * @returns The metadata.
 */
export const metadataBefore = (
  session: Session,
  beforeSeq: number,
  since?: { readonly heldFrom: number; readonly prior: LogPrior | undefined },
): SessionMetadata => {
  const surface = session.surface;
  const fromSince = since !== undefined && since.heldFrom >= surface.heldFrom;
  const floor = fromSince ? since.heldFrom : surface.heldFrom;
  let metadata =
    (fromSince ? since.prior?.metadata : priorOf(session)?.metadata) ??
      EMPTY_METADATA;
  const end = Math.min(beforeSeq, surface.nextSeq);
  for (let seq = floor; seq < end; seq++) {
    const event: SessionEvent | undefined = logEvent(
      surface,
      seqUnchecked(seq),
    );
    if (event?.type === "session/metadata") {
      metadata = applyMetadata(metadata, event.data);
    }
  }
  return metadata;
};

/**
 * The events a session holds from its first held seq on: for a session
 * opened from a checkpoint, every event of the work it left open (a
 * checkpoint holds from the start of the oldest open turn or compaction),
 * so an open-work scan over them sees what one over the whole log sees.
 *
 * @param session The session.
 * @returns The held events, in seq order.
 */
export const heldEvents = (session: Session): ReadonlyArray<SessionEvent> =>
  logEventsFrom(session.surface, session.surface.heldFrom);

/**
 * What a read keeps of the events it folds when the session is to hold only
 * its surface: the events since the log was last quiescent (no turn or
 * compaction open), and the turn marks of the log before them. Fed every
 * event in seq order; {@link HeldTail.held} and {@link HeldTail.prior} then
 * are what a checkpoint at the end would record.
 */
export interface HeldTail {
  /** Feeds the next event of the log. */
  readonly push: (event: SessionEvent) => void;
  /** The events from the start of the oldest work still open on. */
  readonly held: () => ReadonlyArray<SessionEvent>;
  /** The turn marks and metadata of the log before the held events. */
  readonly prior: () => LogPrior;
}

/**
 * A fresh {@link HeldTail}: nothing open, nothing held.
 *
 * @returns The tail.
 */
export const makeHeldTail = (): HeldTail => {
  const work = makeWorkTracker();
  let tail: SessionEvent[] = [];
  let lastTurn: number | undefined;
  let turnStep: { turn: number; step: number } | undefined;
  // The marks as of the last quiescent point: what comes before the tail.
  let priorTurn: number | undefined;
  let priorStep: { turn: number; step: number } | undefined;
  let metadata: SessionMetadata = EMPTY_METADATA;
  let priorMetadata: SessionMetadata = EMPTY_METADATA;
  const push = (event: SessionEvent): void => {
    work.push(event);
    if (event.type === "session/metadata") {
      metadata = applyMetadata(metadata, event.data);
    }
    if (event.type === "turn/start") {
      lastTurn = event.data.turn;
      turnStep = { turn: event.data.turn, step: 0 };
    } else if (event.type === "step/start") {
      turnStep = { turn: event.data.turn, step: event.data.step };
    }
    if (!work.quiet()) {
      tail.push(event);
      return;
    }
    // Quiescent after it: nothing before the next event is held.
    if (tail.length > 0) tail = [];
    priorTurn = lastTurn;
    priorStep = turnStep;
    priorMetadata = metadata;
  };
  return {
    push,
    held: () => tail,
    prior: () => ({
      lastTurn: priorTurn,
      turnStep: priorStep,
      metadata: priorMetadata,
    }),
  };
};

/**
 * Feeds the folded `events[from, to)` of a read's buffer to its tail, and
 * says how many events the read has let go once past the bound: `dropped`
 * plus the whole buffer when it is past `holdUpTo` (the caller then starts
 * a new buffer), else `dropped` unchanged.
 *
 * @param tail The read's tail, undefined when it holds every event.
 * @param holdUpTo The bound.
 * @param events The read's buffer.
 * @param from The first folded event to feed.
 * @param to The end of the folded events.
 * @param dropped The events let go before the buffer.
 * @returns The events let go, the buffer's included when it is let go.
 */
export const keepHeld = (
  tail: HeldTail | undefined,
  holdUpTo: number | undefined,
  events: ReadonlyArray<SessionEvent>,
  from: number,
  to: number,
  dropped: number,
): number => {
  if (tail === undefined || holdUpTo === undefined) return dropped;
  for (let i = from; i < to; i++) {
    const event = events[i];
    if (event !== undefined) tail.push(event);
  }
  return dropped + events.length > holdUpTo ? dropped + events.length : dropped;
};
