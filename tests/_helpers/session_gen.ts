/**
 * Generated sessions for property tests: turns of a user message and steps
 * of an assistant message with 0..2 tool calls, each followed by its
 * `tool/call` event and its `tool/result`, optionally under a system head.
 * Tool results are sometimes long, so pruning has something to do. The
 * transcripts are clean: every call is answered right after its message.
 */
import fc from "fast-check";
import {
  compact,
  Draft,
  type EventDraft,
  pruneToolResult,
  selectCompactableRange,
  Session,
} from "@palimpsest/session";
import { surfaceEvent, surfaceNodes } from "@palimpsest/session/internal";
import { Effect } from "effect";
import { assistantMessageDraft, toolResultMessageDraft } from "./build.ts";

/** A generated tool call and its result. */
export interface GenCall {
  readonly name: string;
  readonly result: string;
  readonly isError: boolean;
}

/** A generated step: assistant text (maybe empty) and its calls. */
export interface GenStep {
  readonly text: string;
  readonly calls: ReadonlyArray<GenCall>;
}

/** A generated turn. */
export interface GenTurn {
  readonly user: string;
  readonly steps: ReadonlyArray<GenStep>;
}

/** A generated session plan. */
export interface GenPlan {
  readonly system: string | undefined;
  readonly turns: ReadonlyArray<GenTurn>;
}

const resultText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.tuple(
    fc.string({ minLength: 1, maxLength: 4 }),
    fc.integer({ min: 50, max: 400 }),
  )
    .map(([s, n]) => s.repeat(n)),
);

const callArb: fc.Arbitrary<GenCall> = fc.record({
  name: fc.constantFrom("read", "grep", "run"),
  result: resultText,
  isError: fc.boolean(),
});

const stepArb: fc.Arbitrary<GenStep> = fc.record({
  text: fc.oneof(fc.constant(""), fc.string({ maxLength: 12 })),
  calls: fc.array(callArb, { maxLength: 2 }),
});

const turnArb: fc.Arbitrary<GenTurn> = fc.record({
  user: fc.string({ maxLength: 12 }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 3 }),
});

/** Plans of sessions with up to five turns. */
export const planArb: fc.Arbitrary<GenPlan> = fc.record({
  system: fc.option(fc.string({ maxLength: 12 }), { nil: undefined }),
  turns: fc.array(turnArb, { maxLength: 5 }),
});

const text = (value: string) =>
  value === "" ? [] : [{ type: "text" as const, text: value }];

/** The drafts of a plan, in log order. */
export function planDrafts(plan: GenPlan, prefix = ""): EventDraft[] {
  const drafts: EventDraft[] = [];
  if (plan.system !== undefined) {
    drafts.push(Draft.system(plan.system, { id: "system" }));
  }
  plan.turns.forEach((t, turn) => {
    drafts.push(Draft.turnStart(turn));
    drafts.push(Draft.user(t.user, { id: `${prefix}u${turn}` }));
    t.steps.forEach((s, step) => {
      const callId = (k: number) => `${prefix}c${turn}.${step}.${k}`;
      drafts.push(Draft.stepStart(turn, step));
      drafts.push(
        assistantMessageDraft(turn, step, `${prefix}a${turn}.${step}`, [
          ...text(s.text),
          ...s.calls.map((c, k) => ({
            type: "tool-call" as const,
            id: callId(k),
            name: c.name,
            arguments: "{}",
          })),
        ], { kind: "model", provider: "p", model: "m" }),
      );
      s.calls.forEach((c, k) => {
        drafts.push(Draft.toolCall({
          turn,
          step,
          callId: callId(k),
          name: c.name,
          arguments: "{}",
        }));
        drafts.push(toolResultMessageDraft(turn, step, `r${callId(k)}`, {
          type: "tool-result",
          toolCallId: callId(k),
          content: text(c.result),
          ...(c.isError ? { isError: true } : {}),
        }, {
          ...(c.isError ? { error: { name: "Failed", code: "E" } } : {}),
          meta: { k },
        }));
      });
      drafts.push(Draft.stepEnd(turn, step));
    });
    drafts.push(Draft.turnEnd(turn, "completed"));
  });
  return drafts;
}

/** A fresh session with the plan's events appended. */
export function planSession(plan: GenPlan, id = "gen"): Session {
  const empty = Session.make({ id, createdAt: 0, isSeeded: false });
  return Effect.runSync(Session.appendAll(empty, planDrafts(plan)));
}

/** The generated sessions themselves. */
export const sessionArb: fc.Arbitrary<Session> = planArb.map((plan) =>
  planSession(plan)
);

/** One history operation: compact keeping `n` nodes, or prune result `n`. */
export type HistoryOp = readonly ["compact" | "prune" | "append", number];

/**
 * Applies history operations to a session: a compaction of the range
 * {@link selectCompactableRange} picks keeping `n % 6` nodes, a prune of the
 * `n`-th current tool result, or an append of more generated turns.
 */
export function applyHistory(
  session: Session,
  ops: ReadonlyArray<HistoryOp>,
  more: ReadonlyArray<GenPlan> = [],
): Session {
  let current = session;
  ops.forEach(([kind, n], k) => {
    if (kind === "compact") {
      const range = selectCompactableRange(current.surface, {
        keepLast: n % 6,
      });
      if (range === undefined) return;
      current = Effect.runSync(compact(current, {
        ...range,
        summary: `summary ${k}`,
        compactionId: `h${k}`,
      }));
    } else if (kind === "prune") {
      const results = surfaceNodes(current.surface).filter((seq) =>
        surfaceEvent(current.surface, seq)?.type === "tool/result"
      );
      const seq = results[n % Math.max(1, results.length)];
      if (seq === undefined) return;
      current = Effect.runSync(pruneToolResult(current, seq, [
        { type: "text", text: `pruned ${k}` },
      ]));
    } else {
      const plan = more[n % Math.max(1, more.length)];
      if (plan === undefined) return;
      current = Effect.runSync(
        Session.appendAll(
          current,
          planDrafts({ ...plan, system: undefined }, `m${k}.`),
        ),
      );
    }
  });
  return current;
}

/** Operations for {@link applyHistory}. */
export const historyOpsArb: fc.Arbitrary<HistoryOp[]> = fc.array(
  fc.tuple(
    fc.constantFrom("compact" as const, "prune" as const, "append" as const),
    fc.nat(),
  ),
  { maxLength: 6 },
);

/** Generated sessions with compactions, prunes and later appends. */
export const historySessionArb: fc.Arbitrary<Session> = fc
  .tuple(planArb, historyOpsArb, fc.array(planArb, { maxLength: 2 }))
  .map(([plan, ops, more]) => applyHistory(planSession(plan), ops, more));
