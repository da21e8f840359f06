/**
 * Checkpoints: the fold's state at a seq, stored beside the log, so an open
 * replays only the log after it. A checkpoint is derived data: it can be
 * deleted at any time, and it is never trusted blindly.
 *
 * A checkpoint holds the surface by reference into the log, not a second
 * copy of its events: the events themselves are read from the log at open.
 * What one holds (a text of two lines, `<sha-256 of the body>\n<body>\n`,
 * the body one JSON object):
 *
 * - the seq it covers up to (`seq`: the next seq after its last event), and
 *   what identifies that prefix of the log: the session id, the SHA-256 of
 *   the header line, the SHA-256 of the last event's line (`seq - 1`) and
 *   its stored length, and, for a file, the byte offset where the line of
 *   `seq` starts;
 * - the state the rules need to judge what comes after: the surface's seqs
 *   in surface order, the replacement count, and the first seq of the
 *   oldest turn or compaction still open, or of the oldest surface node with
 *   a tool call no result answered yet (`heldFrom`), from which on every
 *   event is read, so repair and the turn loop see the open work whole and
 *   the restored surface knows its open calls;
 * - for a file, where the lines it references are: the byte offset and
 *   length of the line of each surface node before `heldFrom`, and the
 *   offset of the line of `heldFrom` (the lines from there to `seq` are
 *   contiguous); for rows, the seqs are the references;
 * - what the backward scans need of the log before `heldFrom`
 *   ({@link LogPrior}).
 *
 * Its size is a few bytes per surface node, whatever the events hold.
 *
 * Verification, at every open that uses one: the body's own hash (a torn or
 * corrupted checkpoint), its version (a checkpoint of another version is
 * `unreadable`: the open replays the log and the writer writes a new one),
 * the session id and header (a foreign one), the stored log's line at
 * `seq - 1` decoded and encoded again (a stale one: the log was cut,
 * rewritten or replaced), and every line it references: for a file, each
 * one a whole line at its offset and of its length, and every referenced
 * line must decode to the event of the seq it is referenced for, so a
 * checkpoint never restores an event the log does not hold there. The log
 * itself is append-only under one writer, and nothing this library does
 * rewrites a line before a checkpoint's boundary (repair cuts only a torn
 * tail past every committed batch), so a matching boundary line means a
 * matching prefix. What this cannot see is a hand edit of a line strictly
 * inside the prefix that the surface does not reference: the CLI's
 * `verify` replays the whole log and never reads a checkpoint. Anything
 * that does not match is reported and the open replays the whole log
 * instead.
 *
 * @module
 * @internal
 */
import { createHash } from "node:crypto";
import * as Result from "effect/Result";
import * as Schema from "effect/Schema";
import type { SessionEvent, SurfaceEvent } from "../core/event.ts";
import { isSurfaceEvent } from "../core/event.ts";
import type { Vocabulary } from "../core/decode.ts";
import { SessionSeq } from "../core/seq.ts";
import {
  knownEvents,
  Session,
  type SessionHeader,
} from "../session/session.ts";
import { openWork } from "../session/repair.ts";
import {
  heldEvents,
  type LogPrior,
  metadataBefore,
  turnMarks,
} from "../session/prior.ts";
import type { SessionMetadata } from "../session/metadata_fold.ts";
import { forEachNode, logEvent } from "../surface/mod.ts";
import { restoreSurface } from "../surface/restore.ts";
import { openCallsOf } from "../surface/calls.ts";
import { isObject } from "../core/json.ts";
import { encodeEventLine, encodeHeaderLine } from "./codec.ts";
import { decodeLine, makeRunBudget } from "./line.ts";

/**
 * The version of the checkpoint body this library writes and reads (1 held
 * copies of the surface's events; 2 holds references into the log; 3 also
 * what the metadata events before the held ones set, which a version 2
 * checkpoint, written by a release that skipped those events, lacks).
 */
export const CHECKPOINT_VERSION = 3;

/** Why a checkpoint was not used. */
export type CheckpointProblem =
  /** Not a checkpoint of this version, too large, or its own hash does not match. */
  | "unreadable"
  /** A checkpoint of another session (id or header differ). */
  | "foreign"
  /** The log does not hold the prefix it covers (cut, rewritten, replaced). */
  | "stale"
  /** Its state is not one the fold could leave, or the log after it does not fold onto it. */
  | "invalid";

/** A checkpoint an open did not use, and why; the open replayed the log. */
export interface CheckpointRejected {
  /** The problem. */
  readonly problem: CheckpointProblem;
  /** The seq it claimed to cover up to, when readable. */
  readonly seq: number | undefined;
  /** What did not match, for people. */
  readonly detail: string;
}

