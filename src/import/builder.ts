/**
 * The v3 log an importer builds, one event at a time, through the library's
 * own decoder and fold (`decodeEventResult`, `applyEventResult`): every event
 * passes the v3 rules when it is appended, or the import is refused with the
 * source line; and the end of an import, the `import/lines` event and the
 * report. Around it: the report's notes (`notes.ts`), turn and step
 * bookkeeping (`turns.ts`), reading the source's values (`values.ts`);
 * messages and tool results are `messages.ts`, compactions as replacements
 * `compaction.ts`.
 *
 * The source line of every event is kept in an array indexed by seq; the
 * importer writes it at the end as one ignorable `import/lines` event.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import {
  applyEventResult,
  emptySurface,
  type Surface,
  surfaceNodes,
} from "../surface/mod.ts";
import type { SessionEvent, SurfaceOp, TurnEndReason } from "../core/event.ts";
import type { SessionHeader } from "../session/session.ts";
import type { SessionSeq } from "../core/seq.ts";
import { decodeEventResult } from "../core/decode.ts";
import { ImportEventRejected } from "./errors.ts";
import type {
  BranchReport,
  ImportReport,
  ReportEntry,
  SkippedKind,
  SourceTool,
} from "./report.ts";
import { epochOf, fileName } from "./values.ts";

/** An event before the builder gives it a seq and a time. */
export interface EventInput {
  readonly type: string;
  readonly data: unknown;
  readonly surfaceOp?: SurfaceOp;
  readonly sourceEventSeqs?: ReadonlyArray<SessionSeq>;
  readonly ignorable?: true;
}

interface CallState {
  readonly message: SessionSeq;
  readonly turn: number;
  readonly step: number;
  readonly name: string;
  readonly arguments: string;
  answered: boolean;
}

/** The mutable state of one import. */
export interface Builder {
  surface: Surface;
  readonly events: SessionEvent[];
  /** Source line per seq (0: synthesized). */
  readonly origin: number[];
  time: number;
  turn: number | undefined;
  nextTurn: number;
  step: number | undefined;
  nextStep: number;
  /** Why the open turn ends if nothing more specific is said. */
  reason: TurnEndReason["kind"];
  /** True once the open turn has an assistant message. */
  answered: boolean;
  readonly calls: Map<string, CallState>;
  /** Calls issued in the open turn and not answered yet. */
  readonly openCalls: Set<string>;
  readonly ids: Set<string>;
  readonly kinds: Map<string, number>;
  readonly skipped: Map<string, { reason: string; lines: number[] }>;
  readonly opaque: Map<string, { reason: string; lines: number[] }>;
  readonly synthesized: ReportEntry[];
  readonly notCarried: ReportEntry[];
  branches: ReadonlyArray<BranchReport>;
  compactions: number;
  repairs: number;
  /** Summary events (their seqs) made by compactions. */
  readonly summaries: Set<number>;
  /**
   * The text the source tool itself sends for a call that never got a
   * result (pi: `No result provided`, Codex: `aborted`); the library's
   * repair text when unset.
   */
  closerText: string | undefined;
  /**
   * Set when the source went back to an earlier point: the next user
   * message carries a rewind there (`messages.ts`), then it is cleared.
   */
  rewindTo: SessionSeq | undefined;
}

/** A fresh builder. */
export const makeBuilder = (): Builder => ({
  surface: emptySurface,
  events: [],
  origin: [],
  time: 0,
  turn: undefined,
  nextTurn: 0,
  step: undefined,
  nextStep: 0,
  reason: "completed",
  answered: false,
  calls: new Map(),
  openCalls: new Set(),
  ids: new Set(),
  kinds: new Map(),
  skipped: new Map(),
  opaque: new Map(),
  synthesized: [],
  notCarried: [],
  branches: [],
  compactions: 0,
  repairs: 0,
  summaries: new Set(),
  closerText: undefined,
  rewindTo: undefined,
});

/** The result of a builder step. */
export type Step<A = void> = Result.Result<A, ImportEventRejected>;

/** A step that did nothing. */
export const ok: Step = Result.succeed(undefined);

