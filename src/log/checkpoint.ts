/**
 * Checkpoints: the fold's state at a seq, stored beside the log, so an open
 * replays only the log after it. A checkpoint is derived data: it can be
 * deleted at any time, and it is never trusted blindly.
 *
 * What one holds (a text of two lines, `<sha-256 of the body>\n<body>\n`,
 * the body one JSON object):
 *
 * - the seq it covers up to (`seq`: the next seq after its last event), and
 *   what identifies that prefix of the log: the session id, the SHA-256 of
 *   the header line, the SHA-256 and length of the line of the last event
 *   (`seq - 1`), and, for a file, the byte offset where the line of `seq`
 *   starts;
 * - the state the rules need to judge what comes after: the surface's
 *   events in surface order, the replacement count, and every event from the
 *   start of the oldest turn or compaction still open, or the oldest surface
 *   node with a tool call no result answered yet (`heldFrom`), on, so
 *   repair and the turn loop see the open work whole and the restored
 *   surface knows its open calls;
 * - what the backward scans need of the log before `heldFrom`
 *   ({@link LogPrior}).
 *
 * Verification, at every open that uses one: the body's own hash (a torn or
 * corrupted checkpoint), its version, the session id and header (a foreign
 * one), and the stored log's line at `seq - 1` decoded and encoded again
 * (a stale one: the log was cut, rewritten or replaced). The log itself is
 * append-only under one writer, and nothing this library does rewrites a
 * line before a checkpoint's boundary (repair cuts only a torn tail past
 * every committed batch), so a matching boundary line means a matching
 * prefix. What this cannot see is a hand edit of a line strictly inside the
 * prefix: the CLI's `verify` replays the whole log and never reads a
 * checkpoint. Anything that does not match is reported and the open replays
 * the whole log instead.
 *
 * @module
 * @internal
 */
import { createHash } from "node:crypto";
import * as Result from "effect/Result";
import * as Schema from "effect/Schema";
import type { SessionEvent, SurfaceEvent } from "../event.ts";
import { isSurfaceEvent } from "../event.ts";
import type { Vocabulary } from "../decode.ts";
import { SessionSeq } from "../seq.ts";
import { knownEvents, Session, type SessionHeader } from "../session.ts";
import { openWork } from "../repair.ts";
import { heldEvents, type LogPrior, turnMarks } from "../prior.ts";
import { forEachNode, logEvent } from "../surface/mod.ts";
import { restoreSurface } from "../surface/restore.ts";
import { openCallsOf } from "../surface/calls.ts";
import { isObject } from "../json.ts";
import { encodeEventLine, encodeHeaderLine } from "./codec.ts";
import { decodeLine, makeRunBudget } from "./line.ts";

/** The version of the checkpoint body this library writes and reads. */
export const CHECKPOINT_VERSION = 1;

/** Why a checkpoint was not used. */
export type CheckpointProblem =
  /** Not a checkpoint of this version, or its own hash does not match. */
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

/** The body of each candidate decoded here. */
const bodies = new WeakMap<CheckpointCandidate, Body>();

/** The body of a candidate (every candidate comes from `decodeCheckpoint`). */
const bodyOf = (candidate: CheckpointCandidate): Body => {
  const body = bodies.get(candidate);
  if (body === undefined) {
    throw new Error("A checkpoint candidate that was not decoded here");
  }
  return body;
};

/** A count or seq in a stored body. */
const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0));

/** The body of a checkpoint, as stored. */
const Body = Schema.Struct({
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
  order: Schema.Array(Count),
  pinned: Schema.Array(Schema.String),
  held: Schema.Array(Schema.String),
  prior: Schema.Struct({
    lastTurn: Schema.NullOr(Count),
    turnStep: Schema.NullOr(
      Schema.Struct({ turn: Count, step: Count }),
    ),
  }),
});
type Body = typeof Body.Type;

const isBody: (u: unknown) => u is Body = Schema.is(Body);

const sha256 = (text: string): string =>
  createHash("sha256").update(text).digest("hex");

const utf8Length = (text: string): number =>
  new TextEncoder().encode(text).length;

/**
 * The checkpoint of a session at its next seq; undefined when it would
 * cover nothing new (an empty log, or no event held past its own
 * checkpoint).
 *
 * @param session The session.
 * @param bytes For a file: the byte length of the log it covers.
 * @param since The previous checkpoint of this session, when known: the
 * scans for open work and turn marks stop at its `heldFrom` (nothing open
 * now started before it), so writing one every K events costs O(K), not
 * O(log).
 * @returns The checkpoint, or undefined.
 */
