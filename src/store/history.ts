/**
 * Reading the events a session does not hold, through the store: the
 * store's `events` (a range) and `withHistory` (a history function run on
 * a session that reads what it asks for), the same for every layer.
 *
 * A session opened from a checkpoint, or from a long log, holds its surface
 * and its latest events (`Session.heldFrom`). A range below that is read
 * from the stored log without folding it or holding the rest: the layer's
 * `readRange` (a file's or the memory store's bytes are scanned up to the
 * range's end, decoding only its lines, {@link scanByteRange}; PostgreSQL
 * reads the range's rows). Only a session of the current format holds
 * less than its log (a migrated log is held whole) and a `recover` read
 * holds nothing past its bad line, so the range read serves every range a
 * session can lack; one it refuses anyway (a file changed under the
 * handle) is read by a whole open, which reports what is wrong.
 *
 * `withHistory(handle, f)` runs `f` on the handle's session; when `f` asks
 * for an event the session does not hold (`f` fails with the
 * `EventsNotHeld` that `Session.events`/`eventAt` and the provenance
 * functions return, or throws it), the older events are read, from that
 * seq up to the first held one and at least twice as many as the previous
 * read each time (so a chain of replacements reaching back k times costs
 * O(log k) reads, and the events read are at most the log's), and `f` runs
 * again on a session that also holds them. `f` is a pure history function
 * (`lineage`, `shadowedBy`, `surfaceAt`, `fork`, the view): it may run more
 * than once.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { knownEvents, Session, withEarlierEvents } from "../session/session.ts";
import { SessionSeq } from "../core/seq.ts";
import { isSessionSeq } from "../core/seq.ts";
import { EventsNotHeld, InvalidSessionSeq } from "../core/errors.ts";
import type { SessionEvent } from "../core/event.ts";
import type { Vocabulary } from "../core/decode.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../log/reader.ts";
import {
  type LineIndex,
  makeLineIndex,
  makeRangeScan,
  type RangeScanError,
} from "../log/range.ts";
import type { StoreCore } from "./core.ts";
import type { OpenError, SessionHandle, SessionStore } from "./store.ts";

/** The fewest older events one read of `withHistory` asks for. */
const FIRST_READ = 1024;

/** What the history reads need of a layer. */
export interface HistorySource {
  /** See {@link SessionStore} `open`. */
  readonly open: SessionStore["open"];
  /** See {@link StoreCore} `readRange`. */
  readonly readRange: StoreCore["readRange"];
}

/** The bytes one step of {@link scanByteRange} reads. */
const CHUNK = 1024 * 1024;

/**
 * The events of seqs `[from, to)` of a log stored as bytes, read a chunk
 * at a time until the range is complete (see `log/range.ts`).
 *
 * @param range Reads `length` bytes of the log from `offset` (fewer at its end).
 * @param from The first seq.
 * @param to The seq after the last.
 * @param vocabulary Extra log-only types.
 * @param index Where lines of the log start (read and added to).
 * @returns The events found, in seq order.
 */
export const scanByteRange = <EIO>(
  range: (offset: number, length: number) => Effect.Effect<Uint8Array, EIO>,
  from: number,
  to: number,
  vocabulary: Vocabulary | undefined,
  index?: LineIndex,
): Effect.Effect<ReadonlyArray<SessionEvent>, EIO | RangeScanError> =>
  Effect.suspend(() => {
    const scan = makeRangeScan(
      from,
      to,
      vocabulary,
      DEFAULT_MAX_LINE_BYTES,
      index,
    );
    const step = (
      offset: number,
    ): Effect.Effect<ReadonlyArray<SessionEvent>, EIO | RangeScanError> =>
      Effect.flatMap(range(offset, CHUNK), (bytes) => {
        const pushed = scan.push(bytes);
        if (Result.isFailure(pushed)) return Effect.fail(pushed.failure);
        return pushed.success || bytes.length < CHUNK
          ? Effect.succeed(scan.events())
          : step(offset + bytes.length);
      });
    return step(scan.offset);
  });

/**
 * The store's `events` and `withHistory` over a layer.
 *
 * @param source The layer's open and range read.
 * @returns The store's `events` and `withHistory`.
 */
