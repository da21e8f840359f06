import {
  diffSurfaces,
  type EventDraft,
  lineage,
  type LineageNode,
  pruneToolResult,
  replay,
  Session,
  type SessionEvent,
  setSystemPrompt,
  shadowedBy,
  surfaceAt,
} from "@palimpsest/session";
import { replacementKind, surfaceNodes } from "@palimpsest/session/internal";
import { decodeEventResult, EventsNotHeld } from "@palimpsest/session/schema";
import { Effect, Result } from "effect";
import fc from "fast-check";
import assert from "node:assert/strict";
import { historySessionArb } from "../_helpers/session_gen.ts";
import { restored } from "../_helpers/checkpoints.ts";
import { compacted, drafts, ok, s, sessionOf } from "../_helpers/build.ts";

const { assistant, toolCall, toolResult, user } = drafts;

const shape = (node: LineageNode | undefined): unknown =>
  node === undefined
    ? undefined
    : node.sources.length === 0
    ? node.seq
    : [node.seq, node.sources.map(shape)];

const replacing = (
  id: string,
  startSeq: number,
  endSeq: number,
  sources: number[],
): EventDraft => ({
  type: "user/message",
  surfaceOp: { op: "replace", startSeq: s(startSeq), endSeq: s(endSeq) },
  sourceEventSeqs: sources.map(s),
  data: {
    id,
    role: "user",
    content: [{ type: "text", text: id }],
    source: { kind: "plugin", plugin: "test" },
  },
});

/** 0 u0, 1 a0 [c1], 2 tool/call, 3 result, 4 u1. */
const oneCall = (): Session =>
  sessionOf([
    user("u0"),
    assistant("a0", "", ["c1"]),
    toolCall("c1"),
    toolResult("c1", "out"),
    user("u1"),
  ]);

// oneCall(), compacted 0..3 (5..8, summary at 7), then 7..4 (9..12, summary
// at 11).
const twice = (): Session => {
  const first = compacted(oneCall(), 0, 3, "first", "one");
  return compacted(first, 7, 4, "second", "two");
};

Deno.test("lineage() follows sources down to the original events", async (t) => {
  const session = twice();

  await t.step("an original event has no sources", () => {
    const node = Result.getOrThrow(lineage(session, s(0)));
    assert.equal(node?.event?.type, "user/message");
    assert.deepEqual(node?.sources, []);
  });

  await t.step("a summary of a summary", () => {
    assert.deepEqual(shape(Result.getOrThrow(lineage(session, s(11)))), [11, [
      9,
      10,
      [7, [5, 6, 0, 1, 3]],
      4,
    ]]);
    const older = Result.getOrThrow(lineage(session, s(11)))?.sources[2]
      ?.sources[1];
    assert.deepEqual(older?.event?.data, {
      compactionId: "one",
      summary: "first",
      shadowedSeqs: [0, 1, 3],
    });
  });

  await t.step("a log-only event and a seq outside the log", () => {
    assert.deepEqual(shape(Result.getOrThrow(lineage(session, s(2)))), 2);
    assert.equal(Result.getOrThrow(lineage(session, s(13))), undefined);
  });

  await t.step("a pruned result stands for the original", () => {
    const pruned = ok(pruneToolResult(
      sessionOf([
        assistant("a0", "", ["c1"]),
        toolResult("c1", "long"),
      ]),
      s(1),
      [],
    ));
    assert.deepEqual(shape(Result.getOrThrow(lineage(pruned, s(3)))), [3, [1]]);
  });
});

Deno.test("lineage() shares a source cited along two paths", () => {
  // 1 cites 0 while appended; 2 replaces 1 and cites 0 again.
  const session = sessionOf([
    user("u0"),
    {
      type: "user/message",
      surfaceOp: "append",
      sourceEventSeqs: [s(0)],
      data: {
        id: "u1",
        role: "user",
        content: [],
        source: { kind: "user" },
      },
    },
    replacing("r", 1, 1, [1, 0]),
  ]);
  const tree = Result.getOrThrow(lineage(session, s(2)));
  assert.deepEqual(shape(tree), [2, [[1, [0]], 0]]);
  assert.equal(tree?.sources[0]?.sources[0], tree?.sources[1]);
});

