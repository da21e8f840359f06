/**
 * The v3 log an importer builds, one event at a time, through the library's
 * own decoder and fold (`decodeEventResult`, `applyEventResult`): every event
 * passes the v3 rules when it is appended, or the import is refused with the
 * source line. Around that: turn and step bookkeeping, interrupted turns
 * closed by the library's repair (`interruptedTurnClosers`, in the source
 * tool's own words when it has them), and the report. Messages and tool
 * results are `messages.ts`; compactions as replacements `compaction.ts`.
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
import { Draft } from "../drafts.ts";
import { interruptedTurnClosers } from "../repair.ts";
import type { SessionEvent, SurfaceOp, TurnEndReason } from "../event.ts";
import type { SessionHeader } from "../session.ts";
import type { SessionSeq } from "../seq.ts";
import type { ToolCallBlock, ToolResultBlock } from "../message.ts";
import { decodeEventResult } from "../decode.ts";
import { ImportEventRejected } from "./errors.ts";
import type {
  BranchReport,
  ImportReport,
  ReportEntry,
  SkippedKind,
  SourceTool,
} from "./report.ts";

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
});

/** The result of a builder step. */
export type Step<A = void> = Result.Result<A, ImportEventRejected>;

/** A step that did nothing. */
export const ok: Step = Result.succeed(undefined);

/** A step's outcome without its value. */
export const done = <A>(step: Step<A>): Step =>
  Result.isFailure(step) ? Result.fail(step.failure) : ok;

/** Counts a source line of a kind. */
export const count = (b: Builder, kind: string): void => {
  b.kinds.set(kind, (b.kinds.get(kind) ?? 0) + 1);
};

/** Records a line skipped on purpose. */
export const skip = (
  b: Builder,
  kind: string,
  line: number,
  reason: string,
): void => {
  const entry = b.skipped.get(kind);
  if (entry === undefined) b.skipped.set(kind, { reason, lines: [line] });
  else entry.lines.push(line);
};

/** Records a source part kept opaque in an assistant message's stream. */
export const keptOpaque = (
  b: Builder,
  kind: string,
  line: number,
  reason: string,
): void => {
  const entry = b.opaque.get(kind);
  if (entry === undefined) b.opaque.set(kind, { reason, lines: [line] });
  else if (entry.lines[entry.lines.length - 1] !== line) entry.lines.push(line);
};

/** Records what could not be carried over. */
export const notCarried = (
  b: Builder,
  line: number,
  kind: string,
  note: string,
): void => {
  b.notCarried.push({ line, kind, note });
};

/**
 * Records a source record whose type the importer does not know; the import
 * goes on without it.
 *
 * @param what What names the type, as "line type" or "entry type".
 * @param type The unknown value of that type.
 */
export const unknownType = (
  b: Builder,
  line: number,
  kind: string,
  what: string,
  type: unknown,
): Step => {
  notCarried(
    b,
    line,
    kind,
    `${what} ${JSON.stringify(type)} is not known to this importer`,
  );
  return ok;
};

/** Records a source record that is not a JSON object. */
export const notAnObject = (b: Builder, line: number): void => {
  // One label for a line that is no record, whether it parses or not.
  count(b, "not-json");
  notCarried(b, line, "not-json", "a line that is not a JSON record");
};

/** Records what the importer made up. */
export const synthesized = (
  b: Builder,
  line: number,
  kind: string,
  note: string,
): void => {
  b.synthesized.push({ line, kind, note });
};

/** A date string as epoch milliseconds, or `undefined`. */
export const epochOf = (u: unknown): number | undefined => {
  if (typeof u !== "string") return undefined;
  const parsed = Date.parse(u);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
};

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
  return push(b, decoded.success, line);
};