export function encodeCheckpoint(
  session: Session,
  bytes?: number,
  since?: CheckpointSince,
): CheckpointRecord | undefined {
  const surface = session.surface;
  const seq = surface.nextSeq;
  if (seq === surface.baseSeq || seq <= surface.heldFrom) return undefined;
  const lastEvent = logEvent(surface, SessionSeq.make(seq - 1));
  if (lastEvent === undefined) return undefined;
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
  const order: number[] = [];
  const pinned: string[] = [];
  forEachNode(surface, (at, event) => {
    order.push(at);
    if (at < heldFrom) pinned.push(encodeEventLine(event, options));
  });
  const held: string[] = [];
  for (let at = heldFrom; at < seq; at++) {
    const event = logEvent(surface, SessionSeq.make(at));
    if (event === undefined) return undefined;
    held.push(encodeEventLine(event, options));
  }
  const marks = turnMarks(session, heldFrom, since);
  const lastLine = encodeEventLine(lastEvent, options);
  const body: Body = {
    checkpoint: CHECKPOINT_VERSION,
    id: session.header.id,
    header: sha256(encodeHeaderLine(session.header)),
    seq,
    baseSeq: surface.baseSeq,
    bytes: bytes ?? null,
    last: sha256(lastLine),
    lastBytes: utf8Length(lastLine),
    replacements: surface.replacements,
    heldFrom,
    order,
    pinned,
    held,
    prior: {
      lastTurn: marks.lastTurn ?? null,
      turnStep: marks.turnStep ?? null,
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
});

const rejected = (
  problem: CheckpointProblem,
  seq: number | undefined,
  detail: string,
): Result.Result<never, CheckpointRejected> =>
  Result.fail({ problem, seq, detail });

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
  const candidate: CheckpointCandidate = {
    seq: SessionSeq.make(body.seq),
    bytes: body.bytes ?? undefined,
    lastBytes: body.lastBytes,
  };
  bodies.set(candidate, body);
  return Result.succeed(candidate);
}

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

/**
 * Checks a candidate against the stored log's header and its line at the
 * boundary, and rebuilds the session it holds.
 *
 * @param candidate The candidate.
 * @param boundary What the stored log holds there.
 * @param vocabulary The vocabulary the session is read with.
 * @returns The session as of the checkpoint, or why it does not match.
 */
export function restoreCheckpoint(
  candidate: CheckpointCandidate,
  boundary: CheckpointBoundary,
  vocabulary: Vocabulary | undefined,
): Result.Result<Session, CheckpointRejected> {
  const body = bodyOf(candidate);
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
  const decodeAll = (
    lines: ReadonlyArray<string>,
  ): SessionEvent[] | undefined => {
    const out: SessionEvent[] = [];
    for (const line of lines) {
      const decoded = decodeLine(line.slice(0, -1), seq, runs, options);
      if (Result.isFailure(decoded)) return undefined;
      out.push(decoded.success);
    }
    return out;
  };
  const pinned = decodeAll(body.pinned);
  const held = decodeAll(body.held);
  if (pinned === undefined || held === undefined) {
    return rejected("invalid", seq, "an event it holds does not decode");
  }
  const bySeq = new Map<number, SessionEvent>();
  for (const event of pinned) bySeq.set(event.seq, event);
  for (const event of held) bySeq.set(event.seq, event);
  const nodes: SurfaceEvent[] = [];
  for (const at of body.order) {
    const event = bySeq.get(at);
    if (event === undefined || !isSurfaceEvent(event)) {
      return rejected(
        "invalid",
        seq,
        `its node ${at} is not an event it holds`,
      );
    }
    nodes.push(event);
  }
  const prior = priorOfBody(body);
  const surface = restoreSurface(
    [
      SessionSeq.make(body.baseSeq),
      SessionSeq.make(body.heldFrom),
      SessionSeq.make(seq),
      body.replacements,
    ],
    nodes,
    held,
    prior,
  );
  if (surface === undefined) {
    return rejected("invalid", seq, "its state is not one a fold leaves");
  }
  const session = Session.make(boundary.header, options);
  return Result.succeed({ ...session, surface });
}
