/**
 * Rewinds in an imported log: where a tool went back to an earlier point
 * (Codex's `thread_rolled_back`, a pi tree's other branches, a Claude Code
 * `parentUuid` chain a rewind left), the importer appends a `user/message`
 * carrying a rewind (`surfaceOp: { op: "rewind" }`), citing the nodes it
 * takes off, so the events after the point stay in the log as a branch.
 * The fold checks it like any other rewind; a point it would refuse is
 * the caller's to report.
 *
 * @module
 * @internal
 */
import { SessionSeq } from "../core/seq.ts";
import { isSurfaceEvent, type SessionEvent } from "../core/event.ts";
import { logEvent, type Surface } from "../surface/mod.ts";
import { planRewind, type RewindPlan } from "../surface/rewind.ts";
import { append, type Builder, type Step } from "./builder.ts";

/** The plan of a rewind to `toSeq` on the builder's surface, if it holds. */
export const rewindPlan = (
  surface: Surface,
  toSeq: SessionSeq,
): RewindPlan | undefined => {
  const plan = planRewind(surface, toSeq);
  return "restored" in plan ? plan : undefined;
};

/**
 * The latest point before `from` that a rewind may go back to and whose
 * surface is exactly `kept` (the nodes before `from`, in order), looked
 * for between `from` and the last of `kept`: the point right before the
 * turn that `from` opened. Undefined when there is none (`kept` empty, a
 * compaction since, work open throughout).
 */
export const pointBefore = (
  surface: Surface,
  from: SessionSeq,
  kept: ReadonlyArray<SessionSeq>,
): SessionSeq | undefined => {
  const last = kept[kept.length - 1];
  if (last === undefined) return undefined;
  for (let x = from - 1; x >= last; x--) {
    const seq = SessionSeq.make(x);
    const plan = rewindPlan(surface, seq);
    if (
      plan !== undefined && plan.restored.length === kept.length &&
      plan.restored.every((n, i) => n === kept[i])
    ) {
      return seq;
    }
  }
  return undefined;
};

/**
 * The point a branch from a source entry whose events end at `end` goes
 * back to: `end`, or the first later event, before any node, that a rewind
 * may land on (the turn/end that closed the entry's turn, say).
 */
export const branchPoint = (
  b: Builder,
  end: number,
): { readonly point: SessionSeq } | undefined => {
  if (end < b.surface.baseSeq) return undefined;
  for (let x = end; x < b.surface.nextSeq; x++) {
    const point = SessionSeq.make(x);
    const event = logEvent(b.surface, point);
    if (x > end && event !== undefined && isSurfaceEvent(event)) {
      return undefined;
    }
    if (rewindPlan(b.surface, point) !== undefined) return { point };
  }
  return undefined;
};

/**
 * Appends a `user/message` (its `data`) carrying a rewind to `toSeq`,
 * citing the nodes the plan takes off.
 */
export const appendRewind = (
  b: Builder,
  line: number,
  toSeq: SessionSeq,
  plan: RewindPlan,
  data: unknown,
): Step<SessionEvent> =>
  append(b, {
    type: "user/message",
    surfaceOp: { op: "rewind", toSeq },
    ...(plan.takenOff.length === 0 ? {} : { sourceEventSeqs: plan.takenOff }),
    data,
  }, line);