Deno.test("lineage() names sources before the window without an event", () => {
  const window = ok(Session.appendAll(
    Session.make({ id: "w", createdAt: 0, isSeeded: false }, {
      baseSeq: s(10),
    }),
    [user("u10"), replacing("r", 10, 10, [10, 3])],
  ));
  const tree = Result.getOrThrow(lineage(window, s(11)));
  assert.deepEqual(tree?.sources.map((n) => [n.seq, n.event?.type]), [
    [10, "user/message"],
    [3, undefined],
  ]);
});

Deno.test("shadowedBy() names the replacement that took a node off", () => {
  const session = twice();
  assert.equal(Result.getOrThrow(shadowedBy(session, s(0))), 7);
  assert.equal(Result.getOrThrow(shadowedBy(session, s(3))), 7);
  assert.equal(Result.getOrThrow(shadowedBy(session, s(4))), 11);
  assert.equal(Result.getOrThrow(shadowedBy(session, s(7))), 11);
  assert.equal(Result.getOrThrow(shadowedBy(session, s(11))), undefined);
  assert.equal(Result.getOrThrow(shadowedBy(session, s(2))), undefined);
  assert.equal(Result.getOrThrow(shadowedBy(session, s(99))), undefined);
  // 2 cites 0 without shadowing it; 3 shadows it.
  const cited = sessionOf([
    user("u0"),
    user("u1"),
    replacing("r", 1, 1, [0, 1]),
    replacing("q", 0, 0, [0]),
  ]);
  assert.equal(Result.getOrThrow(shadowedBy(cited, s(1))), 2);
  assert.equal(Result.getOrThrow(shadowedBy(cited, s(0))), 3);
});

Deno.test("replacementKind() names what each history operation wrote", () => {
  // Given a prune, a system prompt change and a compaction, each made by the
  // library's own operation.
  const newest = (session: Session) =>
    Result.getOrThrow(
      Session.eventAt(session, s(Session.nextSeq(session) - 1)),
    );
  let session = oneCall();
  session = ok(pruneToolResult(session, s(3), []));
  const prune = newest(session);
  session = ok(setSystemPrompt(session, "Be brief."));
  session = ok(setSystemPrompt(session, "Be thorough."));
  const prompt = newest(session);
  // The summary takes u1's place, the last on the surface.
  session = compacted(session, 4, 4, "u1", "c1");
  const last = surfaceNodes(session.surface).at(-1);
  const summary = last === undefined
    ? undefined
    : Result.getOrThrow(Session.eventAt(session, last));
  // Then each is told apart by its type.
  assert.deepEqual(
    [prune, prompt, summary].map((e) => e && [e.type, replacementKind(e)]),
    [
      ["tool/result", "prune"],
      ["system/message", "system-prompt"],
      ["user/message", "compaction"],
    ],
  );
});

Deno.test("surfaceAt() is the surface right after an event", () => {
  const session = twice();
  const nodes = (seq: number) => {
    const surface = Result.getOrThrow(surfaceAt(session, s(seq)));
    return surface && surfaceNodes(surface);
  };
  assert.deepEqual(nodes(0), [0]);
  assert.deepEqual(nodes(4), [0, 1, 3, 4]);
  assert.deepEqual(nodes(7), [7, 4]);
  assert.deepEqual(nodes(12), [11]);
  assert.equal(nodes(13), undefined);
  // The session's own surface is unaffected.
  assert.deepEqual(surfaceNodes(session.surface), [11]);
  assert.deepEqual(
    surfaceNodes(ok(Session.append(session, user("u2"))).surface),
    [11, 13],
  );
});

