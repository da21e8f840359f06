/**
 * The view's one-pass analysis agrees with the provenance API, which
 * answers the same questions one node at a time by replaying prefixes.
 */
import {
  deriveMessages,
  diffSurfaces,
  isSurfaceEvent,
  Session,
  SessionSeq,
  shadowedBy,
  surfaceAt,
} from "@palimpsest/session";
import { surfaceEvent, surfaceNodes } from "@palimpsest/session/internal";
import { messageChars } from "@palimpsest/session/internal";
import { estimateTokensByChars } from "@palimpsest/session/ai";
import { Effect, Result } from "effect";
import fc from "fast-check";
import assert from "node:assert/strict";
import { analyse, messageOf } from "../../src/view/analyse.ts";
import { historySessionArb } from "../_helpers/session_gen.ts";
import { branchedSession } from "./_sessions.ts";

const analysisOf = (session: Session, buckets = 50) =>
  analyse(
    Result.getOrThrow(Session.events(session)),
    session.surface.baseSeq,
    buckets,
  );

Deno.test("analyse() finds what each replacement shadowed, in surface order, as diffSurfaces does", () => {
  fc.assert(
    fc.property(historySessionArb, (session) => {
      const analysis = analysisOf(session);
      for (const event of Result.getOrThrow(Session.events(session))) {
        if (!isSurfaceEvent(event) || event.surfaceOp === "append") continue;
        const before = Result.getOrThrow(
          surfaceAt(session, SessionSeq.make(event.seq - 1)),
        );
        const after = Result.getOrThrow(surfaceAt(session, event.seq));
        assert.ok(before !== undefined && after !== undefined);
        const diff = Result.getOrThrow(diffSurfaces(before, after));
        assert.deepEqual(diff.replaced.map((r) => [r.by, r.shadowed]), [[
          event.seq,
          analysis.replacements.get(event.seq)?.shadowed,
        ]]);
      }
    }),
    { numRuns: 60 },
  );
});

Deno.test("analyse() agrees with Result.getOrThrow(shadowedBy()) on every surface event of the log", () => {
  fc.assert(
    fc.property(historySessionArb, (session) => {
      const analysis = analysisOf(session);
      const by = new Map<number, number>();
      for (const r of analysis.replacements.values()) {
        for (const seq of r.shadowed) {
          assert.equal(by.has(seq), false, `#${seq} shadowed twice`);
          by.set(seq, r.seq);
        }
      }
      for (const event of Result.getOrThrow(Session.events(session))) {
        if (!isSurfaceEvent(event)) continue;
        assert.equal(
          by.get(event.seq),
          Result.getOrThrow(shadowedBy(session, event.seq)),
        );
      }
    }),
    { numRuns: 60 },
  );
});

/** The characters of the messages of a session's surface. */
const surfaceChars = (session: Session): number => {
  let chars = 0;
  for (const seq of surfaceNodes(session.surface)) {
    const event = surfaceEvent(session.surface, seq);
    if (event !== undefined) chars += messageChars(messageOf(event));
  }
  return chars;
};

Deno.test("analyse() ends with the characters of the surface's messages", () => {
  fc.assert(
    fc.property(historySessionArb, (session) => {
      const analysis = analysisOf(session);
      const chars = surfaceChars(session);
      assert.equal(analysis.finalChars, chars);
      const last = analysis.series[analysis.series.length - 1];
      assert.equal(last?.last ?? 0, chars);
      assert.ok(analysis.peakChars >= chars);
    }),
    { numRuns: 60 },
  );
});

Deno.test("analyse() ends with the characters of a rewound surface's messages, nodes brought back counted", () => {
  const session = branchedSession();
  const analysis = analysisOf(session);
  const chars = surfaceChars(session);
  assert.equal(analysis.finalChars, chars);
  assert.deepEqual(
    [...analysis.replacements.values()].map((r) => [r.seq, r.kind, r.shadowed]),
    [[8, "rewind", [5, 6]], [10, "rewind", [9]], [11, "rewind", [8, 10]]],
  );
});

Deno.test("analyse() keeps the size series within its bucket count, covering every seq once", () => {
  fc.assert(
    fc.property(
      historySessionArb,
      fc.integer({ min: 1, max: 40 }),
      (session, buckets) => {
        const analysis = analysisOf(session, buckets);
        assert.ok(analysis.series.length <= buckets);
        let next: number = session.surface.baseSeq;
        for (const b of analysis.series) {
          assert.equal(b.firstSeq, next);
          assert.ok(b.min <= b.last && b.last <= b.max);
          next = b.lastSeq + 1;
        }
        assert.equal(
          next,
          analysis.series.length === 0 ? next : session.surface.nextSeq,
        );
      },
    ),
    { numRuns: 60 },
  );
});

Deno.test("analyse() lists shadowed nodes in surface order, whatever order they are cited in", () => {
  const user = (id: string) => ({
    type: "user/message" as const,
    surfaceOp: "append" as const,
    data: {
      id,
      role: "user" as const,
      content: [{ type: "text" as const, text: id }],
      source: { kind: "user" },
    },
  });
  const replace = (
    id: string,
    start: number,
    end: number,
    cites: number[],
  ) => ({
    type: "user/message" as const,
    surfaceOp: {
      op: "replace" as const,
      startSeq: SessionSeq.make(start),
      endSeq: SessionSeq.make(end),
    },
    sourceEventSeqs: cites.map((n) => SessionSeq.make(n)),
    data: {
      id,
      role: "user" as const,
      content: [{ type: "text" as const, text: id }],
      source: { kind: "plugin", plugin: "test" },
    },
  });
  // Given a, b, c; when a..b becomes s (#3), then s..c becomes t (#4),
  // citing c before s.
  const session = Effect.runSync(Session.appendAll(
    Session.make({ id: "order", createdAt: 0, isSeeded: false }),
    [
      user("a"),
      user("b"),
      user("c"),
      replace("s", 0, 1, [1, 0]),
      replace("t", 3, 2, [2, 3]),
    ],
  ));
  const analysis = analysisOf(session);
  // Then each replacement lists what it shadowed as the model saw it.
  assert.deepEqual(analysis.replacements.get(3)?.shadowed, [0, 1]);
  assert.deepEqual(analysis.replacements.get(4)?.shadowed, [3, 2]);
});

Deno.test("analyse() ends with the token estimate of the derived messages, message by message", () => {
  fc.assert(
    fc.property(historySessionArb, (session) => {
      const analysis = analysisOf(session);
      const expected = deriveMessages(session.surface).reduce(
        (n, m) => n + estimateTokensByChars([m]),
        0,
      );
      assert.equal(analysis.finalTokens, expected);
      assert.ok(analysis.peakTokens >= expected);
    }),
    { numRuns: 60 },
  );
});