export function makeHistoryReads(source: HistorySource): {
  readonly events: SessionStore["events"];
  readonly withHistory: SessionStore["withHistory"];
  readonly withHistoryOn: WithHistoryOn;
} {
  // Where the lines of each handle's log start, as its range reads found.
  const indexes = new WeakMap<SessionHandle, LineIndex>();

  // Events [from, to) of the stored log, below what the session holds.
  const stored = (handle: SessionHandle, from: number, to: number) => {
    const vocabulary = handle.session.vocabulary;
    const whole = Effect.scoped(
      Effect.map(
        source.open(handle.id, {
          mode: "read",
          wholeLog: true,
          ...(vocabulary === undefined ? {} : { vocabulary }),
        }),
        (reader) =>
          knownEvents(reader.session, SessionSeq.make(from)).slice(
            0,
            to - from,
          ),
      ),
    );
    let index = indexes.get(handle);
    if (index === undefined) {
      index = makeLineIndex();
      indexes.set(handle, index);
    }
    return source.readRange(handle.id, from, to, vocabulary, index).pipe(
      Effect.flatMap((events) =>
        events.length === to - from &&
          events.every((event, i) => event.seq === from + i)
          ? Effect.succeed(events)
          : whole
      ),
      Effect.catchTags({
        FormatTooOld: () => whole,
        FormatTooNew: () => whole,
        CorruptLine: () => whole,
        LineTooLong: () => whole,
      }),
    );
  };

  const events: SessionStore["events"] = (handle, options) =>
    Effect.suspend((): ReturnType<SessionStore["events"]> => {
      const session = handle.session;
      for (const value of [options?.fromSeq, options?.toSeq]) {
        if (value !== undefined && !isSessionSeq(value)) {
          return Effect.fail(new InvalidSessionSeq({ value, type: undefined }));
        }
      }
      const next = session.surface.nextSeq;
      const to = Math.min(options?.toSeq ?? next, next);
      const from = Math.max(
        options?.fromSeq ?? session.surface.baseSeq,
        session.surface.baseSeq,
      );
      if (from >= to) return Effect.succeed([]);
      const held = Session.heldFrom(session);
      if (from >= held) {
        return Effect.succeed(
          knownEvents(session, SessionSeq.make(from)).slice(0, to - from),
        );
      }
      if (to <= held) return stored(handle, from, to);
      return Effect.map(
        stored(handle, from, held),
        (older) => [
          ...older,
          ...knownEvents(session, held).slice(0, to - held),
        ],
      );
    });

  const withHistoryOn: WithHistoryOn = <A, E, R>(
    handle: SessionHandle,
    start: Session,
    f: (session: Session) => Effect.Effect<A, E, R>,
  ): Effect.Effect<A, E | OpenError | InvalidSessionSeq, R> => {
    const run = (
      session: Session,
    ): Effect.Effect<A, E | OpenError | InvalidSessionSeq, R> =>
      Effect.suspend(() => f(session)).pipe(
        Effect.catchIf(
          (error): error is E & EventsNotHeld => error instanceof EventsNotHeld,
          (miss) => more(session, miss, Effect.fail(miss)),
        ),
        Effect.catchDefect((defect) =>
          defect instanceof EventsNotHeld
            ? more(session, defect, Effect.die(defect))
            : Effect.die(defect)
        ),
      );
    const more = (
      session: Session,
      miss: EventsNotHeld,
      unfilled: Effect.Effect<never, E>,
    ): Effect.Effect<A, E | OpenError | InvalidSessionSeq, R> => {
      const held = Session.heldFrom(session);
      const base = session.surface.baseSeq;
      // Not a miss this session can fill: f's own outcome stands (a
      // failure, or the defect it threw).
      if (miss.fromSeq >= held || held <= base) return unfilled;
      const readBefore = session.surface.heldFrom - held;
      const from = Math.max(
        base,
        Math.min(miss.fromSeq, held - Math.max(FIRST_READ, 2 * readBefore)),
      );
      return Effect.flatMap(
        events(handle, { fromSeq: from, toSeq: held }),
        (older) => run(withEarlierEvents(session, older)),
      );
    };
    return Effect.suspend(() => run(start));
  };

  const withHistory: SessionStore["withHistory"] = (handle, f) =>
    Effect.suspend(() => withHistoryOn(handle, handle.session, f));

  return { events, withHistory, withHistoryOn };
}

/**
 * `withHistory` from a given session of the handle (the one a commit
 * runs its operation on) rather than the handle's current one.
 */
export type WithHistoryOn = <A, E, R>(
  handle: SessionHandle,
  start: Session,
  f: (session: Session) => Effect.Effect<A, E, R>,
) => Effect.Effect<A, E | OpenError | InvalidSessionSeq, R>;
