import {
  checkTranscript,
  compact,
  deriveMessages,
  deriveMessagesWithSources,
  lineage,
  type LineageNode,
  type Message,
  pruneLargeToolResults,
  pruneToolResult,
  selectCompactableRange,
  selectCompactableRangeByBudget,
  Session,
  type SessionSeq,
  setSystemPrompt,
} from "@palimpsest/session";
import { surfaceEvent, surfaceNodes } from "@palimpsest/session/internal";
import { Effect, Result } from "effect";
import fc from "fast-check";
import assert from "node:assert/strict";
import {
  historySessionArb,
  planArb,
  planDrafts,
  planSession,
} from "../_helpers/session_gen.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";
import {
  drafts,
  fails,
  ok,
  s,
  sessionOf,
  toolResultMessageDraft,
} from "../_helpers/build.ts";

const { assistant, system, toolCall, toolResult, user } = drafts;

// 0 system, 1 turn/start 4, 2 u0, 3 a0 [call c1], 4 tool/call, 5 result c1,
// 6 a1, 7 u1. Surface: 0 2 3 5 6 7.
const fixture = (): Session =>
  sessionOf([
    system("sys", "Be brief."),
    { type: "turn/start", data: { turn: 4 } },
    user("u0"),
    assistant("a0", "look", ["c1"]),
    toolCall("c1"),
    toolResult("c1", "contents"),
    assistant("a1", "done"),
    user("u1"),
  ]);

const range = (startSeq: number, endSeq: number, compactionId = "c") => ({
  startSeq: s(startSeq),
  endSeq: s(endSeq),
  summary: `summary ${compactionId}`,
  compactionId,
});

const summaryMessage = (compactionId: string, summary: string): Message => ({
  id: `compaction-${compactionId}`,
  role: "user",
  content: [{ type: "text", text: summary }],
  source: { kind: "plugin", plugin: "compaction" },
});

Deno.test("compact() appends the four-event transaction", async (t) => {
  const before = fixture();
  const after = ok(compact(before, range(2, 5, "first")));
  const events = Result.getOrThrow(Session.events(after, s(8)));

  await t.step("the events and their data", () => {
    assert.deepEqual(events.map((e) => e.type), [
      "compaction/start",
      "compaction/summary",
      "user/message",
      "compaction/end",
    ]);
    assert.deepEqual(events[0]?.data, { compactionId: "first", turn: 4 });
    assert.deepEqual(events[1]?.data, {
      compactionId: "first",
      summary: "summary first",
      shadowedSeqs: [2, 3, 5],
    });
    assert.deepEqual(events[3]?.data, { compactionId: "first" });
  });

  await t.step("the summary replaces the range and cites it", () => {
    const message = surfaceEvent(after.surface, s(10));
    assert.equal(message?.type, "user/message");
    assert.deepEqual(message?.surfaceOp, {
      op: "replace",
      startSeq: 2,
      endSeq: 5,
    });
    assert.deepEqual(message?.sourceEventSeqs, [8, 9, 2, 3, 5]);
    assert.deepEqual(surfaceNodes(after.surface), [0, 10, 6, 7]);
    assert.deepEqual(deriveMessages(after.surface).map((m) => m.id), [
      "sys",
      "compaction-first",
      "a1",
      "u1",
    ]);
    assert.deepEqual(
      deriveMessages(after.surface)[1],
      summaryMessage("first", "summary first"),
    );
  });

  await t.step("the input session is unchanged", () => {
    assert.equal(before.surface.nextSeq, 8);
    assert.deepEqual(surfaceNodes(before.surface), [0, 2, 3, 5, 6, 7]);
  });
});

Deno.test("compact() turn is the latest step/start or turn/start", () => {
  const withStep = sessionOf([
    { type: "turn/start", data: { turn: 1 } },
    { type: "step/start", data: { turn: 1, step: 2 } },
    user("u0"),
  ]);
  const after = ok(compact(withStep, range(2, 2)));
  assert.deepEqual(Result.getOrThrow(Session.eventAt(after, s(3)))?.data, {
    compactionId: "c",
    turn: 1,
  });
  const noTurn = ok(compact(sessionOf([user("u0")]), range(0, 0)));
  assert.deepEqual(Result.getOrThrow(Session.eventAt(noTurn, s(1)))?.data, {
    compactionId: "c",
    turn: 0,
  });
});

