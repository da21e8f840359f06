/**
 * Generated sessions for property tests: turns of a user message and steps
 * of an assistant message with 0..2 tool calls, each followed by its
 * `tool/call` event and its `tool/result`, optionally under a system head.
 * Tool results are sometimes long, so pruning has something to do. The
 * transcripts are clean: every call is answered right after its message.
 */
import fc from "fast-check";
import { type EventDraft, Session } from "@palimpsest/session";
import { Effect } from "effect";

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
export function planDrafts(plan: GenPlan): EventDraft[] {
  const drafts: EventDraft[] = [];
  if (plan.system !== undefined) {
    drafts.push({
      type: "system/message",
      surfaceOp: "append",
      data: {
        turn: 0,
        step: 0,
        message: {
          id: "system",
          role: "system",
          content: text(plan.system),
          source: { kind: "plugin", plugin: "system-prompt" },
        },
      },
    });
  }
  plan.turns.forEach((t, turn) => {
    drafts.push({ type: "turn/start", data: { turn } });
    drafts.push({
      type: "user/message",
      surfaceOp: "append",
      data: {
        id: `u${turn}`,
        role: "user",
        content: [{ type: "text", text: t.user }],
        source: { kind: "user" },
      },
    });
    t.steps.forEach((s, step) => {
      const callId = (k: number) => `c${turn}.${step}.${k}`;
      drafts.push({ type: "step/start", data: { turn, step } });
      drafts.push({
        type: "assistant/message",
        surfaceOp: "append",
        data: {
          turn,
          step,
          stream: [],
          message: {
            id: `a${turn}.${step}`,
            role: "assistant",
            content: [
              ...text(s.text),
              ...s.calls.map((c, k) => ({
                type: "tool-call" as const,
                id: callId(k),
                name: c.name,
                arguments: "{}",
              })),
            ],
            source: { kind: "model", provider: "p", model: "m" },
          },
        },
      });
      s.calls.forEach((c, k) => {
        drafts.push({
          type: "tool/call",
          data: {
            turn,
            step,
            callId: callId(k),
            name: c.name,
            arguments: "{}",
          },
        });
        drafts.push({
          type: "tool/result",
          surfaceOp: "append",
          data: {
            turn,
            step,
            message: {
              id: `r${callId(k)}`,
              role: "user",
              source: { kind: "tool", callId: callId(k) },
              content: [{
                type: "tool-result",
                toolCallId: callId(k),
                content: text(c.result),
                ...(c.isError ? { isError: true } : {}),
              }],
            },
            ...(c.isError ? { error: { name: "Failed", code: "E" } } : {}),
            meta: { k },
          },
        });
      });
      drafts.push({ type: "step/end", data: { turn, step } });
    });
    drafts.push({
      type: "turn/end",
      data: { turn, reason: { kind: "completed" } },
    });
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
