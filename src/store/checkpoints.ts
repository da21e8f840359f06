/**
 * Checkpoints in every store layer: the policy a layer is configured with
 * ({@link CheckpointPolicy}: every K events, and on close), the bound on a
 * stored checkpoint's size ({@link checkpointBound}), and the open of a log
 * stored as bytes (a file, the memory layer's chunks) from its newest
 * checkpoint ({@link openFromCheckpoint}). The checkpoint format and its
 * verification are `src/log/checkpoint.ts`'s, writing one is
 * `checkpoint_write.ts`'s; where a layer keeps the text is its own (a
 * sidecar file, a row, a map entry).
 *
 * An open from a checkpoint reads the header, the line before the
 * checkpoint's boundary, the lines the checkpoint references (its surface
 * nodes and the work still open, `checkpoint_lines.ts`) and the lines after
 * it; nothing else. A checkpoint larger than {@link checkpointBound} is not
 * read at all: it is `unreadable`. Whatever does not match (the checkpoint,
 * or the log after it) is reported as `CheckpointRejected` and the layer
 * replays the whole log, which is then the authority on every error.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { FORMAT_VERSION } from "../core/event.ts";
import type { Vocabulary } from "../core/decode.ts";
import {
  checkHeader,
  type CheckpointBoundary,
  type CheckpointCandidate,
  type CheckpointRejected,
  type CheckpointSince,
  decodeCheckpoint,
  readsOfCheckpoint,
  type ReferencedEvents,
  restoreCheckpoint,
  sinceOf,
} from "../log/checkpoint.ts";
import {
  type LineTable,
  readReferenced,
  seededLineTable,
} from "./checkpoint_lines.ts";
import { decodeSessionHeader } from "../log/codec.ts";
import { decodeHeaderText } from "../log/line.ts";
import {
  DEFAULT_MAX_LINE_BYTES,
  type LoadedLog,
  type ReadOptions,
} from "../log/reader.ts";
import type { ResumePoint } from "../log/parser.ts";
import { FoldFailed } from "../log/errors.ts";
import type { Session, SessionHeader } from "../session/session.ts";
import type { OpenOptions, OpenReport } from "./store.ts";
import { readOptionsOf, reportOf } from "./open.ts";

/**
 * When a store writes checkpoints on its own. A checkpoint is also written
 * on demand by `store.checkpoint(handle)`, whatever the policy.
 */
export interface CheckpointPolicy {
  /**
   * Write one after a batch that leaves at least this many events past the
   * last checkpoint; 10,000 by default.
   */
  readonly everyEvents?: number;
  /**
   * When a write handle closes, write one if at least this many events
   * came after the last; 1,000 by default; `false`: never on close.
   */
  readonly onClose?: number | false;
  /**
   * A log of at most this many events is held whole by an open and gets no
   * checkpoint on its own (reading it whole is cheap); a longer one's
   * session holds its surface, the work still open and its latest events.
   * 10,000 by default.
   */
  readonly holdLogUpTo?: number;
}

/** The default {@link CheckpointPolicy.holdLogUpTo}. */
export const HOLD_LOG_UP_TO = 10_000;

/** A layer's `checkpoints` option: a policy, or `false` for none. */
export type CheckpointOptions = CheckpointPolicy | false;

/** A policy with its defaults filled in; undefined for none. */
export interface ResolvedPolicy {
  /** See {@link CheckpointPolicy}. */
  readonly everyEvents: number;
  /** See {@link CheckpointPolicy}. */
  readonly onClose: number | undefined;
  /** See {@link CheckpointPolicy}. */
  readonly holdLogUpTo: number;
}

/**
 * The policy of a layer's options: the defaults when absent, undefined when
 * `false`.
 *
 * @param options The layer's `checkpoints` option.
 * @returns The resolved policy, or undefined.
 */
export const resolvePolicy = (
  options: CheckpointOptions | undefined,
): ResolvedPolicy | undefined => {
  if (options === false) return undefined;
  const onClose = options?.onClose;
  return {
    everyEvents: Math.max(1, options?.everyEvents ?? 10_000),
    onClose: onClose === false ? undefined : Math.max(0, onClose ?? 1_000),
    holdLogUpTo: Math.max(0, options?.holdLogUpTo ?? HOLD_LOG_UP_TO),
  };
};

