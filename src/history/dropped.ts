/**
 * What a compaction dropped: the compactions and prunes of a log, where
 * each sits in the log (its `compaction/start`, its record, the event that
 * replaced the range, its `compaction/end`), the branch that holds it, and
 * the surface nodes it took off, each described (type, role, a short text,
 * tool calls, size), with what replaced them and what later took the
 * replacement off in turn (a compaction over its summary, a rewind).
 *
 * Everything here reads; nothing changes a session. Finding the log's
 * compactions is one scan without a fold ({@link compactionsIn}); what one
 * of them dropped is one fold of the log up to its replacement and on until
 * something takes the replacement off: O(log), as the surface that the
 * fold asks is the library's own. The view draws the same records from its
 * own pass.
 *
 * @module
 */
import * as Result from "effect/Result";
import { seqInput, type SessionSeq } from "../core/seq.ts";
import {
  eventTypeName,
  isSurfaceEvent,
  type SessionEvent,
  type SurfaceEvent,
} from "../core/event.ts";
import type { EventsNotHeld, InvalidSessionSeq } from "../core/errors.ts";
import { estimateTokensByChars } from "../core/tokens.ts";
import {
  applyEventResult,
  type Surface,
  surfaceEvent,
  surfaceNodes,
} from "../surface/mod.ts";
import { projectEvent } from "../surface/project.ts";
import { eventsFrom, type Session } from "../session/session.ts";
import { messageChars } from "./surface_nodes.ts";
import {
  type ReplacementKind,
  replacementKind,
  surfaceAt,
} from "./provenance.ts";
import { type Branch, branchesOf } from "./rewind.ts";
import { CompactionNotFound } from "./errors.ts";

/** The most characters of a dropped node's text that {@link droppedBy} keeps. */
const PREVIEW = 120;

/** A compaction (a summary in place of a range) or a prune (a tool result's content replaced). */
export type DropKind = "compaction" | "prune";

/** One compaction or prune of a log and where its events are. */
export interface LoggedCompaction {
  /** `compaction` or `prune`. */
  readonly kind: DropKind;
  /** The compaction id; undefined for a prune, or a summary no compaction event names. */
  readonly compactionId: string | undefined;
  /** Its `compaction/start`, if any (a prune has none). */
  readonly startSeq: SessionSeq | undefined;
  /** Its record: `compaction/summary`, or `compaction/prune`. */
  readonly recordSeq: SessionSeq | undefined;
  /**
   * The surface event that took the range's place (the summary message, or
   * the pruned tool result); undefined for a compaction that was abandoned
   * or is still open.
   */
  readonly replacementSeq: SessionSeq | undefined;
  /** Its `compaction/end`, if any (a prune has none). */
  readonly endSeq: SessionSeq | undefined;
  /** Whether its `compaction/end` carries an error (the compaction failed). */
  readonly failed: boolean;
  /** The branch of the log that holds it (one branch in a log without rewinds). */
  readonly branch: Branch | undefined;
  /**
   * Whether it is on the path from the log's base to its latest event:
   * false once a rewind went back to a point before it, even when the
   * branch that holds it shares events with the current one.
   */
  readonly onCurrentPath: boolean;
}

/** One surface node a compaction took off, as {@link droppedBy} describes it. */
export interface DroppedNode {
  /** The node's seq. */
  readonly seq: SessionSeq;
  /** Its event type. */
  readonly type: string;
  /** `system`, `user`, `assistant`, or `tool` for a tool result. */
  readonly role: "system" | "user" | "assistant" | "tool";
  /** The start of its first text (or reasoning), at most 120 characters. */
  readonly text: string | undefined;
  /** The tool calls it makes (an assistant message), in order. */
  readonly toolCalls: ReadonlyArray<
    { readonly id: string; readonly name: string }
  >;
  /** The call id it answers (a tool result). */
  readonly toolCallId: string | undefined;
  /** Its characters, as the view and `stats` count them. */
  readonly chars: number;
  /** Its estimated tokens (`estimateTokensByChars`). */
  readonly tokens: number;
  /**
   * When the node itself replaced something (a summary compacted again, a
   * pruned result): that replacement's kind, and its compaction id if it
   * has one.
   */
  readonly replacement:
    | {
      readonly kind: ReplacementKind;
      readonly compactionId: string | undefined;
    }
    | undefined;
}

