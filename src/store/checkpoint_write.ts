/**
 * Writing checkpoints, in every store layer: {@link writeCheckpoint} (the
 * encoding is `src/log/checkpoint.ts`'s, where the text goes the layer's
 * {@link CheckpointTarget}), and the layer's {@link Checkpointer}, which
 * writes one when its policy says so (after a batch, on close) and on
 * demand (`store.checkpoint`). `store.checkpoint` writes one on any write
 * handle, however it was opened: what the session does not hold (the event
 * before the boundary, where the lines are) is read through the store.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import type { SessionEvent } from "../core/event.ts";
import { encodeCheckpoint } from "../log/checkpoint.ts";
import { decodeReferencedLine, makeRunBudget } from "../log/line.ts";
import { SessionSeq } from "../core/seq.ts";
import type { Session } from "../session/session.ts";
import { logEvent } from "../surface/mod.ts";
import {
  makeLineTable,
  type ReadRange,
  scanLines,
  storedLinesOf,
} from "./checkpoint_lines.ts";
import type { CheckpointMark, ResolvedPolicy } from "./checkpoints.ts";
import { StorageError } from "./errors.ts";
import type { HandleRegistry, HandleState } from "./handles.ts";
import type { StoreCore } from "./core.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Where a handle's checkpoints go: what it knows of the newest, and how its layer stores one. */
export interface CheckpointTarget<EW> {
  /** The handle's newest checkpoint. */
  readonly mark: CheckpointMark;
  /** Stores a checkpoint's text, replacing the old one. */
  readonly put: (text: string) => Effect.Effect<void, EW>;
  /** For a log stored as bytes: reads them. */
  readonly range?: ReadRange<EW> | undefined;
  /** For rows: the stored line of one event, without `\n`. */
  readonly lineAt?:
    | ((seq: number) => Effect.Effect<string | undefined, EW>)
    | undefined;
}

/** The event of a stored line, decoded as a checkpoint's last event. */
const lastEventOf = (
  session: Session,
  line: string | undefined,
): SessionEvent | undefined =>
  line === undefined ? undefined : decodeReferencedLine(
    line,
    session.surface.nextSeq - 1,
    makeRunBudget(),
    session.vocabulary,
  );

/** The text of a stored line read from its bytes, without `\n`. */
const lineText = (bytes: Uint8Array): string | undefined => {
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 10) return undefined;
  try {
    return decoder.decode(bytes.subarray(0, bytes.length - 1));
  } catch {
    return undefined;
  }
};

/**
 * Writes a checkpoint of `session` through the target when it covers
 * anything past the target's mark, and moves the mark to it. For a log
 * stored as bytes (`bytes` given), the handle's line table is first brought
 * up to the log's end (`checkpoint_lines.ts`); the event before the
 * boundary is read through the store when the session does not hold it.
 *
 * @param session The handle's session.
 * @param bytes For a log stored as bytes: its length.
 * @param target The handle's checkpoint target.
 * @returns The seq the newest checkpoint covers up to (undefined: the log
 * is empty); a `StorageError` that says what to do when the stored log is
 * not the handle's.
 */
