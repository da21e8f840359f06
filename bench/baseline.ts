/**
 * The straightforward design, built only for the benchmarks: every line
 * decoded by one interpreted Schema union of whole events, one mutable array
 * of seqs for the surface (`indexOf` + `splice` for a replace), the events in
 * an array, and derivation by mapping the array. It checks the same
 * relational rules the library does so the comparison is of design, not of
 * work skipped. It is not part of the package.
 *
 * @module
 */
import { Schema } from "effect";
import { projectEvent } from "@palimpsest/session/internal";
import {
  type Message,
  SessionSeq,
  type SurfaceEvent,
  SurfaceOp,
} from "@palimpsest/session/schema";
import {
  logOnlyDataSchemas,
  surfaceDataSchemas,
} from "@palimpsest/session/schema";

/** The fields every event has: its type, seq, time, data and ignorable flag. */
const envelope = <T extends string, D>(
  type: T,
  data: Schema.Codec<D, unknown>,
) => ({
  type: Schema.Literal(type),
  seq: SessionSeq,
  time: Schema.Int,
  data,
  ignorable: Schema.optionalKey(Schema.Literal(true)),
});

const surfaceEvent = <T extends string, D>(
  type: T,
  data: Schema.Codec<D, unknown>,
) =>
  Schema.Struct({
    ...envelope(type, data),
    surfaceOp: SurfaceOp,
    sourceEventSeqs: Schema.optionalKey(Schema.Array(SessionSeq)),
  });

const logOnlyEvent = (type: string, data: Schema.Codec<unknown, unknown>) =>
  Schema.Struct(envelope(type, data));

const BaselineEvent = Schema.Union([
  surfaceEvent("system/message", surfaceDataSchemas["system/message"]),
  surfaceEvent("user/message", surfaceDataSchemas["user/message"]),
  surfaceEvent("assistant/message", surfaceDataSchemas["assistant/message"]),
  surfaceEvent("tool/result", surfaceDataSchemas["tool/result"]),
  ...Object.entries(logOnlyDataSchemas).map(([type, data]) =>
    logOnlyEvent(type, data)
  ),
]);

/** A decoded event of the baseline: the union's output. */
export type BaselineEvent = typeof BaselineEvent.Type;

const decodeUnion = Schema.decodeUnknownSync(BaselineEvent);

/** Decodes one parsed line with the interpreted union. */
export const baselineDecode = (value: unknown): BaselineEvent =>
  decodeUnion(value);

/** The baseline's state: everything mutable. */
export interface BaselineState {
  /** The events by seq. */
  readonly events: BaselineEvent[];
  /** The surface, as seqs in order. */
  readonly surface: number[];
}

const isReplace = (
  op: unknown,
): op is { readonly startSeq: number; readonly endSeq: number } =>
  typeof op === "object" && op !== null && "startSeq" in op;

/** Folds one event into the state, throwing on a broken rule. */
export const baselineApply = (
  state: BaselineState,
  event: BaselineEvent,
): void => {
  if (event.seq !== state.events.length) throw new Error("NonContiguousSeq");
  state.events.push(event);
  const op = "surfaceOp" in event ? event.surfaceOp : undefined;
  if (op === undefined) return;
  if (op === "append") {
    state.surface.push(event.seq);
    return;
  }
  if (!isReplace(op)) return;
  const start = state.surface.indexOf(op.startSeq);
  if (start < 0) throw new Error("ReplaceStartNotOnSurface");
  const end = state.surface.indexOf(op.endSeq);
  if (end < 0) throw new Error("ReplaceEndNotOnSurface");
  if (start > end) throw new Error("ReplaceRangeInverted");
  const sources = new Set<number>(
    "sourceEventSeqs" in event && Array.isArray(event.sourceEventSeqs)
      ? event.sourceEventSeqs
      : [],
  );
  for (let i = start; i <= end; i++) {
    const node = state.surface[i];
    if (node === undefined || !sources.has(node)) {
      throw new Error("ShadowedNodeNotCited");
    }
  }
  state.surface.splice(start, end - start + 1, event.seq);
};

/** Parses, decodes and folds JSONL lines. */
export const baselineReplay = (lines: ReadonlyArray<string>): BaselineState => {
  const state: BaselineState = { events: [], surface: [] };
  for (const line of lines) {
    baselineApply(state, baselineDecode(JSON.parse(line)));
  }
  return state;
};

const project = (event: BaselineEvent | undefined): Message | undefined =>
  event === undefined || !("surfaceOp" in event)
    ? undefined
    // The union's surface variants carry the library's data schemas; only the
    // looser envelope (any surface type may cite sources) keeps the types apart.
    : projectEvent(event as SurfaceEvent);

/** Derives the messages by mapping the surface array. */
export const baselineDerive = (
  state: BaselineState,
): ReadonlyArray<Message> => {
  const out: Message[] = [];
  for (const seq of state.surface) {
    const message = project(state.events[seq]);
    if (message !== undefined) out.push(message);
  }
  return out;
};
