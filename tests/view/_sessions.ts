/**
 * Sessions the view tests render: one with every kind of history (a
 * pruned result, a compaction, a summary of a summary, a crash repaired),
 * and one whose every string is hostile markup.
 */
import {
  compact,
  Draft,
  type EventDraft,
  pruneToolResult,
  rewind,
  selectCompactableRange,
  Session,
  SessionSeq,
  setSystemPrompt,
} from "@palimpsest/session";
import {
  interruptedTurnClosers,
  surfaceEvent,
  surfaceNodes,
} from "@palimpsest/session/internal";
import { Effect, Result } from "effect";
import { assistantMessageDraft } from "../_helpers/build.ts";

const text = (t: string) => [{ type: "text" as const, text: t }];

const user = (id: string, t: string): EventDraft => ({
  type: "user/message",
  surfaceOp: "append",
  data: { id, role: "user", content: text(t), source: { kind: "user" } },
});

const assistant = (
  turn: number,
  id: string,
  t: string,
  call?: { id: string; name: string; arguments: string },
  provider = "scripted",
): EventDraft =>
  assistantMessageDraft(turn, 0, id, [
    ...text(t),
    ...(call === undefined ? [] : [{ type: "tool-call" as const, ...call }]),
  ], { kind: "model", provider, model: "demo-1" });

const toolCall = (
  turn: number,
  callId: string,
  name: string,
  args: string,
): EventDraft => ({
  type: "tool/call",
  data: { turn, step: 0, callId, name, arguments: args },
});

const toolResult = (
  turn: number,
  callId: string,
  t: string,
  cites: SessionSeq,
): EventDraft => ({
  type: "tool/result",
  surfaceOp: "append",
  sourceEventSeqs: [cites],
  data: {
    turn,
    step: 0,
    message: {
      id: `r-${callId}`,
      role: "user",
      source: { kind: "tool", callId },
      content: [{
        type: "tool-result",
        toolCallId: callId,
        content: text(t),
      }],
    },
  },
});

const run = <A, E>(effect: Effect.Effect<A, E>): A => Effect.runSync(effect);

const append = (session: Session, draft: EventDraft): Session =>
  run(Session.append(session, draft));

const last = (session: Session): SessionSeq => {
  const nodes = surfaceNodes(session.surface);
  const seq = nodes[nodes.length - 1];
  if (seq === undefined) throw new Error("Expected a surface node");
  return seq;
};

/** The compaction summary on the surface. */
const summaryOf = (session: Session): SessionSeq | undefined =>
  surfaceNodes(session.surface).find((seq) => {
    const e = surfaceEvent(session.surface, seq);
    return e?.type === "user/message" && e.data.source.kind === "plugin";
  });

/** What the rich session's history holds, for the assertions. */
export interface Rich {
  /** The session. */
  readonly session: Session;
  /** The pruned tool result (shadowed by the prune). */
  readonly pruned: SessionSeq;
  /** The first compaction's summary (shadowed by the second). */
  readonly firstSummary: SessionSeq;
  /** The second compaction's summary (on the surface). */
  readonly secondSummary: SessionSeq;
  /** The user message the first compaction shadowed. */
  readonly firstUser: SessionSeq;
}

/**
 * A session with a system prompt, two turns of tool use, a pruned result,
 * two compactions (the second folds the first summary in), and a third
 * turn a crash interrupted, closed by repair.
 *
 * @param hostile Markup put in every string the log carries.
 */