export const writeCheckpoint = <EW>(
  session: Session,
  bytes: number | undefined,
  target: CheckpointTarget<EW>,
): Effect.Effect<SessionSeq | undefined, EW | StorageError> =>
  Effect.gen(function* () {
    const { mark } = target;
    const surface = session.surface;
    const at = surface.nextSeq;
    if (mark.seq === at && at > 0) return SessionSeq.make(at);
    if (at === surface.baseSeq) return undefined;
    const notWritten = (why: string) =>
      new StorageError({
        operation:
          `write a checkpoint (${why}: open the session again and retry) of`,
        id: session.header.id,
        code: undefined,
        cause: undefined,
      });
    let lines;
    let lastLine: string | undefined;
    const held = logEvent(surface, SessionSeq.make(at - 1)) !== undefined;
    if (bytes !== undefined) {
      const range = target.range;
      if (range === undefined) return yield* notWritten("no stored bytes");
      let table = mark.lines ?? makeLineTable(surface.baseSeq);
      const span = [surface.baseSeq, at] as const;
      if (!(yield* scanLines(table, range, bytes, span))) {
        // What the handle knew does not match the log: scan it whole.
        table = makeLineTable(surface.baseSeq);
        if (!(yield* scanLines(table, range, bytes, span))) {
          return yield* notWritten("the stored log is not the handle's");
        }
      }
      mark.lines = table;
      lines = storedLinesOf(table, bytes);
      if (!held) {
        const start = lines.start(at - 1) ?? 0;
        lastLine = lineText(yield* range(start, lines.length(at - 1) ?? 0));
      }
    } else if (!held) {
      if (target.lineAt === undefined) {
        return yield* notWritten("no stored rows");
      }
      lastLine = yield* target.lineAt(at - 1);
    }
    const record = encodeCheckpoint(
      session,
      { lines, last: lastEventOf(session, lastLine) },
      mark.since,
    );
    if (record === undefined) {
      return yield* notWritten("the stored log does not hold its events");
    }
    yield* target.put(record.text);
    mark.seq = record.seq;
    mark.since = record.since;
    return record.seq;
  });

/** A layer's checkpointing under its policy. */
export interface Checkpointer {
  /**
   * After a durable batch: writes a checkpoint when the policy says one is
   * due. Never fails: a checkpoint is derived data, and a failed write
   * costs the next open a longer replay only.
   */
  readonly afterBatch: <EW>(
    session: Session,
    bytes: number | undefined,
    target: CheckpointTarget<EW>,
  ) => Effect.Effect<void>;
  /** When a write handle closes: the same, by the policy's `onClose`. */
  readonly onClose: <EW>(
    session: Session,
    bytes: number | undefined,
    target: CheckpointTarget<EW>,
  ) => void;
  /**
   * A layer's `store.checkpoint`: on a writable handle, under its permit,
   * writes one now.
   */
  readonly now: <S extends HandleState>(
    handles: HandleRegistry<S>,
    targetOf: (state: S) => {
      readonly bytes: number | undefined;
      readonly target: CheckpointTarget<StorageError>;
    },
  ) => StoreCore["checkpoint"];
}

/**
 * The checkpointing of a layer with this policy (undefined: none is written
 * on its own; `store.checkpoint` still writes one).
 *
 * @param policy The resolved policy.
 * @returns The layer's checkpointer.
 */
export const makeCheckpointer = (
  policy: ResolvedPolicy | undefined,
): Checkpointer => ({
  afterBatch: (session, bytes, target) =>
    policy !== undefined &&
      session.surface.nextSeq > policy.holdLogUpTo &&
      session.surface.nextSeq - target.mark.seq >= policy.everyEvents
      ? Effect.ignore(writeCheckpoint(session, bytes, target))
      : Effect.void,
  onClose: (session, bytes, target) => {
    const next = session.surface.nextSeq;
    const since = next - target.mark.seq;
    if (
      policy?.onClose === undefined || next <= policy.holdLogUpTo ||
      since <= 0 || since < policy.onClose
    ) {
      return;
    }
    Effect.runSync(Effect.ignore(writeCheckpoint(session, bytes, target)));
  },
  now: (handles, targetOf) => (handle) =>
    Effect.suspend((): ReturnType<StoreCore["checkpoint"]> => {
      const writable = handles.writable(handle);
      if (Result.isFailure(writable)) return Effect.fail(writable.failure);
      const state = writable.success;
      return state.semaphore.withPermits(1)(
        Effect.suspend(() => {
          const { bytes, target } = targetOf(state);
          return writeCheckpoint(state.session, bytes, target);
        }),
      );
    }),
});