/** A checkpoint as stored. */
export interface CheckpointRecord {
  /** The seq it covers up to: the next seq after its last event. */
  readonly seq: SessionSeq;
  /** The stored text. */
  readonly text: string;
  /** What the next checkpoint's scans may start from. */
  readonly since: CheckpointSince;
}

/** Where the scans of the next checkpoint may stop. */
export interface CheckpointSince {
  /** The previous checkpoint's first held seq. */
  readonly heldFrom: number;
  /** What it recorded of the log before that. */
  readonly prior: LogPrior;
}

/** A checkpoint read and checked against itself, not yet against the log. */
export interface CheckpointCandidate {
  /** The seq it covers up to. */
  readonly seq: SessionSeq;
  /** For a file: where the line of `seq` starts. */
  readonly bytes: number | undefined;
  /** The byte length of the line of `seq - 1`, `\n` included. */
  readonly lastBytes: number;
}

/** The stored lines a checkpoint references, as an open reads them. */
export interface CheckpointReads {
  /** The seqs of the surface nodes before `heldFrom`, in surface order. */
  readonly pinned: ReadonlyArray<number>;
  /** For a file: where each of their lines starts. */
  readonly offsets: ReadonlyArray<number> | undefined;
  /** For a file: each of their lines' byte length, `\n` included. */
  readonly lengths: ReadonlyArray<number> | undefined;
  /** The first held seq: every line from it to `seq` is read. */
  readonly heldFrom: number;
  /** For a file: where the line of `heldFrom` starts. */
  readonly heldBytes: number | undefined;
}

/** Where the lines of a file-stored log are, as a checkpoint's writer knows them. */
export interface StoredLines {
  /** The log's length: where the line of the next seq starts. */
  readonly bytes: number;
  /** Where the line of `seq` starts, if known. */
  readonly start: (seq: number) => number | undefined;
  /** The byte length of the line of `seq`, `\n` included, if known. */
  readonly length: (seq: number) => number | undefined;
}

/** What a checkpoint's writer knows of the stored log beyond the session. */
export interface StoredLog {
  /** For a file: where its lines are (rows are referenced by seq). */
  readonly lines?: StoredLines | undefined;
  /** The event at `seq - 1`, when the session does not hold it. */
  readonly last?: SessionEvent | undefined;
}

/** The body of each candidate decoded here. */
const bodies = new WeakMap<
  CheckpointCandidate,
  { readonly body: Body; reads: CheckpointReads | undefined }
>();

/** The body of a candidate (every candidate comes from `decodeCheckpoint`). */
const decodedOf = (candidate: CheckpointCandidate) => {
  const decoded = bodies.get(candidate);
  if (decoded === undefined) {
    throw new Error("A checkpoint candidate that was not decoded here");
  }
  return decoded;
};
const bodyOf = (candidate: CheckpointCandidate): Body =>
  decodedOf(candidate).body;

/** A count or seq in a stored body. */
const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0));

/**
 * The body of a checkpoint, as stored, but for its two long arrays (`order`
 * and `lines`, see {@link Body}), which are checked by {@link isIntArray}:
 * a schema over a million numbers costs a hundred times the array.
 */
const BodyFields = Schema.Struct({
  checkpoint: Schema.Literal(CHECKPOINT_VERSION),
  id: Schema.String,
  header: Schema.String,
  seq: Count,
  baseSeq: Count,
  bytes: Schema.NullOr(Count),
  last: Schema.String,
  lastBytes: Count,
  replacements: Count,
  heldFrom: Count,
  heldBytes: Schema.NullOr(Count),
  prior: Schema.Struct({
    lastTurn: Schema.NullOr(Count),
    turnStep: Schema.NullOr(
      Schema.Struct({ turn: Count, step: Count }),
    ),
    metadata: Schema.Struct({
      title: Schema.NullOr(Schema.String),
      tags: Schema.Array(Schema.String),
      labels: Schema.Record(Schema.String, Schema.String),
      cwd: Schema.NullOr(Schema.String),
      values: Schema.Record(Schema.String, Schema.Unknown),
    }),
  }),
});
/** The body of a checkpoint, as stored. */
type Body = typeof BodyFields.Type & {
  /** The surface's seqs in surface order: the first, then differences. */
  readonly order: ReadonlyArray<number>;
  /**
   * For a file, per surface node before `heldFrom` in surface order, two
   * numbers: its line's start less the previous one's end (0 for the next
   * line), and its length.
   */
  readonly lines: ReadonlyArray<number> | null;
};