Deno.test("compact() refuses before appending anything", async (t) => {
  const session = fixture();
  const refused = (startSeq: number, endSeq: number) => {
    const error = fails(compact(session, range(startSeq, endSeq)));
    return error;
  };

  await t.step("a range holding a call without its result", () => {
    const error = refused(2, 3);
    thenFails(error, "CompactionSplitsToolPair", {
      startSeq: 2,
      endSeq: 3,
      callId: "c1",
      callSeq: 3,
      resultSeq: 5,
    });
  });

  await t.step("a range holding a result without its call", () => {
    const error = refused(5, 7);
    thenFails(error, "CompactionSplitsToolPair", {
      callId: "c1",
      callSeq: 3,
      resultSeq: 5,
    });
  });

  await t.step("a range starting at the system head", () => {
    const error = refused(0, 2);
    thenFails(error, "CompactionShadowsSystemHead", {
      startSeq: 0,
      endSeq: 2,
      head: 0,
    });
  });

  await t.step("a start that is not on the surface", () => {
    const error = refused(1, 7);
    thenFails(error, "ReplaceStartNotOnSurface", { seq: 10, startSeq: 1 });
    thenFails(refused(99, 7), "ReplaceStartNotOnSurface");
  });

  await t.step("an end that is not on the surface", () => {
    const error = refused(2, 4);
    thenFails(error, "ReplaceEndNotOnSurface", { seq: 10, endSeq: 4 });
  });

  await t.step("an inverted range", () => {
    const error = refused(6, 2);
    thenFails(error, "ReplaceRangeInverted", {
      seq: 10,
      startSeq: 6,
      endSeq: 2,
    });
  });

  await t.step("an empty compaction id fails decoding", () => {
    const error = fails(
      compact(session, { ...range(6, 7), compactionId: "" }),
    );
    thenFails(error, "InvalidEventData");
  });

  await t.step("nothing was appended", () => {
    assert.equal(session.surface.nextSeq, 8);
    assert.deepEqual(surfaceNodes(session.surface), [0, 2, 3, 5, 6, 7]);
  });
});

const findEvent = (
  node: LineageNode,
  f: (node: LineageNode) => boolean,
): LineageNode | undefined => {
  if (f(node)) return node;
  for (const source of node.sources) {
    const found = findEvent(source, f);
    if (found !== undefined) return found;
  }
  return undefined;
};

Deno.test("repeated compaction keeps the older summary in the lineage", async (t) => {
  const first = ok(compact(fixture(), range(2, 5, "first")));
  // Surface 0 10 6 7; then u2 at 12.
  const more = ok(Session.append(first, user("u2")));
  // 10 stands before 7 on the surface though 10 > 7: order is by position.
  const second = ok(compact(more, {
    startSeq: s(10),
    endSeq: s(7),
    summary: "summary second",
    compactionId: "second",
  }));

  await t.step("the newest surface keeps every node outside the range", () => {
    assert.deepEqual(surfaceNodes(second.surface), [0, 15, 12]);
    assert.deepEqual(deriveMessages(second.surface).map((m) => m.id), [
      "sys",
      "compaction-second",
      "u2",
    ]);
  });

  await t.step("lineage reaches the older summary and its originals", () => {
    const tree = Result.getOrThrow(lineage(second, s(15)));
    assert.ok(tree !== undefined);
    assert.deepEqual(tree.sources.map((n) => n.seq), [13, 14, 10, 6, 7]);
    const older = findEvent(
      tree,
      (n) => n.event?.type === "compaction/summary" && n.seq === 9,
    );
    assert.deepEqual(older?.event?.data, {
      compactionId: "first",
      summary: "summary first",
      shadowedSeqs: [2, 3, 5],
    });
    const olderMessage = tree.sources.find((n) => n.seq === 10);
    assert.deepEqual(olderMessage?.sources.map((n) => n.seq), [8, 9, 2, 3, 5]);
  });
});

