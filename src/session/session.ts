/**
 * The session: a header, the event log and its surface, as one immutable
 * value, and the append path that gives drafts their seq and time.
 *
 * A draft is an event without `seq` and `time`. Its type enforces the
 * surface rules at compile time (a literal surface type requires
 * `surfaceOp`; `assistant/message` takes no `sourceEventSeqs`; log-only types
 * take neither); decoding and folding check them again at run time for
 * widened values. A rejected draft leaves the session unchanged.
 *
 * A draft's `data` must be a JSON value (no `bigint`, `NaN`, `±Infinity`,
 * `-0`, `undefined`, function, symbol, class instance, sparse array or
 * cycle): anything else is `InvalidEventData` with the path of the first
 * offender, so that every appended event reads back from disk equal to what
 * the log holds. A session takes the data as it is, after one walk that
 * judges it, unless it copies drafts (`copiesDrafts`): then it keeps its own
 * copy, made while judging, and changing a draft after appending it cannot
 * change the log. Every session a store hands out copies drafts, so that a
 * store's log in memory, its checkpoints and what it derives never change
 * with a caller's objects; `Session.make` copies with `copyDrafts`.
 * (`docs/performance.md` has what each costs.) `surfaceOp` and
 * `sourceEventSeqs` are always copied. Events handed out share the log's
 * values and are read-only by type. Events decoded from `JSON.parse` output
 * (the reader) are neither judged nor copied.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as Schema from "effect/Schema";
import type * as Brand from "effect/Brand";
import { isSessionSeq, type SessionSeq } from "../core/seq.ts";
import type {
  AssistantMessageData,
  LogOnlyEvent,
  SessionEvent,
  SurfaceOp,
  SurfaceType,
} from "../core/event.ts";
import type { SurfaceEvent } from "../core/event.ts";
import type { Vocabulary } from "../core/decode.ts";
import { encodeEvent } from "../core/encode.ts";
import {
  type EventDecodeError,
  EventsNotHeld,
  InvalidSessionSeq,
  type SurfaceError,
} from "../core/errors.ts";
import { appendDraft } from "./append.ts";
import { lazyExit } from "../core/lazy_exit.ts";
import {
  emptySurface,
  emptySurfaceAt,
  logEvent,
  logEventsFrom,
  replayResult,
  type Surface,
} from "../surface/mod.ts";

/** The first line of a session file, and the identity of a session. */
export interface SessionHeader {
  /** The session id. */
  readonly id: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  /** True when the log starts with a seed copied from elsewhere. */
  readonly isSeeded: boolean;
  /** The id of the session this one was forked from. */
  readonly parentSession?: string;
  /** Harness metadata. */
  readonly meta?: { readonly [key: string]: unknown };
}

/** Schema of {@link SessionHeader}. */
export const SessionHeader: Schema.Codec<SessionHeader> = Schema.Struct({
  id: Schema.NonEmptyString,
  createdAt: Schema.Int,
  isSeeded: Schema.Boolean,
  parentSession: Schema.optionalKey(Schema.NonEmptyString),
  meta: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
});

/** A session: its header, its log and its surface. */
export interface Session {
  /** The header. */
  readonly header: SessionHeader;
  /** The surface, which also holds the log of its window. */
  readonly surface: Surface;
  /** The extra vocabulary its events are decoded with. */
  readonly vocabulary: Vocabulary | undefined;
  /**
   * Whether an append keeps its own copy of each draft's `data` (true for
   * every session a store hands out, and for one made with `copyDrafts`);
   * otherwise the session takes the data as it is, after judging it.
   */
  readonly copiesDrafts?: boolean;
}

type SurfaceDraftOf<T extends SurfaceType> = {
  /** The event type. */
  readonly type: T;
  /** The type's data. */
  readonly data: Extract<SurfaceEvent, { type: T }>["data"];
  /** Where the event goes on the surface; only a system prompt prepends. */
  readonly surfaceOp: T extends "system/message" ? SurfaceOp
    : Exclude<SurfaceOp, "prepend">;
  /** Marks the event as skippable by readers that do not know it. */
  readonly ignorable?: true;
};

