/**
 * Runs a log through the library (decode then fold, event by event) and
 * through the reference checker, and asserts that they agree: on accept or
 * reject, on the index and seq of the first failing event, on its tag and
 * on the fields both can name. Also checks the library-only laws every case
 * must keep: nothing throws, failures are tagged errors of the documented
 * unions, a failed step leaves the surface unchanged, and a full replay
 * equals the step-by-step fold.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Result } from "effect";
import {
  checkTranscript,
  deriveMessages,
  deriveMessagesWithSources,
  emptySurface,
  type EventDecodeError,
  type SessionEvent,
  SessionSeq,
  type Surface,
  type SurfaceError,
  type Vocabulary,
} from "@palimpsest/session";
import {
  applyEventResult,
  emptySurfaceAt,
  interruptedTurnClosers,
  surfaceNodes,
} from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import {
  EVENT_DECODE_ERROR_TAGS,
  SURFACE_ERROR_TAGS,
} from "@palimpsest/session/schema";
import { decodeEventResult, encodeEvent } from "@palimpsest/session/schema";
import {
  type CheckerError,
  type CheckerVerdict,
  checkLog,
} from "./reference_checker.ts";

/** The tags of `EventDecodeError`, from docs/format.md. */
export const DECODE_TAGS: ReadonlyArray<string> = EVENT_DECODE_ERROR_TAGS;

/** The tags of `SurfaceError`, from docs/format.md. */
export const FOLD_TAGS: ReadonlyArray<string> = SURFACE_ERROR_TAGS;

/** Extra log-only types: the library's vocabulary and the checker's rules. */
export interface Extensions {
  /** What the library decodes with. */
  readonly vocabulary: Vocabulary;
  /** The same types' data rules, for the checker. */
  readonly checker: Readonly<Record<string, (data: unknown) => boolean>>;
}

/** The library's verdict, shaped like the checker's. */
export type LibraryVerdict =
  | {
    readonly ok: true;
    readonly surface: Surface;
    readonly events: ReadonlyArray<SessionEvent>;
  }
  | {
    readonly ok: false;
    readonly index: number;
    readonly phase: "decode" | "fold";
    readonly error: EventDecodeError | SurfaceError;
    readonly surface: Surface;
    readonly events: ReadonlyArray<SessionEvent>;
  };

/** The surface a window starting at `base` folds from. */
export const startSurface = (base: number): Surface =>
  base === 0 ? emptySurface : emptySurfaceAt(SessionSeq.make(base));

/**
 * Decodes and folds values one by one with the library.
 *
 * @param values Parsed JSON values.
 * @param base The window base.
 * @returns The verdict.
 */
export function runLibrary(
  values: ReadonlyArray<unknown>,
  base = 0,
  extensions?: Extensions,
): LibraryVerdict {
  let surface = startSurface(base);
  const events: SessionEvent[] = [];
  const options = extensions === undefined
    ? undefined
    : { vocabulary: extensions.vocabulary };
  for (let index = 0; index < values.length; index++) {
    const decoded = decodeEventResult(values[index], options);
    if (Result.isFailure(decoded)) {
      assert.ok(DECODE_TAGS.includes(decoded.failure._tag));
      assert.ok(decoded.failure instanceof Error);
      return {
        ok: false,
        index,
        phase: "decode",
        error: decoded.failure,
        surface,
        events,
      };
    }
    const event = decoded.success;
    const before = surfaceNodes(surface);
    const applied = applyEventResult(surface, event);
    if (Result.isFailure(applied)) {
      assert.ok(FOLD_TAGS.includes(applied.failure._tag));
      assert.ok(applied.failure instanceof Error);
      // A rejected event changes nothing.
      assert.deepEqual(surfaceNodes(surface), before);
      return {
        ok: false,
        index,
        phase: "fold",
        error: applied.failure,
        surface,
        events,
      };
    }
    events.push(event);
    surface = applied.success;
  }
  return { ok: true, surface, events };
}

/** The fields of a library error that the checker also computes. */
export function comparableFields(
  error: EventDecodeError | SurfaceError,
): Record<string, unknown> {
  switch (error._tag) {
    case "NonContiguousSeq":
      return { expected: error.expected, actual: error.actual };
    case "ReplaceStartNotOnSurface":
      return { startSeq: error.startSeq };
    case "ReplaceEndNotOnSurface":
      return { endSeq: error.endSeq };
    case "ReplaceRangeInverted":
      return { startSeq: error.startSeq, endSeq: error.endSeq };
    case "ShadowedNodeNotCited":
      return { missing: [...error.missing].sort((a, b) => a - b) };
    case "ToolResultReplaceNotSingle":
      return { rangeLength: error.rangeLength };
    case "ToolResultReplaceTargetNotToolResult":
    case "ToolResultReplaceChangesMoreThanContent":
      return { target: error.target };
    case "SystemHeadProtected":
    case "SystemHeadExists":
      return { head: error.head };
    case "SurfaceMetadataOnLogOnlyEvent":
      return { field: error.field };
    case "InvalidSourceList":
      return { index: error.index };
    case "DuplicateSource":
    case "SourceNotEarlier":
      return { source: error.source };
    case "ReplaceEndpointNotEarlier":
      return { endpoint: error.endpoint };
    case "UnknownEventType":
    case "InvalidEventData":
      return { type: error.type };
    default:
      return {};
  }
}