/** What one compaction or prune took off the surface; see {@link droppedBy}. */
export interface CompactionDrop extends LoggedCompaction {
  /** The nodes it took off, in the order the model saw them. */
  readonly dropped: ReadonlyArray<DroppedNode>;
  /** The seqs of {@link dropped} as runs of consecutive seqs, ascending. */
  readonly ranges: ReadonlyArray<
    { readonly first: SessionSeq; readonly last: SessionSeq }
  >;
  /** The range its replacement named (`surfaceOp`), in surface order. */
  readonly surfaceRange:
    | { readonly startSeq: SessionSeq; readonly endSeq: SessionSeq }
    | undefined;
  /** Characters of the dropped nodes. */
  readonly droppedChars: number;
  /** Estimated tokens of the dropped nodes. */
  readonly droppedTokens: number;
  /** Characters of the replacement (a summary's text length). */
  readonly replacementChars: number;
  /** Estimated tokens of the replacement. */
  readonly replacementTokens: number;
  /**
   * The event that later took the replacement off the surface (a compaction
   * over the summary, a rewind to before it), with its kind.
   */
  readonly takenOffBy:
    | { readonly seq: SessionSeq; readonly kind: ReplacementKind }
    | undefined;
  /** Whether the replacement is on the session's surface now. */
  readonly onSurface: boolean;
}

/** Why {@link droppedBy} gave no answer. */
export type DroppedError =
  | CompactionNotFound
  | EventsNotHeld
  | InvalidSessionSeq;

/** A record being built by the scan. */
interface Building {
  kind: DropKind;
  compactionId: string | undefined;
  startSeq: SessionSeq | undefined;
  recordSeq: SessionSeq | undefined;
  replacementSeq: SessionSeq | undefined;
  endSeq: SessionSeq | undefined;
  failed: boolean;
}

const building = (
  kind: DropKind,
  compactionId: string | undefined,
): Building => ({
  kind,
  compactionId,
  startSeq: undefined,
  recordSeq: undefined,
  replacementSeq: undefined,
  endSeq: undefined,
  failed: false,
});

/** The seqs an event cites (an assistant message cites none). */
const sourcesOf = (event: SurfaceEvent): ReadonlyArray<SessionSeq> =>
  event.type === "assistant/message" ? [] : (event.sourceEventSeqs ?? []);

/**
 * The compactions and prunes of a log, in log order, found by one scan of
 * its events (no fold): a `compaction/start` opens a compaction, its
 * `compaction/summary` and `compaction/end` (same id) join it, and the
 * surface event that cites its start or summary is its replacement; a
 * `compaction/prune` and the `tool/result` that replaces one of its
 * shadowed results make a prune. A replacement of the compaction kind that
 * cites no compaction event is a compaction without an id.
 *
 * @param events The log from its base, in seq order.
 * @returns The compactions and prunes, in the order they start.
 * @internal
 */
export function compactionsIn(
  events: ReadonlyArray<SessionEvent>,
): ReadonlyArray<LoggedCompaction> {
  const list: Building[] = [];
  const open = new Map<string, Building>();
  const byEventSeq = new Map<number, Building>();
  const prunes = new Map<number, Building>();
  const withId = (id: string): Building => {
    const known = open.get(id);
    if (known !== undefined) return known;
    const fresh = building("compaction", id);
    list.push(fresh);
    open.set(id, fresh);
    return fresh;
  };
  for (const event of events) {
    switch (event.type) {
      case "compaction/start": {
        const fresh = building("compaction", event.data.compactionId);
        fresh.startSeq = event.seq;
        list.push(fresh);
        open.set(event.data.compactionId, fresh);
        byEventSeq.set(event.seq, fresh);
        continue;
      }
      case "compaction/summary": {
        const entry = withId(event.data.compactionId);
        entry.recordSeq = event.seq;
        byEventSeq.set(event.seq, entry);
        continue;
      }
      case "compaction/end": {
        const entry = withId(event.data.compactionId);
        entry.endSeq = event.seq;
        entry.failed = event.data.error !== undefined;
        open.delete(event.data.compactionId);
        continue;
      }
      case "compaction/prune": {
        const entry = building("prune", undefined);
        entry.recordSeq = event.seq;
        list.push(entry);
        for (const seq of event.data.shadowedSeqs) prunes.set(seq, entry);
        continue;
      }
    }
    if (!isSurfaceEvent(event)) continue;
    const sources = sourcesOf(event);
    const op = event.surfaceOp;
    const replaces = typeof op === "object" && op.op === "replace";
    const kind = replaces ? replacementKind(event) : undefined;
    if (kind === "prune") {
      const entry = sources.map((s) =>
        prunes.get(s)
      ).find((e) => e !== undefined && e.replacementSeq === undefined) ??
        building("prune", undefined);
      if (entry.recordSeq === undefined) {
        list.push(entry);
      }
      entry.replacementSeq = event.seq;
      for (const s of sources) {
        prunes.delete(s);
      }
      continue;
    }
    // A summary cites its compaction's events; one with nothing to replace
    // is appended, citing them still.
    const entry = sources.map((s) => byEventSeq.get(s)).find((e) =>
      e !== undefined && e.replacementSeq === undefined
    );
    if (entry !== undefined) entry.replacementSeq = event.seq;
    else if (kind === "compaction") {
      const fresh = building("compaction", undefined);
      fresh.replacementSeq = event.seq;
      list.push(fresh);
    }
  }
  const branches = branchesOf(events);
  const path = currentPath(branches);
  return list.map((entry): LoggedCompaction => {
    const at = entry.replacementSeq ?? entry.startSeq ?? entry.recordSeq ?? 0;
    return {
      ...entry,
      branch: branches.find((b) => b.fromSeq <= at && at <= b.tipSeq),
      onCurrentPath: path.some(([from, to]) => from <= at && at <= to),
    };
  });
}