/** What a handle remembers of the newest checkpoint of its session. */
export interface CheckpointMark {
  /** The seq it covers up to (0: none). */
  seq: number;
  /** Where the next one's scans may stop. */
  since: CheckpointSince | undefined;
  /** For a log stored as bytes: where the handle knows its lines are. */
  lines?: LineTable | undefined;
}

/**
 * The largest checkpoint an open reads: a checkpoint holds a few bytes per
 * surface node, never more than its log, so one larger than the log (plus
 * 64 KiB), or than the longest line a read accepts, is `unreadable`
 * without being read.
 *
 * @param logBytes The log's size (for rows: as a JSONL file).
 * @param maxLineBytes The open's `maxLineBytes`.
 * @returns The bound, in bytes.
 */
export const checkpointBound = (
  logBytes: number,
  maxLineBytes: number | undefined,
): number =>
  Math.min(maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, logBytes + 64 * 1024);

/** A stored checkpoint over {@link checkpointBound}, not read. */
export interface OversizedCheckpoint {
  /** Its size in bytes. */
  readonly size: number;
  /** The bound. */
  readonly bound: number;
}

/** What a layer found where it keeps a session's checkpoint. */
export type StoredCheckpoint = string | OversizedCheckpoint | undefined;

/**
 * The rejection of a checkpoint over its bound.
 *
 * @param found It.
 * @returns The rejection.
 */
export const oversized = (found: OversizedCheckpoint): CheckpointRejected => ({
  problem: "unreadable",
  seq: undefined,
  detail:
    `it is ${found.size} bytes, over the ${found.bound} a checkpoint of this log can take`,
});

/** A log stored as bytes, as an open from a checkpoint reads it. */
export interface ByteLog<EIO> {
  /** `length` bytes from `offset`, or fewer at the end. */
  readonly range: (
    offset: number,
    length: number,
  ) => Effect.Effect<Uint8Array, EIO>;
  /** Reads the lines from `resume.bytes` on onto `resume.surface`. */
  readonly readFrom: <E>(
    resume: ResumePoint,
    options: ReadOptions<E>,
  ) => Effect.Effect<LoadedLog, unknown>;
}

/** The outcome of trying a checkpoint. */
type CheckpointOpen =
  | CheckpointTried
  /** No checkpoint: replay the whole log. */
  | { readonly _tag: "None" };

/** The outcome of a checkpoint there was. */
export type CheckpointTried =
  /** The log read from the checkpoint: only the lines after it. */
  | {
    readonly _tag: "Used";
    readonly log: LoadedLog;
    readonly candidate: CheckpointCandidate;
  }
  /** A checkpoint that did not match: replay the whole log. */
  | { readonly _tag: "Rejected"; readonly rejected: CheckpointRejected };

const decoder = new TextDecoder("utf-8", { fatal: true });

const textOf = (bytes: Uint8Array): string | undefined => {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
};

/** Reads the first line of a byte log, a growing window at a time. */
const headerOf = <EIO>(
  log: ByteLog<EIO>,
  limit: number,
): Effect.Effect<SessionHeader | undefined, EIO> =>
  Effect.gen(function* () {
    for (let window = 4096;; window *= 4) {
      const bytes = yield* log.range(0, Math.min(window, limit + 1));
      const nl = bytes.indexOf(10);
      if (nl >= 0) {
        const text = textOf(bytes.subarray(0, nl));
        if (text === undefined) return undefined;
        const line = decodeHeaderText(text.replace(/\r$/, ""));
        if (Result.isFailure(line)) return undefined;
        if (line.success.version !== FORMAT_VERSION) return undefined;
        const header = decodeSessionHeader(line.success.raw);
        return Result.isSuccess(header) ? header.success : undefined;
      }
      if (bytes.length < window || window > limit) return undefined;
    }
  });

const rejectedWith = (
  candidate: CheckpointCandidate | undefined,
  problem: CheckpointRejected["problem"],
  detail: string,
): { readonly _tag: "Rejected"; readonly rejected: CheckpointRejected } => ({
  _tag: "Rejected",
  rejected: { problem, seq: candidate?.seq, detail },
});

/**
 * Opens a byte log from a checkpoint's text: checks the checkpoint, reads
 * the log's header and its line before the boundary, restores the session
 * and reads the lines after the boundary onto it. Storage failures fail the
 * effect; everything else that does not match is `Rejected`.
 *
 * @param text The checkpoint's text, when the layer has one.
 * @param log The stored log.
 * @param options The open's reader options (a `migrate` is never needed: a
 * checkpoint is only ever of a log of the current version).
 * @returns The outcome.
 */
