/**
 * The Claude Code importer run incrementally over mirrored entries: each
 * entry is kept whole as a log-only event ({@link ENTRY_TYPE}, ignorable, its
 * data the entry as given) and then handed to the importer's line steps,
 * whose events follow it in the same log. So the session's log holds every
 * entry losslessly and its surface is what importing the transcript gives.
 *
 * The importer joins an assistant message from its lines (one block per
 * line, one `message.id`): at the end of a batch the message is emitted
 * when it is complete (a line of it carried the stop reason), else it
 * waits for the next entry, as in an import of the file. A store reopened
 * in a new process replays the stored entries through a fresh import to
 * get its state back, emitting the pending message where the stored log
 * shows it was.
 *
 * @module
 */
import * as Result from "effect/Result";
import type { SessionEvent } from "../core/event.ts";
import { eventTypeName } from "../core/event.ts";
import { append, type Builder, makeBuilder } from "../import/builder.ts";
import {
  claudeLines,
  type ClaudeState,
  claudeState,
  flush,
} from "../import/claude_code.ts";
import { handleRecord, type RecordTable } from "../import/records.ts";

/** The type of the log-only event that keeps one entry. */
export const ENTRY_TYPE = "claude-code/entry";

/** An incremental import. */
export interface Mirror {
  /** The importer's state over its builder. */
  readonly state: ClaudeState;
  /** The importer's line table over the state. */
  readonly lines: RecordTable;
  /** Entries seen, as the importer numbers lines (1-based). */
  line: number;
  /**
   * Set once the importer refused an entry: from there on entries are only
   * kept, not imported (the report of an import of the file says why).
   */
  stopped: boolean;
  /** The `uuid` of every entry kept. */
  readonly uuids: Set<string>;
}

/** An import that has read nothing. */
export const newMirror = (): Mirror => {
  const state = claudeState(makeBuilder());
  return {
    state,
    lines: claudeLines(state),
    line: 0,
    stopped: false,
    uuids: new Set(),
  };
};

/** The builder of a mirror. */
export const builderOf = (m: Mirror): Builder => m.state.b;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Keeps one entry and imports it.
 *
 * @returns False when the entry could not even be kept (not JSON data).
 */
export const feed = (m: Mirror, entry: Record<string, unknown>): boolean => {
  m.line++;
  const uuid = entry["uuid"];
  if (typeof uuid === "string") m.uuids.add(uuid);
  const kept = append(m.state.b, {
    type: ENTRY_TYPE,
    ignorable: true,
    data: entry,
  }, m.line);
  if (Result.isFailure(kept)) return false;
  if (m.stopped) return true;
  const handled = handleRecord(m.state.b, m.lines, entry, m.line);
  if (Result.isFailure(handled)) m.stopped = true;
  return true;
};

/**
 * Whether the mirror kept an entry of this `uuid` already: the SDK retries a
 * batch whose append failed or timed out, and `importSessionToStore`
 * replays a transcript, so an entry with a `uuid` is kept once.
 */
export const seen = (m: Mirror, entry: Record<string, unknown>): boolean => {
  const uuid = entry["uuid"];
  return typeof uuid === "string" && m.uuids.has(uuid);
};

/** Emits the pending message and its results, importing nothing more on a refusal. */
const emit = (m: Mirror): void => {
  if (!m.stopped && Result.isFailure(flush(m.state))) m.stopped = true;
};

/**
 * At the end of a batch: emits the pending message when it is complete, that
 * is when a line of it carried the stop reason. A tool result waiting is no
 * sign: Claude Code writes a call's result before the message's next
 * parallel call.
 */
export const settle = (m: Mirror): void => {
  if (m.state.pending?.stop !== undefined) emit(m);
};

/** The entry an event keeps, if it keeps one. */
export const entryOf = (
  event: SessionEvent,
): Record<string, unknown> | undefined =>
  eventTypeName(event) === ENTRY_TYPE && isRecord(event.data)
    ? event.data
    : undefined;

/**
 * The import of a stored log, replayed: each kept entry fed again, the
 * pending message emitted where the log shows it was. Undefined when the
 * replay does not give the stored log back (a log not written by a
 * mirror, or by another version of the importer): the caller then keeps
 * entries without importing them.
 */
export const replayMirror = (
  events: ReadonlyArray<SessionEvent>,
): Mirror | undefined => {
  const m = newMirror();
  const b = builderOf(m);
  for (const event of events) {
    const entry = entryOf(event);
    if (entry === undefined) continue;
    if (b.surface.nextSeq < event.seq) emit(m);
    if (b.surface.nextSeq !== event.seq || !feed(m, entry)) return undefined;
  }
  const next = events.length === 0
    ? 0
    : (events[events.length - 1]?.seq ?? 0) + 1;
  if (b.surface.nextSeq < next) emit(m);
  return b.surface.nextSeq === next ? m : undefined;
};