/** Whether every element of an array is a safe integer. */
const isIntArray = (array: unknown): boolean => {
  if (!Array.isArray(array)) return false;
  for (let i = 0; i < array.length; i++) {
    if (!Number.isSafeInteger(array[i])) return false;
  }
  return true;
};

const isFields: (u: unknown) => u is typeof BodyFields.Type = Schema.is(
  BodyFields,
);
const isBody = (u: unknown): u is Body =>
  isObject(u) && isIntArray(u.order) &&
  (u.lines === null || isIntArray(u.lines)) && isFields(u);

const sha256 = (text: string): string =>
  createHash("sha256").update(text).digest("hex");

/**
 * The checkpoint of a session at its next seq; undefined when it would
 * cover nothing (an empty log), or when neither the session nor `stored`
 * gives the event at `seq - 1` or, for a file, where a referenced line is.
 *
 * @param session The session.
 * @param stored What is known of the stored log: for a file, where its
 * lines are; the last event, when the session does not hold it.
 * @param since The previous checkpoint of this session, when known: the
 * scans for open work and turn marks stop at its `heldFrom` (nothing open
 * now started before it), so writing one every K events costs O(K) in
 * scans, not O(log).
 * @returns The checkpoint, or undefined.
 */
export function encodeCheckpoint(
  session: Session,
  stored?: StoredLog,
  since?: CheckpointSince,
): CheckpointRecord | undefined {
  const surface = session.surface;
  const seq = surface.nextSeq;
  if (seq === surface.baseSeq) return undefined;
  const lastEvent = logEvent(surface, SessionSeq.make(seq - 1)) ??
    stored?.last;
  if (lastEvent === undefined || lastEvent.seq !== seq - 1) return undefined;
  const options = session.vocabulary === undefined
    ? undefined
    : { vocabulary: session.vocabulary };
  const scanFrom = Math.max(since?.heldFrom ?? 0, surface.heldFrom);
  const open = openWork(
    scanFrom === surface.heldFrom
      ? heldEvents(session)
      : knownEvents(session, SessionSeq.make(scanFrom)),
  );
  let heldFrom: number = seq;
  for (const turn of open.turns) heldFrom = Math.min(heldFrom, turn.startSeq);
  for (const c of open.compactions) heldFrom = Math.min(heldFrom, c.startSeq);
  // A node with a call no result answered yet is held too, so that the
  // restored surface rebuilds its open calls from the held events (one of
  // a session that does not hold it any more is taken as answered).
  for (const [, at] of openCallsOf(surface)) {
    heldFrom = Math.min(heldFrom, Math.max(at, surface.heldFrom));
  }
  const file = stored?.lines;
  const order: number[] = [];
  const lines: number[] | undefined = file === undefined ? undefined : [];
  let previous = 0;
  let end = 0;
  let missing = false;
  forEachNode(surface, (at) => {
    order.push(at - previous);
    previous = at;
    if (lines === undefined || at >= heldFrom) return;
    const start = file?.start(at);
    const length = file?.length(at);
    if (start === undefined || length === undefined) {
      missing = true;
      return;
    }
    lines.push(start - end, length);
    end = start + length;
  });
  if (missing) return undefined;
  const heldBytes = file === undefined
    ? null
    : heldFrom === seq
    ? file.bytes
    : file.start(heldFrom);
  if (heldBytes === undefined) return undefined;
  const lastLine = encodeEventLine(lastEvent, options);
  const lastBytes = file === undefined
    ? new TextEncoder().encode(lastLine).length
    : file.length(seq - 1);
  if (lastBytes === undefined) return undefined;
  const marks = turnMarks(session, heldFrom, since);
  const metadata = metadataBefore(session, heldFrom, since);
  const body: Body = {
    checkpoint: CHECKPOINT_VERSION,
    id: session.header.id,
    header: sha256(encodeHeaderLine(session.header)),
    seq,
    baseSeq: surface.baseSeq,
    bytes: file === undefined ? null : file.bytes,
    last: sha256(lastLine),
    lastBytes,
    replacements: surface.replacements,
    heldFrom,
    heldBytes,
    order,
    lines: lines ?? null,
    prior: {
      lastTurn: marks.lastTurn ?? null,
      turnStep: marks.turnStep ?? null,
      metadata: {
        ...metadata,
        title: metadata.title ?? null,
        cwd: metadata.cwd ?? null,
      },
    },
  };
  const json = JSON.stringify(body);
  return {
    seq,
    text: `${sha256(json)}\n${json}\n`,
    since: { heldFrom, prior: priorOfBody(body) },
  };
}

