/**
 * History operations on a surface of the standard cycle (user message,
 * assistant message with one tool call, tool/call, tool/result): one
 * compaction of the oldest nodes, one tool-result prune, and the lineage of
 * a summary. Run alone: `deno bench bench/compaction_bench.ts`.
 */
import {
  compact,
  Draft,
  type EventDraft,
  lineage,
  pruneToolResult,
  selectCompactableRange,
  Session,
  SessionSeq,
} from "@palimpsest/session";
import { Effect } from "effect";

const cycles = 10_000;

const cycle = (n: number): EventDraft[] => [
  Draft.user(`question ${n}`, { id: `u${n}` }),
  {
    type: "assistant/message",
    surfaceOp: "append",
    data: {
      turn: n,
      step: 0,
      stream: [],
      message: {
        id: `a${n}`,
        role: "assistant",
        content: [
          { type: "text", text: "let me look" },
          { type: "tool-call", id: `c${n}`, name: "read", arguments: "{}" },
        ],
        source: { kind: "model", provider: "p", model: "m" },
      },
    },
  },
  {
    type: "tool/call",
    data: { turn: n, step: 0, callId: `c${n}`, name: "read", arguments: "{}" },
  },
  {
    type: "tool/result",
    surfaceOp: "append",
    data: {
      turn: n,
      step: 0,
      message: {
        id: `r${n}`,
        role: "user",
        source: { kind: "tool", callId: `c${n}` },
        content: [{
          type: "tool-result",
          toolCallId: `c${n}`,
          content: [{ type: "text", text: "x".repeat(200) }],
        }],
      },
    },
  },
];

const drafts: EventDraft[] = [];
for (let n = 0; n < cycles; n++) drafts.push(...cycle(n));
const session = Effect.runSync(
  Session.appendAll(
    Session.make({ id: "bench", createdAt: 0, isSeeded: false }),
    drafts,
  ),
);
const range = selectCompactableRange(session.surface, { keepLast: 3_000 });
if (range === undefined) throw new Error("Expected a compactable range");
const compacted = Effect.runSync(
  compact(session, { ...range, summary: "earlier work", compactionId: "b" }),
);
const summarySeq = SessionSeq.make(session.surface.nextSeq + 2);

Deno.bench(`selectCompactableRange on ${cycles * 3} nodes`, () => {
  selectCompactableRange(session.surface, { keepLast: 3_000 });
});

Deno.bench(`compact the oldest nodes of ${cycles * 3}`, () => {
  Effect.runSync(
    compact(session, { ...range, summary: "earlier work", compactionId: "b" }),
  );
});

Deno.bench(`pruneToolResult on ${cycles * 3} nodes`, () => {
  Effect.runSync(
    pruneToolResult(session, SessionSeq.make(drafts.length - 1), []),
  );
});

Deno.bench("lineage of a summary of 21k nodes", () => {
  lineage(compacted, summarySeq);
});