/** The seq a library error names (undefined when the input had none). */
export function errorSeq(
  error: EventDecodeError | SurfaceError,
): number | undefined {
  switch (error._tag) {
    case "InvalidSessionSeq":
      return undefined;
    case "NonContiguousSeq":
      return error.actual;
    default:
      return error.seq;
  }
}

const checkerFields = (error: CheckerError): Record<string, unknown> => {
  if (error.tag === "ShadowedNodeNotCited") {
    const missing = error.fields.missing;
    return {
      missing: Array.isArray(missing)
        ? [...missing].sort((a, b) => a - b)
        : missing,
    };
  }
  return { ...error.fields };
};

/** What a comparison found, for counters. */
export interface Agreement {
  /** The checker's verdict. */
  readonly checker: CheckerVerdict;
  /** The library's verdict. */
  readonly library: LibraryVerdict;
  /** The failing tag, or "accepted". */
  readonly outcome: string;
}

/**
 * Runs both implementations and asserts they agree.
 *
 * @param values Parsed JSON values.
 * @param base The window base.
 * @returns Both verdicts and the outcome tag.
 */
export function assertAgree(
  values: ReadonlyArray<unknown>,
  base = 0,
  extensions?: Extensions,
): Agreement {
  const library = runLibrary(values, base, extensions);
  const checker = checkLog(values, base, extensions?.checker ?? {});
  if (checker.ok) {
    if (!library.ok) {
      assert.fail(
        `library rejected at index ${library.index} with ${library.error._tag} but the checker accepts`,
      );
    }
  } else if (library.ok) {
    assert.fail(
      `checker rejected at index ${checker.index} with ${checker.error.tag} but the library accepts`,
    );
  }
  if (library.ok && checker.ok) {
    assert.deepEqual([...surfaceNodes(library.surface)], checker.nodes);
    assert.equal(library.surface.nextSeq, checker.nextSeq);
    assert.equal(library.surface.replacements, checker.replacements);
    checkReplayLaws(library.events, base, checker.nodes);
    return { checker, library, outcome: "accepted" };
  }
  if (library.ok || checker.ok) throw new Error("unreachable");
  assert.deepEqual(
    {
      index: library.index,
      phase: library.phase,
      tag: library.error._tag,
      seq: errorSeq(library.error),
    },
    {
      index: checker.index,
      phase: checker.phase,
      tag: checker.error.tag,
      seq: checker.error.seq,
    },
  );
  assert.deepEqual(comparableFields(library.error), {
    ...comparableFields(library.error),
    ...pickKnown(checkerFields(checker.error), library.error),
  });
  assert.deepEqual([...surfaceNodes(library.surface)], checker.nodes);
  assert.equal(library.surface.nextSeq, checker.nextSeq);
  // The full replay of the decoded prefix stops at the same place.
  const replayed = replayResult(library.events, startSurface(base));
  assert.ok(Result.isSuccess(replayed));
  assert.deepEqual([...surfaceNodes(replayed.success)], checker.nodes);
  return { checker, library, outcome: library.error._tag };
}

/** The checker's fields restricted to those the library error carries. */
const pickKnown = (
  fields: Record<string, unknown>,
  error: EventDecodeError | SurfaceError,
): Record<string, unknown> => {
  const known = comparableFields(error);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    if (Object.hasOwn(known, key)) out[key] = fields[key];
  }
  return out;
};

/**
 * Replay laws on an accepted log: a full replay equals the step fold, and
 * folding a split in two halves equals folding it whole.
 */
function checkReplayLaws(
  events: ReadonlyArray<SessionEvent>,
  base: number,
  nodes: ReadonlyArray<number>,
): void {
  const full = replayResult(events, startSurface(base));
  assert.ok(Result.isSuccess(full));
  assert.deepEqual([...surfaceNodes(full.success)], nodes);
  const cut = Math.floor(events.length / 2);
  const first = replayResult(events.slice(0, cut), startSurface(base));
  assert.ok(Result.isSuccess(first));
  const firstNodes = surfaceNodes(first.success);
  const rest = replayResult(events.slice(cut), first.success);
  assert.ok(Result.isSuccess(rest));
  assert.deepEqual([...surfaceNodes(rest.success)], nodes);
  // Folding on from an older surface leaves it as it was.
  assert.deepEqual(surfaceNodes(first.success), firstNodes);
  // Crash repair on any valid log: the closers are events that continue the
  // log, pass the decoder unchanged, and fold. Transcript checks never throw.
  const closers = interruptedTurnClosers(events);
  for (const closer of closers) {
    const again = decodeEventResult(
      JSON.parse(JSON.stringify(encodeEvent(closer))),
    );
    assert.ok(Result.isSuccess(again), "a closer decodes");
  }
  const repaired = replayResult(closers, full.success);
  assert.ok(Result.isSuccess(repaired), "the closers fold");
  assert.ok(Array.isArray(checkTranscript(deriveMessages(repaired.success))));
  // Derivation reads one message per non-empty node, in surface order.
  const derived = deriveMessagesWithSources(full.success).map((m) => m.seq);
  for (const seq of derived) assert.ok(nodes.includes(seq));
  assert.deepEqual(
    derived,
    nodes.filter((seq) => derived.includes(SessionSeq.make(seq))),
  );
}