/** A selected range as `[startSeq, endSeq]`, or undefined. */
const endpoints = (
  r: { readonly startSeq: number; readonly endSeq: number } | undefined,
) => r && [r.startSeq, r.endSeq];

Deno.test("selectCompactableRange() keeps the head, the newest nodes and pairs", () => {
  const surface = fixture().surface;
  const select = (keepLast: number) =>
    endpoints(selectCompactableRange(surface, { keepLast }));
  assert.deepEqual(select(0), [2, 7]);
  assert.deepEqual(select(1), [2, 6]);
  assert.deepEqual(select(2), [2, 5]);
  // Position 2 is a0, whose result would stay: shrink to u0.
  assert.deepEqual(select(3), [2, 2]);
  assert.deepEqual(select(4), [2, 2]);
  assert.equal(select(5), undefined);
  assert.equal(select(100), undefined);
  assert.deepEqual(select(-3), [2, 7]);
  const noHead = sessionOf([user("a"), user("b")]).surface;
  assert.deepEqual(selectCompactableRange(noHead, { keepLast: 1 }), {
    startSeq: 0,
    endSeq: 0,
  });
  assert.equal(
    selectCompactableRange(
      Session.make({ id: "e", createdAt: 0, isSeeded: false }).surface,
      { keepLast: 0 },
    ),
    undefined,
  );
});

Deno.test("selectCompactableRange() stops before a call still in flight", () => {
  const session = sessionOf([
    user("u0"),
    assistant("a0", "", ["c1"]),
    toolCall("c1"),
  ]);
  assert.deepEqual(selectCompactableRange(session.surface, { keepLast: 0 }), {
    startSeq: 0,
    endSeq: 0,
  });
  // compact refuses it too: the fold's rule, before anything is appended.
  thenFails(
    fails(compact(session, range(0, 1))),
    "ReplaceShadowsUnansweredCall",
    {
      seq: 5,
      callSeq: 1,
      callIds: ["c1"],
    },
  );
});

Deno.test("selectCompactableRange() does not offer a summary alone", () => {
  const session = ok(compact(sessionOf([user("a"), user("b"), user("c")]), {
    ...range(0, 1),
  }));
  // Surface: summary 5, c.
  assert.equal(
    selectCompactableRange(session.surface, { keepLast: 1 }),
    undefined,
  );
  assert.deepEqual(selectCompactableRange(session.surface, { keepLast: 0 }), {
    startSeq: 5,
    endSeq: 2,
  });
});

Deno.test("selectCompactableRangeByBudget() keeps the newest text within the budget", () => {
  // Chars: sys 9 | u0 2 | a0 4 + 4 + 2 | result 8 | a1 4 | u1 2.
  const surface = fixture().surface;
  const select = (keepChars: number) =>
    endpoints(selectCompactableRangeByBudget(surface, { keepChars }));
  assert.deepEqual(select(0), [2, 7]);
  assert.deepEqual(select(2), [2, 6]);
  assert.deepEqual(select(6), [2, 5]);
  assert.deepEqual(select(13), [2, 5]);
  // Keeping the result (8 more) keeps a0 only by shrinking past it.
  assert.deepEqual(select(14), [2, 2]);
  assert.equal(select(1_000), undefined);
});