/**
 * The runs of seqs on the path from the base to the latest event: the
 * current branch, then, up the tree, the part of each branch before the
 * point the one below it leaves at.
 */
const currentPath = (
  branches: ReadonlyArray<Branch>,
): Array<readonly [number, number]> => {
  const runs: Array<readonly [number, number]> = [];
  let branch = branches.find((b) => b.current);
  let to = branch?.tipSeq ?? 0;
  // Each step goes to an earlier branch: at most one per branch.
  for (let k = 0; branch !== undefined && k < branches.length; k++) {
    runs.push([branch.fromSeq, to]);
    const leaves = branch.leavesAt;
    if (leaves === undefined) break;
    to = leaves;
    branch = branches.find((b) => b.fromSeq <= leaves && leaves <= b.tipSeq);
  }
  return runs;
};

/**
 * The seqs of a compaction's events, the one callers are likeliest to name
 * first: its replacement, then start, record and end.
 */
const seqsOf = (c: LoggedCompaction): ReadonlyArray<SessionSeq> =>
  [c.replacementSeq, c.startSeq, c.recordSeq, c.endSeq].filter(
    (s): s is SessionSeq => s !== undefined,
  );

/**
 * Finds a compaction by its id (the latest, if an id was reused) or by the
 * seq of any of its events.
 */
const find = (
  list: ReadonlyArray<LoggedCompaction>,
  which: string | SessionSeq,
): LoggedCompaction | undefined => {
  if (typeof which === "string") {
    return list.findLast((c) => c.compactionId === which);
  }
  return list.find((c) => seqsOf(c).includes(which));
};

/** The role shown for each surface type (a tool result's message is user-role). */
const ROLE_OF: Readonly<Record<SurfaceEvent["type"], DroppedNode["role"]>> = {
  "system/message": "system",
  "user/message": "user",
  "assistant/message": "assistant",
  "tool/result": "tool",
};

/**
 * Describes one surface node for a list of what was dropped.
 *
 * @param event The node's event.
 * @param replacementOf The compaction a replacement seq belongs to.
 * @returns The description.
 * @internal
 */
export function describeDropped(
  event: SurfaceEvent,
  replacementOf: (seq: SessionSeq) => LoggedCompaction | undefined,
): DroppedNode {
  const message = projectEvent(event);
  const content = event.type === "user/message"
    ? event.data.content
    : event.data.message.content;
  let text: string | undefined;
  let toolCallId: string | undefined;
  const toolCalls: Array<{ id: string; name: string }> = [];
  for (const block of content) {
    if (block.type === "tool-call") {
      toolCalls.push({ id: block.id, name: block.name });
    } else if (block.type === "tool-result") {
      toolCallId ??= block.toolCallId;
      for (const inner of block.content) {
        if (inner.type === "text") text ??= inner.text;
      }
    } else if (block.type === "text" || block.type === "reasoning") {
      text ??= block.text;
    }
  }
  if (text !== undefined && text.length > PREVIEW) {
    const code = text.charCodeAt(PREVIEW - 1);
    // Never cut a surrogate pair in two.
    text = text.slice(
      0,
      code >= 0xd800 && code <= 0xdbff ? PREVIEW + 1 : PREVIEW,
    );
  }
  const replaced = typeof event.surfaceOp === "object"
    ? replacementKind(event)
    : undefined;
  return {
    seq: event.seq,
    type: eventTypeName(event),
    role: ROLE_OF[event.type],
    text,
    toolCalls,
    toolCallId,
    chars: messageChars(message),
    tokens: message === undefined ? 0 : estimateTokensByChars([message]),
    replacement: replaced === undefined ? undefined : {
      kind: replaced,
      compactionId: replacementOf(event.seq)?.compactionId,
    },
  };
}