const priorOfBody = (body: Body): LogPrior => ({
  lastTurn: body.prior.lastTurn ?? undefined,
  turnStep: body.prior.turnStep ?? undefined,
  metadata: metadataOfBody(body.prior.metadata),
});

const metadataOfBody = (
  stored: Body["prior"]["metadata"],
): SessionMetadata => ({
  ...stored,
  title: stored.title ?? undefined,
  cwd: stored.cwd ?? undefined,
});

const rejected = (
  problem: CheckpointProblem,
  seq: number | undefined,
  detail: string,
): Result.Result<never, CheckpointRejected> =>
  Result.fail({ problem, seq, detail });

/** The reads of a body, or a detail of why its references are not a log's. */
const readsOf = (body: Body): CheckpointReads | string => {
  const { seq, heldFrom } = body;
  if (heldFrom < body.baseSeq || heldFrom > seq) {
    return "its first held seq is outside the log it covers";
  }
  const pinned: number[] = [];
  let at = 0;
  for (const delta of body.order) {
    at += delta;
    if (at < body.baseSeq || at >= seq) return `its node ${at} is outside it`;
    if (at < heldFrom) pinned.push(at);
  }
  if (body.bytes === null) {
    return body.lines === null && body.heldBytes === null
      ? {
        pinned,
        offsets: undefined,
        lengths: undefined,
        heldFrom,
        heldBytes: undefined,
      }
      : "it references lines of a file and rows at once";
  }
  const refs = body.lines;
  const heldBytes = body.heldBytes;
  if (
    refs === null || heldBytes === null || refs.length !== 2 * pinned.length ||
    heldBytes > body.bytes
  ) {
    return "its line references do not match its nodes";
  }
  const offsets: number[] = [];
  const lengths: number[] = [];
  let end = 0;
  for (let i = 0; i < refs.length; i += 2) {
    const start = end + (refs[i] ?? 0);
    const length = refs[i + 1] ?? 0;
    // A line after the header (which is at least `{}\n`), before the held ones.
    if (start < 3 || length < 2 || start + length > heldBytes) {
      return `its line of node ${pinned[i / 2]} is outside the log it covers`;
    }
    offsets.push(start);
    lengths.push(length);
    end = start + length;
  }
  return { pinned, offsets, lengths, heldFrom, heldBytes };
};

/**
 * Reads a stored checkpoint and checks it against itself: its hash, its
 * version and its shape.
 *
 * @param text The stored text.
 * @returns The candidate, or why it is not one.
 */
export function decodeCheckpoint(
  text: string,
): Result.Result<CheckpointCandidate, CheckpointRejected> {
  const nl = text.indexOf("\n");
  if (nl !== 64 || !text.endsWith("\n")) {
    return rejected("unreadable", undefined, "not a checkpoint text");
  }
  const json = text.slice(nl + 1, -1);
  if (sha256(json) !== text.slice(0, nl)) {
    return rejected("unreadable", undefined, "its hash does not match");
  }
  let body: unknown;
  try {
    body = JSON.parse(json);
  } catch {
    return rejected("unreadable", undefined, "its body is not JSON");
  }
  if (!isBody(body)) {
    const seq = isObject(body) && Schema.is(Count)(body.seq)
      ? body.seq
      : undefined;
    return rejected("unreadable", seq, "not a checkpoint of this version");
  }
  const reads = readsOf(body);
  if (typeof reads === "string") return rejected("invalid", body.seq, reads);
  const candidate: CheckpointCandidate = {
    seq: SessionSeq.make(body.seq),
    bytes: body.bytes ?? undefined,
    lastBytes: body.lastBytes,
  };
  // The first open to ask takes the reads made here; later ones make them
  // again, so that nothing holds them past the read of the lines.
  bodies.set(candidate, { body, reads });
  return Result.succeed(candidate);
}

/**
 * The stored lines an open from a candidate reads: the surface nodes
 * before its first held seq, and every line from there to its seq.
 *
 * @param candidate A checkpoint read back.
 * @returns What to read.
 */
export const readsOfCheckpoint = (
  candidate: CheckpointCandidate,
): CheckpointReads => {
  const decoded = decodedOf(candidate);
  const reads = decoded.reads ?? readsOf(decoded.body);
  decoded.reads = undefined;
  // A candidate's reads were checked when it was decoded.
  return reads as CheckpointReads;
};

/**
 * Where the scans of the checkpoint after a candidate may stop.
 *
 * @param candidate A checkpoint read back.
 * @returns Its first held seq and prior.
 */
export const sinceOf = (candidate: CheckpointCandidate): CheckpointSince => ({
  heldFrom: bodyOf(candidate).heldFrom,
  prior: priorOfBody(bodyOf(candidate)),
});