Deno.test("pruneToolResult() rewrites only the block's content", async (t) => {
  const before = fixture();
  const content = [{ type: "text" as const, text: "[pruned]" }];
  const after = ok(pruneToolResult(before, s(5), content));

  await t.step("a prune event then a single-node replacement", () => {
    const [prune, replacement] = Result.getOrThrow(Session.events(after, s(8)));
    assert.equal(prune?.type, "compaction/prune");
    assert.deepEqual(prune?.data, { shadowedSeqs: [5] });
    assert.equal(replacement?.type, "tool/result");
    assert.deepEqual(replacement?.surfaceOp, {
      op: "replace",
      startSeq: 5,
      endSeq: 5,
    });
    assert.deepEqual(replacement?.sourceEventSeqs, [5]);
  });

  await t.step("every other field is kept", () => {
    const original = surfaceEvent(before.surface, s(5));
    const replacement = surfaceEvent(after.surface, s(9));
    assert.ok(original?.type === "tool/result");
    assert.ok(replacement?.type === "tool/result");
    const [block] = original.data.message.content;
    assert.deepEqual(replacement.data, {
      ...original.data,
      message: {
        ...original.data.message,
        content: [{ ...block, content }],
      },
    });
    assert.deepEqual(surfaceNodes(after.surface), [0, 2, 3, 9, 6, 7]);
  });

  await t.step(
    "a node that is not a current tool result is refused, naming it",
    () => {
      const notResult = fails(pruneToolResult(before, s(2), content));
      thenFails(notResult, "ToolResultReplaceTargetNotToolResult", {
        seq: 9,
        target: 2,
        targetType: "user/message",
      });
      const logOnly = fails(pruneToolResult(before, s(4), content));
      thenFails(logOnly, "ReplaceStartNotOnSurface", { seq: 9, startSeq: 4 });
      const shadowed = fails(pruneToolResult(after, s(5), content));
      thenFails(shadowed, "ReplaceStartNotOnSurface");
      assert.equal(before.surface.nextSeq, 8);
    },
  );

  await t.step("a pruned result can be pruned again", () => {
    const again = ok(pruneToolResult(after, s(9), []));
    assert.deepEqual(surfaceNodes(again.surface), [0, 2, 3, 11, 6, 7]);
  });
});

Deno.test("pruneLargeToolResults() keeps head and tail of large results", async (t) => {
  const big = "a".repeat(300) + "b".repeat(400) + "c".repeat(300);
  const session = sessionOf([
    assistant("a0", "", ["x", "y", "z"]),
    toolResult("x", big),
    toolResult("y", "small"),
    toolResultMessageDraft(0, 0, "r-z", {
      type: "tool-result",
      toolCallId: "z",
      isError: true,
      content: [
        { type: "text", text: "x".repeat(600) },
        { type: "image", attachment: { path: "shot.png" } },
        { type: "text", text: "y".repeat(600) },
      ],
    }, { error: { name: "Boom", code: "E" } }),
  ]);
  const options = { thresholdChars: 500, headChars: 300, tailChars: 300 };
  const result = ok(pruneLargeToolResults(session, options));
  const marker = (n: number) => `\n[… ${n} characters pruned …]\n`;

  await t.step("what was pruned and the characters saved", () => {
    assert.deepEqual(
      result.pruned.map((p) => [p.seq, p.replacement, p.savedChars]),
      [
        [1, 5, 400 - marker(400).length],
        [3, 7, 600 - marker(600).length],
      ],
    );
    assert.equal(
      result.savedChars,
      1000 - marker(400).length - marker(600).length,
    );
  });

  await t.step(
    "the derived result holds the kept text and the pruning markers",
    () => {
      const messages = deriveMessages(result.session.surface);
      const inner = (i: number) => {
        const block = messages[i]?.content[0];
        return block?.type === "tool-result" ? block.content : undefined;
      };
      assert.deepEqual(inner(1), [{
        type: "text",
        text: "a".repeat(300) + marker(400) + "c".repeat(300),
      }]);
      assert.deepEqual(inner(2), [{ type: "text", text: "small" }]);
      assert.deepEqual(inner(3), [
        { type: "text", text: "x".repeat(300) + marker(600) + "y".repeat(300) },
        { type: "image", attachment: { path: "shot.png" } },
      ]);
      assert.deepEqual(checkTranscript(messages), []);
    },
  );

  await t.step("a second pass prunes nothing", () => {
    const again = ok(
      pruneLargeToolResults(result.session, {
        ...options,
        thresholdChars: 700,
      }),
    );
    assert.deepEqual(again.pruned, []);
    assert.equal(again.savedChars, 0);
    assert.equal(again.session, result.session);
  });

  await t.step("a surrogate pair is never cut in half", () => {
    const emoji = "😀".repeat(300);
    const cut = ok(pruneLargeToolResults(
      sessionOf([assistant("a", "", ["e"]), toolResult("e", emoji)]),
      { thresholdChars: 100, headChars: 11, tailChars: 11 },
    ));
    const block = deriveMessages(cut.session.surface)[1]?.content[0];
    assert.ok(block?.type === "tool-result");
    const inner = block.content[0];
    assert.ok(inner?.type === "text");
    assert.ok(inner.text.startsWith("😀".repeat(5) + "\n"));
    assert.ok(inner.text.endsWith("\n" + "😀".repeat(5)));
    assert.equal(inner.text.isWellFormed(), true);
  });

  await t.step("keeping more than the text saves nothing", () => {
    const none = ok(pruneLargeToolResults(session, {
      thresholdChars: 10,
      headChars: 600,
      tailChars: 600,
    }));
    assert.deepEqual(none.pruned, []);
    assert.equal(none.session.surface.nextSeq, session.surface.nextSeq);
  });
});