Deno.test("diffSurfaces() tells added, removed and replaced nodes", async (t) => {
  const session = twice();
  const at = (seq: number) => {
    const surface = Result.getOrThrow(surfaceAt(session, s(seq)));
    assert.ok(surface !== undefined);
    return surface;
  };

  await t.step("one compaction replaces its range by the summary", () => {
    assert.deepEqual(Result.getOrThrow(diffSurfaces(at(4), at(8))), {
      added: [],
      removed: [],
      replaced: [{ by: 7, shadowed: [0, 1, 3] }],
    });
  });

  await t.step("through an intermediate replacement", () => {
    assert.deepEqual(Result.getOrThrow(diffSurfaces(at(4), session.surface)), {
      added: [],
      removed: [],
      replaced: [{ by: 11, shadowed: [0, 1, 3, 4] }],
    });
  });

  await t.step(
    "appended nodes are added, and a replacement shows what it took",
    () => {
      const after = ok(Session.append(session, user("u2")));
      // 3 and 4 came after at(2): 11 stands for the two nodes at(2) had.
      assert.deepEqual(Result.getOrThrow(diffSurfaces(at(2), after.surface)), {
        added: [13],
        removed: [],
        replaced: [{ by: 11, shadowed: [0, 1] }],
      });
      assert.deepEqual(
        Result.getOrThrow(diffSurfaces(session.surface, after.surface)),
        {
          added: [13],
          removed: [],
          replaced: [],
        },
      );
    },
  );

  await t.step("backwards, the summary is removed", () => {
    assert.deepEqual(Result.getOrThrow(diffSurfaces(at(8), at(4))), {
      added: [0, 1, 3],
      removed: [7],
      replaced: [],
    });
  });

  await t.step("a surface and itself", () => {
    assert.deepEqual(
      Result.getOrThrow(diffSurfaces(session.surface, session.surface)),
      {
        added: [],
        removed: [],
        replaced: [],
      },
    );
  });
});

const decoded = (session: Session): SessionEvent[] =>
  Result.getOrThrow(Session.encode(session)).map((e) =>
    Result.getOrThrow(decodeEventResult(e))
  );

Deno.test("provenance laws over generated sessions", () => {
  fc.assert(
    fc.property(historySessionArb, fc.nat(), (session, pick) => {
      const events = decoded(session);
      const length = events.length;
      if (length === 0) return;
      const cut = pick % length;
      // surfaceAt equals replaying the prefix.
      const prefix = Effect.runSync(replay(events.slice(0, cut + 1)));
      const at = Result.getOrThrow(surfaceAt(session, s(cut)));
      assert.ok(at !== undefined);
      assert.deepEqual(surfaceNodes(at), surfaceNodes(prefix));
      const diff = Result.getOrThrow(diffSurfaces(at, session.surface));
      const now = new Set<number>(surfaceNodes(session.surface));
      for (const node of surfaceNodes(at)) {
        const by = Result.getOrThrow(shadowedBy(session, node));
        // A node is still on the surface, or was shadowed by a later event
        // whose replacement the diff reports as standing for it.
        if (now.has(node)) {
          assert.equal(by, undefined);
          continue;
        }
        assert.ok(by !== undefined && by > cut);
        const stands = diff.replaced.find((r) => r.shadowed.includes(node));
        assert.ok(stands !== undefined);
        // ...and the node is in the lineage of that replacement.
        const seen = new Set<number>();
        const walk = (n: LineageNode | undefined): void => {
          if (n === undefined || seen.has(n.seq)) return;
          seen.add(n.seq);
          n.sources.forEach(walk);
        };
        walk(Result.getOrThrow(lineage(session, stands.by)));
        assert.ok(seen.has(node));
      }
      assert.deepEqual(diff.removed, []);
    }),
    { numRuns: 100 },
  );
});

Deno.test("diffSurfaces against a surface holding only its nodes fails with EventsNotHeld where a replacement it needs is not held", () => {
  // c replaces a and b; d replaces c and the user message 2.
  let session = sessionOf([
    drafts.user("a"),
    drafts.user("b"),
    drafts.user("c"),
  ]);
  session = compacted(session, 0, 1, "a and b", "c1");
  const first = surfaceNodes(session.surface)[0] ?? assert.fail();
  session = compacted(session, first, 2, "all", "c2");
  const before = Result.getOrThrow(surfaceAt(session, 2)) ?? assert.fail();
  const whole = Result.getOrThrow(diffSurfaces(before, session.surface));
  assert.deepEqual(whole.replaced.map((r) => r.shadowed), [[0, 1, 2]]);
  assert.deepEqual(whole.removed, []);
  // Restored from a checkpoint at its end, the surface holds its node only:
  // the first summary, which the second replaced, is not held.
  const lean = restored(session.surface, session.surface.nextSeq);
  const missing = diffSurfaces(before, lean);
  assert.ok(Result.isFailure(missing));
  assert.ok(missing.failure instanceof EventsNotHeld);
  assert.equal(missing.failure.fromSeq, first);
  // A diff that needs nothing older works on it.
  const last =
    Result.getOrThrow(surfaceAt(session, session.surface.nextSeq - 1)) ??
      assert.fail();
  assert.deepEqual(Result.getOrThrow(diffSurfaces(last, lean)), {
    added: [],
    removed: [],
    replaced: [],
  });
});