/** Folds `event` onto `surface`; the session replayed already, so a failure keeps the surface. */
const step = (surface: Surface, event: SessionEvent): Surface => {
  const next = applyEventResult(surface, event, { stored: true });
  return Result.isSuccess(next) ? next.success : surface;
};

/** Ascending runs of consecutive seqs. */
const runsOf = (
  seqs: ReadonlyArray<SessionSeq>,
): Array<{ first: SessionSeq; last: SessionSeq }> => {
  const runs: Array<{ first: SessionSeq; last: SessionSeq }> = [];
  for (const seq of [...seqs].sort((a, b) => a - b)) {
    const top = runs[runs.length - 1];
    if (top !== undefined && top.last + 1 === seq) top.last = seq;
    else runs.push({ first: seq, last: seq });
  }
  return runs;
};

/**
 * The compactions and prunes of a session's log, in log order, each with
 * where its events are and the branch that holds it. One scan of the log.
 *
 * @param session The session.
 * @returns The compactions; or `EventsNotHeld` when the session holds only
 * its surface (opened from a checkpoint: run it inside `store.withHistory`).
 *
 * @example Two compactions, the second over the first's summary
 * ```ts
 * import { compact, compactions, Draft, Session } from "@palimpsest/session";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   let session = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   session = yield* Session.appendAll(session, [Draft.user("a"), Draft.user("b"), Draft.user("c")]);
 *   session = yield* compact(session, { startSeq: 0, endSeq: 1, summary: "a, b", compactionId: "c1" });
 *   return yield* compact(session, { startSeq: 5, endSeq: 2, summary: "a, b, c", compactionId: "c2" });
 * });
 * const list = Result.getOrThrow(compactions(Effect.runSync(program)));
 * assert.deepEqual(list.map((c) => [c.compactionId, c.startSeq, c.replacementSeq, c.endSeq]), [
 *   ["c1", 3, 5, 6],
 *   ["c2", 7, 9, 10],
 * ]);
 * ```
 */
export function compactions(
  session: Session,
): Result.Result<ReadonlyArray<LoggedCompaction>, EventsNotHeld> {
  return Result.map(
    eventsFrom(session, session.surface.baseSeq),
    compactionsIn,
  );
}

/**
 * What a compaction or a prune took off the surface, and where it is in the
 * log. Name it by its compaction id (a string) or by the seq of any of its
 * events (`compaction/start`, `compaction/summary` or `compaction/prune`,
 * its replacement, `compaction/end`). The answer lists the nodes it took
 * off, in the order the model saw them, each described; their seqs as
 * runs; what replaced them; what later took that replacement off (a
 * compaction over the summary, a rewind that undid it); whether it is on
 * the surface now; and the branch that holds it, which in a log with
 * rewinds may not be the current one. A compaction still open or abandoned
 * dropped nothing. O(log): one fold, up to the replacement and on until
 * something takes it off.
 *
 * @param session The session.
 * @param which A compaction id, or the seq of one of its events.
 * @returns What it dropped; or `CompactionNotFound` (with the log's
 * compaction ids and seqs), `InvalidSessionSeq` for a number that is not a
 * seq, or `EventsNotHeld` as for {@link compactions}.
 *
 * @example What a compaction dropped
 * ```ts
 * import { compact, Draft, droppedBy, Session } from "@palimpsest/session";
 * import { Effect, Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   let session = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   session = yield* Session.appendAll(session, [Draft.user("one"), Draft.user("two"), Draft.user("three")]);
 *   return yield* compact(session, { startSeq: 0, endSeq: 1, summary: "1, 2", compactionId: "c1" });
 * });
 * const drop = Result.getOrThrow(droppedBy(Effect.runSync(program), "c1"));
 * assert.deepEqual(drop.dropped.map((d) => [d.seq, d.role, d.text]), [[0, "user", "one"], [1, "user", "two"]]);
 * assert.deepEqual(drop.ranges, [{ first: 0, last: 1 }]);
 * assert.equal(drop.replacementSeq, 5);
 * assert.equal(drop.replacementChars, 4);
 * assert.equal(drop.onSurface, true);
 * ```
 */