/** A `system/message`, `user/message` or `tool/result` draft. */
export type CitingSurfaceDraft =
  | SurfaceDraftOf<"system/message"> & {
    /** Earlier events it stands for. */
    readonly sourceEventSeqs?: ReadonlyArray<SessionSeq>;
  }
  | SurfaceDraftOf<"user/message"> & {
    /** Earlier events it stands for. */
    readonly sourceEventSeqs?: ReadonlyArray<SessionSeq>;
  }
  | SurfaceDraftOf<"tool/result"> & {
    /** Earlier events it stands for. */
    readonly sourceEventSeqs?: ReadonlyArray<SessionSeq>;
  };

/** An `assistant/message` draft: it never cites sources. */
export interface AssistantMessageDraft {
  /** The event type. */
  readonly type: "assistant/message";
  /** The data. */
  readonly data: AssistantMessageData;
  /** Where the event goes on the surface: never prepended. */
  readonly surfaceOp: Exclude<SurfaceOp, "prepend">;
  /** Marks the event as skippable by readers that do not know it. */
  readonly ignorable?: true;
  /** Never allowed. */
  readonly sourceEventSeqs?: never;
}

/** A core log-only draft: no surface metadata. */
export type LogOnlyDraft = LogOnlyEvent extends infer E
  ? E extends LogOnlyEvent ? {
      /** The event type. */
      readonly type: E["type"];
      /** The data. */
      readonly data: E["data"];
      /** Marks the event as skippable by readers that do not know it. */
      readonly ignorable?: true;
      /** Never allowed. */
      readonly surfaceOp?: never;
      /** Never allowed. */
      readonly sourceEventSeqs?: never;
    }
  : never
  : never;

/** A type name of a caller's extra vocabulary; see {@link extensionType}. */
export type ExtensionType = string & Brand.Brand<"ExtensionType">;

/**
 * Brands the name of an extra log-only type, so a draft of it cannot be
 * mistaken for a core type.
 *
 * @param name The type name, as registered in the vocabulary.
 * @returns The branded name.
 *
 * @example A draft of an extra type
 * ```ts
 * import { extensionType, type EventDraft } from "@palimpsest/session";
 *
 * const draft: EventDraft = { type: extensionType("harness/checkpoint"), data: { label: "a" } };
 * void draft;
 * ```
 */
export function extensionType(name: string): ExtensionType {
  return brandExtension(name);
}

// The brand is nominal only: the vocabulary checks the name when decoding.
const brandExtension = (name: string): ExtensionType => name as ExtensionType;

/** A draft of an extra log-only type. */
export interface ExtensionDraft {
  /** The branded type name. */
  readonly type: ExtensionType;
  /** The data, encoded by the vocabulary's schema. */
  readonly data: unknown;
  /** Marks the event as skippable by readers that do not know it. */
  readonly ignorable?: true;
  /** Never allowed. */
  readonly surfaceOp?: never;
  /** Never allowed. */
  readonly sourceEventSeqs?: never;
}

/** An event without `seq` and `time`: what a harness appends. */
export type EventDraft =
  | CitingSurfaceDraft
  | AssistantMessageDraft
  | LogOnlyDraft
  | ExtensionDraft;

/** A session error: the draft broke an event-local or a relational rule. */
export type AppendError = EventDecodeError | SurfaceError;

/**
 * Why a read of a session's log (`Session.events`, `Session.eventAt`, the
 * provenance functions) gave no answer: a seq given that is not a seq
 * (`InvalidSessionSeq`), or events older than what a session opened from
 * a checkpoint holds (`EventsNotHeld`; the store's `events` and
 * `withHistory` read them).
 */
export type HeldReadError = EventsNotHeld | InvalidSessionSeq;

/** Options of {@link Session.make}. */
export interface MakeOptions {
  /** Extra log-only types this session's events may have. */
  readonly vocabulary?: Vocabulary;
  /** The first seq of the log (a window); 0 by default. */
  readonly baseSeq?: SessionSeq;
  /**
   * Keep a copy of each appended draft's `data`, so that changing a draft
   * after appending it cannot change the session (a store's sessions always
   * do); false by default.
   */
  readonly copyDrafts?: boolean;
}