/**
 * Whether a candidate was written for the session with this header.
 *
 * @param candidate A checkpoint read back.
 * @param header The stored session's header.
 * @returns Undefined when it was, else a `foreign` rejection.
 */
export const checkHeader = (
  candidate: CheckpointCandidate,
  header: SessionHeader,
): CheckpointRejected | undefined =>
  bodyOf(candidate).id === header.id &&
    bodyOf(candidate).header === sha256(encodeHeaderLine(header))
    ? undefined
    : {
      problem: "foreign",
      seq: candidate.seq,
      detail: "it was written for another session",
    };

/** What the stored log says at a checkpoint's boundary. */
export interface CheckpointBoundary {
  /** The stored session's header. */
  readonly header: SessionHeader;
  /** The stored line of the event at `seq - 1`, without `\n`. */
  readonly lastLine: string;
}

/** The stored lines a checkpoint references, decoded. */
export interface ReferencedEvents {
  /** The events of {@link CheckpointReads.pinned}, in that order. */
  readonly pinned: ReadonlyArray<SessionEvent>;
  /** Every event from the first held seq to the checkpoint's seq. */
  readonly held: ReadonlyArray<SessionEvent>;
}

/**
 * Checks a candidate against the stored log's header and its line at the
 * boundary, and rebuilds the session it holds from the lines it references.
 *
 * @param candidate The candidate.
 * @param boundary What the stored log holds there.
 * @param events The lines it references, decoded by
 * `decodeReferencedLine` of `line.ts` (undefined: one did not decode as its
 * seq).
 * @param vocabulary The vocabulary the session is read with.
 * @returns The session as of the checkpoint, or why it does not match.
 */
export function restoreCheckpoint(
  candidate: CheckpointCandidate,
  boundary: CheckpointBoundary,
  events: ReferencedEvents | undefined,
  vocabulary: Vocabulary | undefined,
): Result.Result<Session, CheckpointRejected> {
  const { body } = decodedOf(candidate);
  const heldFrom = body.heldFrom;
  const seq = body.seq;
  const foreign = checkHeader(candidate, boundary.header);
  if (foreign !== undefined) return Result.fail(foreign);
  const options = vocabulary === undefined ? undefined : { vocabulary };
  const runs = makeRunBudget();
  const last = decodeLine(boundary.lastLine, seq - 1, runs, options);
  if (
    Result.isFailure(last) || last.success.seq !== seq - 1 ||
    sha256(encodeEventLine(last.success, options)) !== body.last
  ) {
    return rejected(
      "stale",
      seq,
      `the log's event ${seq - 1} is not the one it covers`,
    );
  }
  const notHeld = (): Result.Result<never, CheckpointRejected> =>
    rejected("stale", seq, "the log does not hold the events it references");
  if (events === undefined || events.held.length !== seq - heldFrom) {
    return notHeld();
  }
  for (let i = 0; i < events.held.length; i++) {
    if (events.held[i]?.seq !== heldFrom + i) return notHeld();
  }
  // The nodes in surface order: the pinned ones are in that order too, so
  // when every node is pinned they are the pinned events themselves (no
  // second array of them). Pushed, not `new Array(n)`: past 100,000
  // elements that makes a dictionary, several times slower and larger.
  const allPinned = heldFrom === seq;
  const nodes: SurfaceEvent[] = [];
  let at = 0;
  let pinnedAt = 0;
  for (let i = 0; i < body.order.length; i++) {
    at += body.order[i] ?? 0;
    const event = at < heldFrom
      ? events.pinned[pinnedAt++]
      : events.held[at - heldFrom];
    if (event === undefined || event.seq !== at || !isSurfaceEvent(event)) {
      return rejected(
        "invalid",
        seq,
        `its node ${at} is not a surface event of the log`,
      );
    }
    if (!allPinned) nodes.push(event);
  }
  if (pinnedAt !== events.pinned.length) return notHeld();
  const prior = priorOfBody(body);
  const surface = restoreSurface(
    [
      SessionSeq.make(body.baseSeq),
      SessionSeq.make(body.heldFrom),
      SessionSeq.make(seq),
      body.replacements,
    ],
    // Each one was checked a surface event above.
    allPinned ? events.pinned as ReadonlyArray<SurfaceEvent> : nodes,
    events.held,
    prior,
  );
  if (surface === undefined) {
    return rejected("invalid", seq, "its state is not one a fold leaves");
  }
  const session = Session.make(boundary.header, options);
  return Result.succeed({ ...session, surface });
}