export function droppedBy(
  session: Session,
  which: string | number,
): Result.Result<CompactionDrop, DroppedError> {
  let key: string | SessionSeq;
  if (typeof which === "number") {
    const seq = seqInput(which);
    if (Result.isFailure(seq)) return Result.fail(seq.failure);
    key = seq.success;
  } else key = which;
  const base = session.surface.baseSeq;
  const read = eventsFrom(session, base);
  if (Result.isFailure(read)) return Result.fail(read.failure);
  const events = read.success;
  const list = compactionsIn(events);
  const found = find(list, key);
  if (found === undefined) {
    return Result.fail(
      new CompactionNotFound({
        given: String(which),
        compactionIds: list.flatMap((c) =>
          c.compactionId === undefined ? [] : [c.compactionId]
        ),
        seqs: list.flatMap((c) => seqsOf(c).slice(0, 1)),
      }),
    );
  }
  return Result.succeed(dropOf(session, events, list, found));
}

/** The fold behind {@link droppedBy}, for a compaction already found. */
const dropOf = (
  session: Session,
  events: ReadonlyArray<SessionEvent>,
  list: ReadonlyArray<LoggedCompaction>,
  found: LoggedCompaction,
): CompactionDrop => {
  const base = session.surface.baseSeq;
  const eventAt = (seq: number): SessionEvent | undefined => events[seq - base];
  const byReplacement = new Map<number, LoggedCompaction>();
  for (const c of list) {
    if (c.replacementSeq !== undefined) byReplacement.set(c.replacementSeq, c);
  }
  const at = found.replacementSeq;
  const replacing = at === undefined ? undefined : eventAt(at);
  let gone: ReadonlyArray<SessionSeq> = [];
  let takenOffBy: CompactionDrop["takenOffBy"];
  // The surface just before the replacement; the session holds its log
  // (its events were read), so the prefix is there to fold.
  const prior = at === undefined ? undefined : surfaceAt(session, at - 1);
  const before = prior !== undefined && Result.isSuccess(prior)
    ? prior.success
    : undefined;
  if (at !== undefined && replacing !== undefined && before !== undefined) {
    let surface = step(before, replacing);
    gone = surfaceNodes(before).filter((seq) =>
      surfaceEvent(surface, seq) === undefined
    );
    // On until something takes the replacement off: only a replacement or
    // a rewind can.
    for (let i = at - base + 1; i < events.length; i++) {
      const event = events[i];
      if (event === undefined) continue;
      surface = step(surface, event);
      if (
        isSurfaceEvent(event) && typeof event.surfaceOp === "object" &&
        surfaceEvent(surface, at) === undefined
      ) {
        takenOffBy = { seq: event.seq, kind: replacementKind(event) };
        break;
      }
    }
  }
  const dropped: DroppedNode[] = [];
  for (const seq of gone) {
    const event = eventAt(seq);
    if (event === undefined || !isSurfaceEvent(event)) continue;
    dropped.push(describeDropped(event, (s) => byReplacement.get(s)));
  }
  const summary = replacing !== undefined && isSurfaceEvent(replacing)
    ? describeDropped(replacing, () => undefined)
    : undefined;
  const op = replacing !== undefined && isSurfaceEvent(replacing)
    ? replacing.surfaceOp
    : undefined;
  return {
    ...found,
    dropped,
    ranges: runsOf(gone),
    surfaceRange: typeof op === "object" && op.op === "replace"
      ? { startSeq: op.startSeq, endSeq: op.endSeq }
      : undefined,
    droppedChars: dropped.reduce((n, d) => n + d.chars, 0),
    droppedTokens: dropped.reduce((n, d) => n + d.tokens, 0),
    replacementChars: summary?.chars ?? 0,
    replacementTokens: summary?.tokens ?? 0,
    takenOffBy,
    onSurface: at !== undefined &&
      surfaceEvent(session.surface, at) !== undefined,
  };
};