export function richSession(hostile = ""): Rich {
  const h = hostile;
  let session = Session.make({
    id: `demo${h}`,
    createdAt: 1_764_000_000_000,
    isSeeded: false,
    ...(h === "" ? {} : { meta: { note: h } }),
  });
  session = run(setSystemPrompt(session, `You are a careful agent.${h}`));
  session = append(session, { type: "turn/start", data: { turn: 0 } });
  session = append(
    session,
    user("u0", `Read notes.txt, then run the tests.${h}`),
  );
  const firstUser = last(session);
  session = append(
    session,
    assistant(0, "a0", `Reading it.${h}`, {
      id: `c0${h}`,
      name: `read_file${h}`,
      arguments: JSON.stringify({ path: `notes.txt${h}` }),
    }, `scripted${h}`),
  );
  session = append(session, toolCall(0, `c0${h}`, "read_file", "{}"));
  const call0 = SessionSeq.make(Session.nextSeq(session) - 1);
  const long = `${"decision: keep the log append-only. ".repeat(120)}${h}`;
  session = append(
    session,
    toolResult(0, `c0${h}`, long, call0),
  );
  const pruned = last(session);
  session = append(
    session,
    assistant(0, "a1", "Now the tests.", {
      id: "c1",
      name: "run_tests",
      arguments: "{}",
    }),
  );
  session = append(session, toolCall(0, "c1", "run_tests", "{}"));
  session = append(
    session,
    toolResult(
      0,
      "c1",
      `12 passed${h}`,
      SessionSeq.make(Session.nextSeq(session) - 1),
    ),
  );
  session = append(session, assistant(0, "a2", `All 12 tests pass.${h}`));
  session = append(session, {
    type: "turn/end",
    data: { turn: 0, reason: { kind: "completed" } },
  });
  session = run(
    pruneToolResult(session, pruned, text(`[pruned: notes.txt]${h}`)),
  );
  const range1 = selectCompactableRange(session.surface, { keepLast: 2 });
  if (range1 === undefined) throw new Error("Expected a compactable range");
  session = run(compact(session, {
    ...range1,
    summary:
      `The user asked to read notes.txt and run the tests; 12 passed.${h}`,
    compactionId: `c-1${h}`,
  }));
  const firstSummary = summaryOf(session);
  if (firstSummary === undefined) throw new Error("Expected a summary");
  session = append(session, user("u1", `Thanks. Summarise again.${h}`));
  session = append(session, assistant(1, "a3", `Done.${h}`));
  const range2 = selectCompactableRange(session.surface, { keepLast: 1 });
  if (range2 === undefined) throw new Error("Expected a second range");
  session = run(compact(session, {
    ...range2,
    summary: `Earlier: notes read, tests passed, user thanked.${h}`,
    compactionId: `c-2${h}`,
  }));
  const secondSummary = summaryOf(session);
  if (secondSummary === undefined) throw new Error("Expected a summary");
  session = append(session, { type: "turn/start", data: { turn: 2 } });
  session = append(session, user("u2", `Deploy it.${h}`));
  session = append(
    session,
    assistant(2, "a4", `Deploying.${h}`, {
      id: "c2",
      name: "deploy",
      arguments: "{}",
    }),
  );
  session = append(session, toolCall(2, "c2", "deploy", "{}"));
  // The process dies here; a later open repairs the turn.
  const closers = interruptedTurnClosers(
    Result.getOrThrow(Session.events(session)),
  );
  session = run(Session.appendEvents(session, closers));
  return { session, pruned, firstSummary, secondSummary, firstUser };
}

/** Markup that would run script if any of it reached the page unescaped. */
export const HOSTILE =
  `</script><script>window.__pwned = 1</script><!-- <img src=x onerror="window.__pwned = 2"> ` +
  `<a id="jsurl" href="javascript:window.__pwned = 3">click</a> ' " \u2028\u2029 ` +
  `</style><style>body{display:none}</style><svg onload="window.__pwned = 4"></svg>` +
  `</textarea></title><iframe src="javascript:parent.__pwned = 5"></iframe>`;

/**
 * A session with a branch tree: turns 0 (seqs 0-3) and 1 (4-7); a rewind
 * to 3 (seq 8) and a message (9); a rewind to 8 (10), on that branch; then
 * a rewind to 7 (11), back under the first branch, which is current. The
 * tree: 0-7 holds 8-9 (which holds 10) and 11.
 */
export function branchedSession(): Session {
  let session = Session.make({ id: "branched", createdAt: 0, isSeeded: false });
  for (const n of [0, 1]) {
    session = append(session, { type: "turn/start", data: { turn: n } });
    session = append(session, user(`u${n}`, `Question ${n}`));
    session = append(session, assistant(n, `a${n}`, `Answer ${n}`));
    session = append(session, {
      type: "turn/end",
      data: { turn: n, reason: { kind: "completed" } },
    });
  }
  const back = (to: number, id: string, t: string) => {
    session = run(
      rewind(session, { to, event: Draft.user(t, { id }) }),
    );
  };
  back(3, "e1", "Edited question 1");
  session = append(session, user("x1", "And more"));
  back(8, "e2", "Edited again");
  back(7, "e3", "Back on the first branch");
  return session;
}
