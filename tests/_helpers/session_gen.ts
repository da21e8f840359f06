/**
 * Generated sessions for property tests: turns of a user message and steps
 * of an assistant message with 0..2 tool calls, each followed by its
 * `tool/call` event and its `tool/result`, optionally under a system head.
 * Tool results are sometimes long, so pruning has something to do. The
 * transcripts are clean: every call is answered right after its message.
 */
import fc from "fast-check";
import {
  applyHistory,
  type GenCall,
  type GenPlan,
  type GenStep,
  type GenTurn,
  type HistoryOp,
  planDrafts,
  planSession,
} from "../../src/testing/checkpoint_kit.ts";
import type { Session } from "@palimpsest/session";

export type {
  GenCall,
  GenPlan,
  GenStep,
  GenTurn,
  HistoryOp,
} from "../../src/testing/checkpoint_kit.ts";

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

/** The generated sessions themselves. */
export const sessionArb: fc.Arbitrary<Session> = planArb.map((plan) =>
  planSession(plan)
);

export { applyHistory, planDrafts, planSession };

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
