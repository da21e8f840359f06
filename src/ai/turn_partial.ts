/**
 * The durable partial answer of the turn loop: while a request streams, its
 * timed parts are appended in bounded batches as `assistant/partial` events
 * (log-only, `ignorable: true`), so that a process killed mid-answer keeps
 * what had streamed and a follower in another process sees it as it comes.
 *
 * A batch is written when the parts waiting reach `maxBytes` of JSON (4 KB
 * by default), inline, so the stream waits for the write; or `interval`
 * (100 ms by default) after the first part that waits, by a timer fiber. The
 * parts that remain when the stream ends are not written as a batch: the
 * settled `assistant/message` (or `assistant/attempt`) that follows embeds
 * the whole stream. Each batch is an ordinary store append, one durable
 * batch (the JSONL store fsyncs it, PostgreSQL commits it): at most one
 * every `interval` plus one per `maxBytes` streamed.
 *
 * A batch that fails to be written stops the partial writes of the request
 * (the settled answer's own append reports the store's state); a partial
 * answer is a help for people and for followers, not the record.
 *
 * @module
 * @internal
 */
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import type * as Scope from "effect/Scope";
import * as Semaphore from "effect/Semaphore";
import type { Response } from "effect/ai";
import type { ModelSource } from "../core/message.ts";
import type { SessionHandle, SessionStore } from "../store/store.ts";
import type { EventDraft } from "../session/session.ts";
import type { TimedPart } from "./record.ts";
import { appendDrafts } from "./_store.ts";
import type { PartialOptions } from "./turn_types.ts";

/** The default bound on the wait of a streamed part before it is written. */
export const DEFAULT_PARTIAL_INTERVAL: Duration.Duration = Duration.millis(100);
/** The default bound on the JSON bytes of the parts waiting to be written. */
export const DEFAULT_PARTIAL_MAX_BYTES = 4096;

/** A turn's partial-write settings, drawn from its options. @internal */
export interface PartialSettings {
  readonly interval: Duration.Duration;
  readonly maxBytes: number;
}

/**
 * The settings of `options` (`false` turns partial writes off).
 * @internal
 */
export const partialSettings = (
  options: PartialOptions | false | undefined,
): PartialSettings | undefined =>
  options === false ? undefined : {
    interval: options?.interval === undefined
      ? DEFAULT_PARTIAL_INTERVAL
      : Duration.fromInputUnsafe(options.interval),
    maxBytes: Math.max(1, options?.maxBytes ?? DEFAULT_PARTIAL_MAX_BYTES),
  };

/**
 * The writer of one request's partial batches: told each part as it is
 * pushed to the request's parts; closed with the scope it was made in
 * (waiting for a batch being written, so none lands after the settled
 * answer).
 * @internal
 */
export interface PartialWriter {
  /**
   * The part just pushed to the request's parts, with the length of its
   * JSON: what to run now (a batch to write, a timer to start), or
   * `undefined` for nothing, so that most parts cost no effect.
   */
  readonly add: (
    part: Response.AnyPart,
    size: number,
  ) => Effect.Effect<void, never, SessionStore> | undefined;
}

const NO_WRITER: PartialWriter = { add: () => undefined };

/** The delta parts of a stream: their deltas may be joined. */
type DeltaType = "text-delta" | "reasoning-delta" | "tool-params-delta";

/** The delta and its part's id when `chunk` is a delta part with no metadata. */
const joinable = (
  chunk: Response.StreamPartEncoded,
): { type: DeltaType; id: string; delta: string } | undefined => {
  switch (chunk.type) {
    case "text-delta":
    case "reasoning-delta":
    case "tool-params-delta": {
      // A part with provider metadata is kept whole: joining would lose it.
      const metadata = chunk.metadata;
      if (metadata !== undefined) {
        for (const _ in metadata) return undefined;
      }
      return { type: chunk.type, id: chunk.id, delta: chunk.delta };
    }
    default:
      return undefined;
  }
};