Deno.test("setSystemPrompt() appends the head, then replaces it", async (t) => {
  const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });

  await t.step("on an empty surface it appends", () => {
    const first = ok(setSystemPrompt(empty, "Be brief."));
    const event = Result.getOrThrow(Session.eventAt(first, s(0)));
    assert.equal(event?.type, "system/message");
    assert.equal(event?.surfaceOp, "append");
    assert.deepEqual(event?.data, {
      turn: 0,
      step: 0,
      message: {
        id: "system-0",
        role: "system",
        content: [{ type: "text", text: "Be brief." }],
        source: { kind: "plugin", plugin: "system-prompt" },
      },
    });
  });

  await t.step("over a system head it replaces the head, citing it", () => {
    const first = ok(setSystemPrompt(empty, "Be brief."));
    const turned = ok(Session.appendAll(first, [
      { type: "turn/start", data: { turn: 2 } },
      { type: "step/start", data: { turn: 2, step: 1 } },
      user("u0"),
    ]));
    const second = ok(setSystemPrompt(turned, "Be thorough."));
    const event = surfaceEvent(second.surface, s(4));
    assert.deepEqual(event?.surfaceOp, {
      op: "replace",
      startSeq: 0,
      endSeq: 0,
    });
    assert.deepEqual(event?.sourceEventSeqs, [0]);
    assert.ok(event?.type === "system/message");
    assert.deepEqual([event.data.turn, event.data.step], [2, 1]);
    assert.deepEqual(surfaceNodes(second.surface), [4, 3]);
    assert.deepEqual(deriveMessages(second.surface).map((m) => m.id), [
      "system-4",
      "u0",
    ]);
  });

  await t.step("the same prompt changes nothing", () => {
    const first = ok(setSystemPrompt(empty, "Be brief."));
    assert.equal(ok(setSystemPrompt(first, "Be brief.")), first);
  });

  await t.step("an empty prompt keeps the node and derives no message", () => {
    const first = ok(setSystemPrompt(empty, "Be brief."));
    const none = ok(setSystemPrompt(first, ""));
    assert.deepEqual(surfaceNodes(none.surface), [1]);
    assert.deepEqual(deriveMessages(none.surface), []);
  });

  await t.step(
    "a surface without a system head gets one before its head",
    () => {
      const session = sessionOf([
        { type: "turn/start", data: { turn: 0 } },
        user("u0"),
      ]);
      const prompted = ok(setSystemPrompt(session, "Late."));
      assert.deepEqual(surfaceNodes(prompted.surface), [2, 1]);
      assert.equal(
        Result.getOrThrow(Session.eventAt(prompted, 2))?.surfaceOp,
        "prepend",
      );
      assert.deepEqual(deriveMessages(prompted.surface).map((m) => m.role), [
        "system",
        "user",
      ]);
      // Then it is the head: a change replaces it.
      const changed = ok(setSystemPrompt(prompted, "Later."));
      assert.deepEqual(surfaceNodes(changed.surface), [3, 1]);
      // No prompt on a surface without one changes nothing.
      assert.equal(ok(setSystemPrompt(session, "")), session);
    },
  );
});