/** The operations on {@link Session} values. */
export interface SessionApi {
  /**
   * An empty session.
   *
   * @param header The session header.
   * @param options The vocabulary and base seq.
   * @returns A session with an empty log.
   */
  readonly make: (header: SessionHeader, options?: MakeOptions) => Session;
  /**
   * A session folded from decoded events.
   *
   * @param header The session header.
   * @param events Decoded events from the base seq on.
   * @param options The vocabulary and base seq.
   * @returns `Effect<Session, SurfaceError>`.
   */
  readonly fromEvents: (
    header: SessionHeader,
    events: Iterable<SessionEvent>,
    options?: MakeOptions & {
      /**
       * The events are a stored log read back: a replacement that shadows
       * an unanswered tool call, which older versions appended, is
       * accepted. False by default.
       */
      readonly stored?: boolean;
    },
  ) => Effect.Effect<Session, SurfaceError>;
  /**
   * Appends a draft: assigns the next seq and the `Clock` time, judges its
   * data as JSON, decodes and folds it. A rejected draft changes nothing.
   * The session takes the data as it is, unless it copies drafts
   * (`copiesDrafts`: every session a store hands out).
   *
   * @param session The session.
   * @param draft The event without seq and time.
   * @returns `Effect<Session, EventDecodeError | SurfaceError>`.
   */
  readonly append: (
    session: Session,
    draft: EventDraft,
  ) => Effect.Effect<Session, AppendError>;
  /**
   * Appends drafts in order, all or nothing, with one `Clock` reading.
   *
   * @param session The session.
   * @param drafts The events without seq and time.
   * @returns `Effect<Session, EventDecodeError | SurfaceError>`.
   */
  readonly appendAll: (
    session: Session,
    drafts: Iterable<EventDraft>,
  ) => Effect.Effect<Session, AppendError>;
  /**
   * Appends decoded events (seq and time already set), all or nothing.
   *
   * @param session The session.
   * @param events Decoded events continuing the log.
   * @param options `stored: true` for events of a stored log read back
   * (a follower's): a replacement over an unanswered call, which logs
   * from before that rule may hold, is accepted. False by default.
   * @returns `Effect<Session, SurfaceError>`.
   */
  readonly appendEvents: (
    session: Session,
    events: Iterable<SessionEvent>,
    options?: { readonly stored?: boolean },
  ) => Effect.Effect<Session, SurfaceError>;
  /**
   * The log, in seq order, from `fromSeq` on: O(events returned), so asking
   * for what is new since a seq costs what is new.
   *
   * @param session The session.
   * @param fromSeq The first seq to include (a plain non-negative integer
   * will do); the base by default.
   * @returns The events; or `InvalidSessionSeq` when `fromSeq` is not a
   * non-negative safe integer, or `EventsNotHeld` when the session was
   * opened from a checkpoint and does not hold the events from `fromSeq`
   * on (the store's `events` and `withHistory` read them).
   */
  readonly events: (
    session: Session,
    fromSeq?: number,
  ) => Result.Result<ReadonlyArray<SessionEvent>, HeldReadError>;
  /**
   * One event of the log.
   *
   * @param session The session.
   * @param seq The seq (a plain non-negative integer will do).
   * @returns The event, or undefined outside the log; or
   * `InvalidSessionSeq` when `seq` is not a non-negative safe integer, or
   * `EventsNotHeld` when the session was opened from a checkpoint and does
   * not hold that event.
   */
  readonly eventAt: (
    session: Session,
    seq: number,
  ) => Result.Result<SessionEvent | undefined, HeldReadError>;
  /**
   * The first seq whose event the session holds: its base, unless it was
   * opened from a checkpoint or from a long log (then it holds its
   * surface's events and the events from this seq on; `events` and
   * `eventAt` fail with {@link EventsNotHeld} for older ones, and the
   * store's `withHistory` runs a function on it reading them as needed).
   *
   * @param session The session.
   * @returns The first held seq.
   */
  readonly heldFrom: (session: Session) => SessionSeq;
  /**
   * The seq the next appended event gets.
   *
   * @param session The session.
   * @returns The next seq.
   */
  readonly nextSeq: (session: Session) => SessionSeq;
  /**
   * Encodes the log as JSON values in canonical key order.
   *
   * @param session The session.
   * @returns One JSON value per event; or `EventsNotHeld` when the session
   * was opened from a checkpoint and does not hold its whole log.
   */
  readonly encode: (
    session: Session,
  ) => Result.Result<ReadonlyArray<unknown>, EventsNotHeld>;
}