/**
 * `records` with each run of joinable deltas of one part (same type and
 * id) joined into one delta, timed with the run's last.
 */
export const joinDeltas = (
  records: ReadonlyArray<TimedPart>,
): Array<TimedPart> => {
  const out: TimedPart[] = [];
  let i = 0;
  while (i < records.length) {
    const record = records[i];
    if (record === undefined) break;
    const first = joinable(record.chunk);
    i++;
    if (first === undefined) {
      out.push(record);
      continue;
    }
    let delta = first.delta;
    let time = record.time;
    let joined = false;
    for (; i < records.length; i++) {
      const next = records[i];
      const more = next === undefined ? undefined : joinable(next.chunk);
      if (
        next === undefined || more === undefined ||
        more.type !== first.type || more.id !== first.id
      ) break;
      delta += more.delta;
      time = next.time;
      joined = true;
    }
    out.push(
      joined
        ? {
          time,
          chunk: { type: first.type, id: first.id, delta, metadata: {} },
        }
        : record,
    );
  }
  return out;
};

/**
 * A {@link PartialWriter} of the request of `turn`/`step` whose parts are
 * pushed to `parts`; a writer that writes nothing when `settings` is
 * `undefined`.
 *
 * A batch joins the consecutive deltas of one part (text, reasoning, tool
 * arguments) into one delta part ({@link joinDeltas}): the batches of a
 * request say what its stream said, in far fewer records (their `offset`
 * still counts the stream's parts), and the byte bound counts a joined
 * delta's text, not the JSON of each part; the settled answer keeps each
 * part as it came.
 * @internal
 */
export const makePartialWriter = (
  handle: SessionHandle,
  where: {
    readonly turn: number;
    readonly step: number;
    readonly source: ModelSource;
  },
  parts: ReadonlyArray<TimedPart>,
  settings: PartialSettings | undefined,
): Effect.Effect<PartialWriter, never, Scope.Scope | SessionStore> => {
  if (settings === undefined) return Effect.succeed(NO_WRITER);
  return Effect.gen(function* () {
    const lock = yield* Semaphore.make(1);
    const scope = yield* Effect.scope;
    // The parts before `written` are written; those after wait.
    let written = 0;
    let waitingBytes = 0;
    let timer = false;
    let closed = false;
    const flush = Semaphore.withPermits(lock, 1)(Effect.suspend(() => {
      const offset = written;
      if (closed || offset >= parts.length) return Effect.void;
      const stream = joinDeltas(parts.slice(offset));
      written = parts.length;
      waitingBytes = 0;
      const draft: EventDraft = {
        type: "assistant/partial",
        ignorable: true,
        data: {
          turn: where.turn,
          step: where.step,
          offset,
          stream,
          // The first batch names the model, for a repair that appends
          // the partial answer as the model's message.
          ...(offset === 0 ? { source: where.source } : {}),
        },
      };
      return Effect.catch(
        Effect.asVoid(appendDrafts(handle, [draft])),
        () =>
          Effect.sync(() => {
            closed = true;
          }),
      );
    })).pipe(Effect.uninterruptible);
    const tick = Effect.andThen(
      Effect.sleep(settings.interval),
      Effect.andThen(
        Effect.sync(() => {
          timer = false;
        }),
        flush,
      ),
    );
    // Closing waits for a batch being written, and none starts after.
    yield* Effect.addFinalizer(() =>
      Semaphore.withPermits(lock, 1)(Effect.sync(() => {
        closed = true;
      }))
    );
    return {
      add: (part, size) => {
        if (closed) return undefined;
        switch (part.type) {
          case "text-delta":
          case "reasoning-delta":
          case "tool-params-delta":
            waitingBytes += part.delta.length;
            break;
          default:
            waitingBytes += size;
        }
        if (waitingBytes >= settings.maxBytes) return flush;
        if (timer) return undefined;
        timer = true;
        return Effect.asVoid(Effect.forkIn(tick, scope));
      },
    };
  });
};