// ---------------------------------------------------------------------------
// Properties

type Op =
  | {
    readonly kind: "compact";
    readonly a: number;
    readonly b: number;
    readonly ordered: boolean;
  }
  | { readonly kind: "prune"; readonly a: number; readonly chars: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("compact" as const),
    a: fc.nat(),
    b: fc.nat(),
    ordered: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("prune" as const),
    a: fc.nat(),
    chars: fc.nat(20),
  }),
);

/** The messages of `nodes[i..j]` replaced by `message`. */
const replacedMessages = (
  session: Session,
  i: number,
  j: number,
  message: Message,
): Message[] => {
  const position = new Map<number, number>(
    surfaceNodes(session.surface).map((seq, k) => [seq, k]),
  );
  const before = deriveMessagesWithSources(session.surface);
  const at = (seq: SessionSeq) => position.get(seq) ?? -1;
  return [
    ...before.filter((m) => at(m.seq) < i).map((m) => m.message),
    message,
    ...before.filter((m) => at(m.seq) > j).map((m) => m.message),
  ];
};

const step = (session: Session, op: Op, n: number): Session => {
  const nodes = surfaceNodes(session.surface);
  if (nodes.length === 0) return session;
  if (op.kind === "prune") {
    const results = nodes.filter((seq) =>
      surfaceEvent(session.surface, seq)?.type === "tool/result"
    );
    const seq = results[op.a % Math.max(1, results.length)];
    if (seq === undefined) return session;
    const content = [{ type: "text" as const, text: "p".repeat(op.chars) }];
    const after = ok(pruneToolResult(session, seq, content));
    const expected = deriveMessagesWithSources(session.surface).map((m) => {
      if (m.seq !== seq) return m.message;
      const [block] = m.message.content;
      assert.ok(block?.type === "tool-result");
      return { ...m.message, content: [{ ...block, content }] };
    });
    assert.deepEqual(deriveMessages(after.surface), expected);
    return after;
  }
  // Half the ranges are put in order, so most compactions get past the
  // endpoint checks.
  const x = op.a % nodes.length;
  const y = op.b % nodes.length;
  const [i, j] = op.ordered ? [Math.min(x, y), Math.max(x, y)] : [x, y];
  const startSeq = nodes[i];
  const endSeq = nodes[j];
  assert.ok(startSeq !== undefined && endSeq !== undefined);
  const id = `p${n}`;
  const summary = `summary ${n}`;
  const result = Effect.runSync(Effect.result(
    compact(session, { startSeq, endSeq, summary, compactionId: id }),
  ));
  const headProtected = i === 0 &&
    surfaceEvent(session.surface, startSeq)?.type === "system/message";
  if (i > j) {
    thenFails(failureOf(result), "ReplaceRangeInverted");
    return session;
  }
  if (headProtected) {
    thenFails(failureOf(result), "CompactionShadowsSystemHead");
    return session;
  }
  // The oracle: a range is compactable exactly when the transcript with
  // the range replaced still pairs every call with its result.
  const expected = replacedMessages(
    session,
    i,
    j,
    summaryMessage(id, summary),
  );
  if (checkTranscript(expected).length > 0) {
    thenFails(failureOf(result), "CompactionSplitsToolPair");
    return session;
  }
  assert.ok(Result.isSuccess(result));
  const after = result.success;
  assert.deepEqual(deriveMessages(after.surface), expected);
  assert.deepEqual(surfaceNodes(after.surface), [
    ...nodes.slice(0, i),
    after.surface.nextSeq - 2,
    ...nodes.slice(j + 1),
  ]);
  return after;
};