/** A step's outcome without its value. */
export const done = <A>(step: Step<A>): Step =>
  Result.isFailure(step) ? Result.fail(step.failure) : ok;

/** Sets the time of the next events, when `t` is usable epoch milliseconds. */
export const setTime = (b: Builder, t: unknown): void => {
  const time = typeof t === "number" ? t : epochOf(t);
  if (time !== undefined && Number.isSafeInteger(time) && time >= 0) {
    b.time = time;
  }
};

/**
 * The header of an imported session: the source's session id (else the
 * file's name), its start (else 0), and where it came from.
 */
export const importedHeader = (
  file: string,
  id: string | undefined,
  createdAt: number | undefined,
  importedFrom: Readonly<Record<string, unknown>>,
): SessionHeader => ({
  id: id ?? fileName(file),
  createdAt: createdAt ?? 0,
  isSeeded: false,
  meta: { importedFrom },
});

/** A message id not used yet in this session, from the source's own id. */
export const uniqueId = (b: Builder, base: string): string => {
  const root = base === "" ? "message" : base;
  let id = root;
  for (let n = 2; b.ids.has(id); n++) id = `${root}#${n}`;
  b.ids.add(id);
  return id;
};

/** Appends one event through the decoder and the fold. */
export const append = (
  b: Builder,
  draft: EventInput,
  line: number,
): Step<SessionEvent> => {
  const seq = b.surface.nextSeq;
  const input: Record<string, unknown> = {
    type: draft.type,
    seq,
    time: b.time,
    data: draft.data,
  };
  if (draft.ignorable !== undefined) input.ignorable = draft.ignorable;
  if (draft.surfaceOp !== undefined) input.surfaceOp = draft.surfaceOp;
  if (draft.sourceEventSeqs !== undefined) {
    input.sourceEventSeqs = draft.sourceEventSeqs;
  }
  const decoded = decodeEventResult(input);
  if (Result.isFailure(decoded)) {
    return Result.fail(
      new ImportEventRejected({
        line,
        seq,
        rule: decoded.failure._tag,
        reason: decoded.failure.message,
      }),
    );
  }
  return pushEvent(b, decoded.success, line);
};

/**
 * Appends an event that is already decoded (a repair's closer) through the
 * fold.
 */
export const pushEvent = (
  b: Builder,
  event: SessionEvent,
  line: number,
): Step<SessionEvent> => {
  const applied = applyEventResult(b.surface, event);
  if (Result.isFailure(applied)) {
    return Result.fail(
      new ImportEventRejected({
        line,
        seq: event.seq,
        rule: applied.failure._tag,
        reason: applied.failure.message,
      }),
    );
  }
  b.surface = applied.success;
  b.events.push(event);
  b.origin.push(line);
  return Result.succeed(event);
};

/** Finishes the log: writes `import/lines` and builds the report. */
export const finish = (
  b: Builder,
  base: {
    readonly from: SourceTool;
    readonly file: string;
    readonly formatVersion?: number | string;
    readonly lines: number;
  },
): Step<ImportReport> => {
  const openTurn = b.turn !== undefined;
  const lines = append(b, {
    type: "import/lines",
    ignorable: true,
    data: { from: base.from, lines: [...b.origin, 0] },
  }, 0);
  if (Result.isFailure(lines)) return Result.fail(lines.failure);
  const kinds = (
    map: Map<string, { reason: string; lines: number[] }>,
  ): SkippedKind[] =>
    [...map.entries()].map(([kind, s]) => ({
      kind,
      count: s.lines.length,
      reason: s.reason,
      lines: s.lines,
    }));
  const skipped = kinds(b.skipped);
  const opaque = kinds(b.opaque);
  return Result.succeed({
    from: base.from,
    file: base.file,
    ...(base.formatVersion === undefined
      ? {}
      : { formatVersion: base.formatVersion }),
    lines: base.lines,
    kinds: Object.fromEntries(b.kinds),
    events: b.events.length,
    surface: surfaceNodes(b.surface).length,
    compactions: b.compactions,
    repairs: b.repairs,
    openTurn,
    synthesized: b.synthesized,
    skipped,
    opaque,
    notCarried: b.notCarried,
    branches: b.branches,
  });
};