const openFromCheckpoint = <EIO, E>(
  text: StoredCheckpoint,
  log: ByteLog<EIO>,
  options: ReadOptions<E>,
): Effect.Effect<CheckpointOpen, EIO> =>
  Effect.gen(function* () {
    if (text === undefined) return { _tag: "None" } as const;
    if (typeof text !== "string") {
      return { _tag: "Rejected", rejected: oversized(text) } as const;
    }
    const decoded = decodeCheckpoint(text);
    if (Result.isFailure(decoded)) {
      return { _tag: "Rejected", rejected: decoded.failure } as const;
    }
    const candidate = decoded.success;
    const bytes = candidate.bytes;
    if (bytes === undefined || candidate.lastBytes < 2) {
      return rejectedWith(candidate, "foreign", "not a checkpoint of a file");
    }
    const limit = options.maxLineBytes ?? 256 * 1024 * 1024;
    const header = yield* headerOf(log, limit);
    if (header === undefined) {
      return rejectedWith(candidate, "stale", "the log's header is unreadable");
    }
    const foreign = checkHeader(candidate, header);
    if (foreign !== undefined) {
      return { _tag: "Rejected", rejected: foreign } as const;
    }
    // The boundary line, with the byte before it (the previous line's end).
    const start = bytes - candidate.lastBytes - 1;
    const window = start < 0
      ? new Uint8Array()
      : yield* log.range(start, candidate.lastBytes + 1);
    const lastText = window.length === candidate.lastBytes + 1 &&
        window[0] === 10 && window[window.length - 1] === 10
      ? textOf(window.subarray(1, window.length - 1))
      : undefined;
    if (lastText === undefined) {
      return rejectedWith(
        candidate,
        "stale",
        `the log has no line ending at byte ${bytes}`,
      );
    }
    const events = yield* readReferenced(
      readsOfCheckpoint(candidate),
      candidate.seq,
      bytes,
      log.range,
      options.vocabulary,
    );
    return yield* restoreAndRead(
      candidate,
      { header, lastLine: lastText },
      events,
      options.vocabulary,
      (session, lines) =>
        log.readFrom(
          { header, surface: session.surface, lines, bytes },
          options,
        ),
    );
  });

/**
 * Checks a candidate against the stored log's header and its line at the
 * boundary, restores the session it holds and reads the log after it onto
 * that session (`readTail`, given the session and the lines before its
 * next seq, the header included): `Used`, or `Rejected` when anything does
 * not match or the log after it does not read onto it.
 *
 * @param candidate The checkpoint read back.
 * @param boundary The stored log's header and its line before the boundary.
 * @param events The stored lines it references, decoded (undefined: one
 * is not the event of its seq).
 * @param vocabulary The vocabulary of the open.
 * @param readTail Reads the stored log after the boundary.
 * @returns The outcome.
 */
export const restoreAndRead = (
  candidate: CheckpointCandidate,
  boundary: CheckpointBoundary,
  events: ReferencedEvents | undefined,
  vocabulary: Vocabulary | undefined,
  readTail: (
    session: Session,
    lines: number,
  ) => Effect.Effect<LoadedLog, unknown>,
): Effect.Effect<CheckpointTried> =>
  Effect.gen(function* () {
    const restored = restoreCheckpoint(
      candidate,
      boundary,
      events,
      vocabulary,
    );
    if (Result.isFailure(restored)) {
      return { _tag: "Rejected", rejected: restored.failure } as const;
    }
    const surface = restored.success.surface;
    const tail = yield* Effect.result(
      readTail(restored.success, surface.nextSeq - surface.baseSeq + 1),
    );
    if (Result.isFailure(tail) || tail.success.report.stoppedAt !== undefined) {
      return rejectedWith(
        candidate,
        "invalid",
        "the log after it does not read onto it",
      );
    }
    return { _tag: "Used", log: tail.success, candidate } as const;
  });

/** A log as an open loaded it, its report, and the checkpoint it used. */
export interface LoadedFrom {
  /** The log (only the lines after the checkpoint, when one was used). */
  readonly log: LoadedLog;
  /** The open's report. */
  readonly report: OpenReport;
  /** The checkpoint it used, for the handle to remember. */
  readonly mark: CheckpointMark;
}