/**
 * Older events of a session that holds only its surface, read through a
 * store for one call (`store.withHistory`): every event from `from` to
 * the surface's `heldFrom`, in seq order. Kept beside the session value,
 * not in it: a session made from this one (by an append) holds only what
 * its surface holds.
 */
interface Earlier {
  readonly from: SessionSeq;
  readonly events: ReadonlyArray<SessionEvent>;
}

const earlier = new WeakMap<Session, Earlier>();

/**
 * The session, also holding `events`: the events just before the first
 * one it holds, consecutive and ending there (`Session.heldFrom` then
 * returns the first of them).
 *
 * @param session The session.
 * @param events The events before its first held one.
 * @returns A session value that holds them too.
 * @throws {RangeError} When `events` do not end just before the first held seq.
 * @internal
 */
export const withEarlierEvents = (
  session: Session,
  events: ReadonlyArray<SessionEvent>,
): Session => {
  const first = events[0];
  if (first === undefined) return session;
  const held = Session.heldFrom(session);
  const last = events[events.length - 1];
  // The caller read them as a range and checked each seq: the ends suffice.
  if (
    first.seq < session.surface.baseSeq || last?.seq !== held - 1 ||
    first.seq !== held - events.length
  ) {
    throw new RangeError(
      `Expected events ending at seq ${
        held - 1
      }, found seqs ${first.seq} to ${last?.seq}`,
    );
  }
  const next = withSurface(session, session.surface);
  const older = earlier.get(session);
  earlier.set(next, {
    from: first.seq,
    events: older === undefined ? events : [...events, ...older.events],
  });
  return next;
};

const withSurface = (session: Session, surface: Surface): Session => ({
  header: session.header,
  surface,
  vocabulary: session.vocabulary,
  copiesDrafts: session.copiesDrafts === true,
});

const invalidSeq = (value: number): Result.Result<never, InvalidSessionSeq> =>
  Result.fail(new InvalidSessionSeq({ value, type: undefined }));

/**
 * The events from `from` on, or `EventsNotHeld` when the session does not
 * hold them (see {@link Session.events}).
 *
 * @param session The session.
 * @param from The first seq.
 * @returns The events, or the refusal.
 * @internal
 */
export const eventsFrom = (
  session: Session,
  from: SessionSeq,
): Result.Result<ReadonlyArray<SessionEvent>, EventsNotHeld> => {
  const surface = session.surface;
  if (from < surface.heldFrom && surface.heldFrom > surface.baseSeq) {
    const older = earlier.get(session);
    const want = Math.max(from, surface.baseSeq);
    if (older === undefined || want < older.from) {
      return Result.fail(
        new EventsNotHeld({
          fromSeq: from,
          heldFrom: older?.from ?? surface.heldFrom,
        }),
      );
    }
    return Result.succeed([
      ...older.events.slice(want - older.from),
      ...logEventsFrom(surface, surface.heldFrom),
    ]);
  }
  return Result.succeed(logEventsFrom(surface, from));
};

/**
 * The events from `from` on, for a caller that knows the session holds
 * them (a batch just appended, a whole log): a miss is a broken invariant.
 * @throws {EventsNotHeld} When the session does not hold them (a defect).
 * @internal
 */
export const knownEvents = (
  session: Session,
  from: SessionSeq,
): ReadonlyArray<SessionEvent> => Result.getOrThrow(eventsFrom(session, from));

/**
 * The event at `seq` (undefined outside the log), for a caller that knows
 * the session holds it: a miss is a broken invariant.
 * @throws {EventsNotHeld} When the session does not hold it (a defect).
 * @internal
 */