const push = (
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

// ---------------------------------------------------------------------------
// Turns and steps

/** Opens a new turn, closing the open one first. */
export const openTurn = (b: Builder, line: number): Step => {
  const closed = closeTurn(b, line);
  if (Result.isFailure(closed)) return closed;
  const turn = b.nextTurn++;
  const started = append(b, Draft.turnStart(turn), line);
  if (Result.isFailure(started)) return Result.fail(started.failure);
  b.turn = turn;
  b.nextStep = 0;
  b.reason = "completed";
  b.answered = false;
  return ok;
};

/**
 * The turn of a user message: a new one once the open turn has an answer,
 * else the open one (several user messages before the model answers, such
 * as a command and its output, are one turn).
 */
export const userTurn = (b: Builder, line: number): Step =>
  b.turn === undefined || b.answered ? openTurn(b, line) : ok;

/** Opens a turn when none is open. */
const ensureTurn = (b: Builder, line: number): Step =>
  b.turn === undefined ? openTurn(b, line) : ok;

/** Closes the open step, if any. */
export const closeStep = (b: Builder, line: number): Step => {
  if (b.turn === undefined || b.step === undefined) return ok;
  const step = b.step;
  b.step = undefined;
  const ended = append(
    b,
    Draft.stepEnd(b.turn, step),
    line,
  );
  return done(ended);
};

/** Opens a new step in the open turn (opening a turn if needed). */
export const openStep = (b: Builder, line: number): Step => {
  const turned = ensureTurn(b, line);
  if (Result.isFailure(turned)) return turned;
  const closed = closeStep(b, line);
  if (Result.isFailure(closed)) return closed;
  const turn = b.turn ?? 0;
  const step = b.nextStep++;
  const started = append(b, Draft.stepStart(turn, step), line);
  if (Result.isFailure(started)) return Result.fail(started.failure);
  b.step = step;
  return ok;
};

/**
 * Closes the open turn. A turn with calls the source never answered is
 * closed by the library's repair: one error result per call, `step/end`,
 * then `turn/end` with reason `interrupted`. Otherwise `turn/end` takes the
 * given reason, or the one the source last implied.
 */
export const closeTurn = (
  b: Builder,
  line: number,
  reason?: TurnEndReason["kind"],
): Step => {
  if (b.turn === undefined) return ok;
  if (b.openCalls.size > 0) {
    const closers = interruptedTurnClosers(b.events);
    for (const closer of closers) {
      if (closer.type === "tool/result") {
        const callId = closer.data.message.source.callId;
        const call = b.calls.get(callId);
        if (call !== undefined) call.answered = true;
        b.ids.add(closer.data.message.id);
        b.repairs += 1;
        const from = b.origin[call?.message ?? 0] ?? 0;
        synthesized(
          b,
          from,
          "tool-call",
          `error result closing call ${
            JSON.stringify(callId)
          } that the source never answered (interrupted turn)`,
        );
      }
      const pushed = push(b, withCloserText(b, closer), 0);
      if (Result.isFailure(pushed)) return Result.fail(pushed.failure);
    }
    b.openCalls.clear();
    b.turn = undefined;
    b.step = undefined;
    return ok;
  }
  const stepped = closeStep(b, line);
  if (Result.isFailure(stepped)) return stepped;
  const turn = b.turn;
  b.turn = undefined;
  const ended = append(
    b,
    Draft.turnEnd(turn, reason ?? b.reason),
    line,
  );
  return done(ended);
};

/** A repair's closing result, with the source tool's own text when it has one. */
const withCloserText = (b: Builder, closer: SessionEvent): SessionEvent => {
  if (closer.type !== "tool/result" || b.closerText === undefined) {
    return closer;
  }
  const [block] = closer.data.message.content;
  const text: ToolResultBlock = {
    ...block,
    content: [{ type: "text", text: b.closerText }],
  };
  return {
    ...closer,
    data: {
      ...closer.data,
      message: { ...closer.data.message, content: [text] as const },
    },
  };
};

/**
 * Closes the open turn when its last assistant message answered without
 * calls and nothing interrupted it: the source's turn was complete.
 */
export const closeAnsweredTurn = (b: Builder): Step =>
  b.turn !== undefined && b.openCalls.size === 0 && b.reason !== "interrupted"
    ? closeTurn(b, 0)
    : ok;

// ---------------------------------------------------------------------------
// The end

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

// ---------------------------------------------------------------------------
// Reading source values

/** A JSON object, narrowed. */
export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u);

/** A string field, or `undefined`. */
export const str = (u: unknown): string | undefined =>
  typeof u === "string" ? u : undefined;

/** The last segment of a path, with either separator. */
export const fileName = (file: string): string =>
  file.split(/[\\/]/).pop() ?? file;

/** Arguments as raw JSON text: a string as it is, anything else stringified. */
export const argumentsText = (u: unknown): string =>
  typeof u === "string" ? u : JSON.stringify(u ?? {});

/**
 * A tool-call block from a source's call id and tool name (`""` when either
 * is not a string) and its arguments' JSON text.
 */
export const toolCallBlock = (
  id: unknown,
  name: unknown,
  args: string,
): ToolCallBlock => ({
  type: "tool-call",
  id: str(id) ?? "",
  name: str(name) ?? "",
  arguments: args,
});