/**
 * Reads a log with a bound on the events its session holds, or whole when
 * it holds a rewind: a fold that lets go of the events it has passed
 * cannot bring shadowed nodes back (`RewindNotHeld`), so such a log is
 * read again without the bound.
 *
 * @param whole Reads the whole log with these reader options.
 * @param read The reader options.
 * @param holdLogUpTo The bound.
 * @returns The load.
 */
const wholeUnlessRewound = <E, EW>(
  whole: (read: ReadOptions<E>) => Effect.Effect<LoadedLog, EW>,
  read: ReadOptions<E>,
  holdLogUpTo: number,
): Effect.Effect<LoadedLog, EW> =>
  Effect.catchIf(
    whole({ ...read, holdLogUpTo }),
    (error) => rewindNotHeld(error),
    () => whole(read),
  );

const rewindNotHeld = (error: unknown): boolean =>
  error instanceof FoldFailed && error.innerTag === "RewindNotHeld";

/**
 * A layer's load from the whole log, when no checkpoint serves: with
 * `wholeLog`, every event held; else only the surface and the work left
 * open (up to the policy's bound), unless the log rewinds past that.
 *
 * @param whole Reads the whole log with these reader options.
 * @param options The open's options.
 * @param strict Whether a write handle is being opened.
 * @param policy The layer's policy (undefined: checkpoints are off).
 * @param rejected The checkpoint tried and refused, for the report.
 * @returns The load.
 */
export const loadWhole = <E, EW>(
  whole: (read: ReadOptions<E>) => Effect.Effect<LoadedLog, EW>,
  options: OpenOptions<E>,
  strict: boolean,
  policy: ResolvedPolicy | undefined,
  rejected: CheckpointRejected | undefined,
): Effect.Effect<LoadedFrom, EW> => {
  const read = readOptionsOf(options, strict);
  return Effect.map(
    options.wholeLog === true ? whole(read) : wholeUnlessRewound(
      whole,
      read,
      policy?.holdLogUpTo ?? HOLD_LOG_UP_TO,
    ),
    (log): LoadedFrom => ({
      log,
      report: rejected === undefined
        ? reportOf(log)
        : { ...reportOf(log), checkpointRejected: rejected },
      mark: { seq: 0, since: undefined },
    }),
  );
};

/**
 * A layer's load at open: from the checkpoint when the layer keeps them
 * and the open allows it and it matches, else the whole log (`whole`),
 * with a rejected checkpoint in the report.
 *
 * @param policy The layer's policy (undefined: checkpoints are off).
 * @param text Reads the layer's checkpoint text, if any, when it is no
 * larger than {@link checkpointBound} of the log's size and the open's
 * `maxLineBytes` (given).
 * @param log The stored log as bytes.
 * @param options The open's options.
 * @param strict Whether a write handle is being opened.
 * @param whole Reads the whole log with these reader options.
 * @returns The load.
 */
export const loadWithCheckpoint = <EIO, E, EW>(
  policy: ResolvedPolicy | undefined,
  text: (
    maxLineBytes: number | undefined,
  ) => Effect.Effect<StoredCheckpoint, EIO>,
  log: ByteLog<EIO>,
  options: OpenOptions<E>,
  strict: boolean,
  whole: (read: ReadOptions<E>) => Effect.Effect<LoadedLog, EW>,
): Effect.Effect<LoadedFrom, EIO | EW> =>
  Effect.gen(function* () {
    let rejected: CheckpointRejected | undefined;
    if (policy !== undefined && options.wholeLog !== true) {
      const outcome = yield* openFromCheckpoint(
        yield* text(options.maxLineBytes),
        log,
        readOptionsOf(options, strict),
      );
      if (outcome._tag === "Used") {
        const candidate = outcome.candidate;
        const seq = candidate.seq;
        const surface = outcome.log.session.surface;
        return {
          log: outcome.log,
          report: { ...reportOf(outcome.log, seq), checkpoint: seq },
          mark: {
            seq,
            since: sinceOf(candidate),
            // Only a writer writes checkpoints.
            lines: strict
              ? seededLineTable(
                surface.baseSeq,
                readsOfCheckpoint(candidate),
                candidate.bytes ?? 0,
              )
              : undefined,
          },
        };
      }
      if (outcome._tag === "Rejected") rejected = outcome.rejected;
    }
    return yield* loadWhole(whole, options, strict, policy, rejected);
  });