export const knownEventAt = (
  session: Session,
  seq: SessionSeq,
): SessionEvent | undefined => Result.getOrThrow(Session.eventAt(session, seq));

/**
 * Operations on sessions. A session is an immutable value: every operation
 * returns a new one and leaves its input usable.
 *
 * @example Appending with a test clock
 * ```ts
 * import { Session } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import { TestClock } from "effect/testing";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   yield* TestClock.setTime(1_000);
 *   const empty = Session.make({ id: "s1", createdAt: 0, isSeeded: false });
 *   const next = yield* Session.append(empty, {
 *     type: "user/message",
 *     surfaceOp: "append",
 *     data: { id: "u0", role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user" } },
 *   });
 *   return yield* Effect.fromResult(Session.events(next));
 * });
 * const [event] = await Effect.runPromise(program.pipe(Effect.provide(TestClock.layer())));
 * assert.equal(event?.seq, 0);
 * assert.equal(event?.time, 1_000);
 * ```
 */
export const Session: SessionApi = {
  make: (header, options) => ({
    header,
    surface: options?.baseSeq === undefined
      ? emptySurface
      : emptySurfaceAt(options.baseSeq),
    vocabulary: options?.vocabulary,
    copiesDrafts: options?.copyDrafts === true,
  }),
  fromEvents: (header, events, options) =>
    lazyExit(() => {
      const session = Session.make(header, options);
      const result = replayResult(events, session.surface, {
        stored: options?.stored === true,
      });
      return result._tag === "Success"
        ? Result.succeed(withSurface(session, result.success))
        : Result.fail(result.failure.error);
    }),
  // One primitive reads the clock and returns the outcome as an Exit: the
  // fiber runs no other step per append.
  append: (session, draft) =>
    Effect.clockWith((clock) => {
      const time = clock.currentTimeMillisUnsafe();
      const result = appendDraft(session, session.surface, draft, time);
      return result._tag === "Success"
        ? Effect.succeed(withSurface(session, result.success))
        : Effect.fail(result.failure);
    }),
  appendAll: (session, drafts) =>
    Effect.clockWith((clock) => {
      const time = clock.currentTimeMillisUnsafe();
      let surface = session.surface;
      for (const draft of drafts) {
        const result = appendDraft(session, surface, draft, time);
        if (result._tag === "Failure") return Effect.fail(result.failure);
        surface = result.success;
      }
      return Effect.succeed(withSurface(session, surface));
    }),
  appendEvents: (session, events, options) =>
    lazyExit(() => {
      const result = replayResult(events, session.surface, {
        stored: options?.stored === true,
      });
      return result._tag === "Success"
        ? Result.succeed(withSurface(session, result.success))
        : Result.fail(result.failure.error);
    }),
  events: (session, fromSeq) => {
    if (fromSeq === undefined) {
      return eventsFrom(session, session.surface.baseSeq);
    }
    return isSessionSeq(fromSeq)
      ? eventsFrom(session, fromSeq)
      : invalidSeq(fromSeq);
  },
  eventAt: (session, at) => {
    if (!isSessionSeq(at)) return invalidSeq(at);
    const surface = session.surface;
    const event = logEvent(surface, at);
    if (
      event === undefined && at < surface.heldFrom && at >= surface.baseSeq
    ) {
      const older = earlier.get(session);
      if (older === undefined || at < older.from) {
        return Result.fail(
          new EventsNotHeld({
            fromSeq: at,
            heldFrom: older?.from ?? surface.heldFrom,
          }),
        );
      }
      return Result.succeed(older.events[at - older.from]);
    }
    return Result.succeed(event);
  },
  heldFrom: (session) => earlier.get(session)?.from ?? session.surface.heldFrom,
  nextSeq: (session) => session.surface.nextSeq,
  encode: (session) =>
    Result.map(
      eventsFrom(session, session.surface.baseSeq),
      (events) =>
        events.map((event) =>
          encodeEvent(
            event,
            session.vocabulary === undefined
              ? undefined
              : { vocabulary: session.vocabulary },
          )
        ),
    ),
};