Deno.test("compactions and prunes replace exactly their range and keep the transcript clean", () => {
  fc.assert(
    fc.property(
      historySessionArb,
      fc.array(opArb, { minLength: 1, maxLength: 5 }),
      (start, ops) => {
        let session = start;
        assert.deepEqual(checkTranscript(deriveMessages(session.surface)), []);
        ops.forEach((op, n) => {
          session = step(session, op, n);
          assert.deepEqual(
            checkTranscript(deriveMessages(session.surface)),
            [],
          );
        });
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("a selected range always compacts and keeps what it promises", () => {
  fc.assert(
    fc.property(
      planArb,
      fc.nat(12),
      fc.nat(2_000),
      (plan, keepLast, keepChars) => {
        const session = planSession(plan);
        const nodes = surfaceNodes(session.surface);
        for (
          const r of [
            selectCompactableRange(session.surface, { keepLast }),
            selectCompactableRangeByBudget(session.surface, { keepChars }),
          ]
        ) {
          if (r === undefined) continue;
          const after = ok(
            compact(session, { ...r, summary: "s", compactionId: "k" }),
          );
          const j = nodes.indexOf(r.endSeq);
          assert.ok(nodes.length - 1 - j >= 0);
          assert.deepEqual(checkTranscript(deriveMessages(after.surface)), []);
        }
        const r = selectCompactableRange(session.surface, { keepLast });
        if (r !== undefined) {
          assert.ok(nodes.length - 1 - nodes.indexOf(r.endSeq) >= keepLast);
        }
      },
    ),
    { numRuns: 100 },
  );
});

Deno.test("pruneLargeToolResults() changes only the large results' content", () => {
  fc.assert(
    fc.property(
      planArb,
      fc.integer({ min: 50, max: 500 }),
      (plan, threshold) => {
        const session = planSession(plan);
        const options = {
          thresholdChars: threshold,
          headChars: 10,
          tailChars: 10,
        };
        const result = ok(pruneLargeToolResults(session, options));
        const before = deriveMessagesWithSources(session.surface);
        const after = deriveMessages(result.session.surface);
        assert.equal(after.length, before.length);
        const prunedSeqs = new Set<number>(result.pruned.map((p) => p.seq));
        let saved = 0;
        before.forEach((m, k) => {
          const next = after[k];
          if (!prunedSeqs.has(m.seq)) {
            assert.deepEqual(next, m.message);
            return;
          }
          assert.equal(next?.id, m.message.id);
          const chars = (message: Message | undefined) => {
            const block = message?.content[0];
            if (block?.type !== "tool-result") return 0;
            return block.content.reduce(
              (n, b) => n + (b.type === "text" ? b.text.length : 0),
              0,
            );
          };
          assert.ok(chars(m.message) > threshold);
          saved += chars(m.message) - chars(next);
        });
        assert.equal(result.savedChars, saved);
        assert.deepEqual(checkTranscript(after), []);
      },
    ),
    { numRuns: 100 },
  );
});

Deno.test("a selected range never holds a call that no result answered", () => {
  let withOpenCalls = 0;
  fc.assert(
    fc.property(
      planArb,
      fc.array(fc.boolean(), { maxLength: 40 }),
      fc.nat(12),
      fc.nat(2_000),
      (plan, dropped, keepLast, keepChars) => {
        // Some results never came: their calls stay open anywhere.
        let k = 0;
        const kept = planDrafts(plan).filter((d) =>
          d.type !== "tool/result" || dropped[k++ % (dropped.length || 1)] !==
            true
        );
        const session = ok(
          Session.appendAll(
            Session.make({ id: "p", createdAt: 0, isSeeded: false }),
            kept,
          ),
        );
        if (kept.length < planDrafts(plan).length) withOpenCalls++;
        for (
          const r of [
            selectCompactableRange(session.surface, { keepLast }),
            selectCompactableRangeByBudget(session.surface, { keepChars }),
          ]
        ) {
          if (r === undefined) continue;
          // compact (and the fold under it) accepts every range offered.
          ok(compact(session, { ...r, summary: "s", compactionId: "k" }));
        }
      },
    ),
    { numRuns: 150 },
  );
  assert.ok(withOpenCalls > 0);
});
