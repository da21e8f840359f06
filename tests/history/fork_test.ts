import { deriveMessages, fork, Session, surfaceAt } from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import { Effect, Result } from "effect";
import { TestClock } from "effect/testing";
import fc from "fast-check";
import assert from "node:assert/strict";
import { historySessionArb } from "../_helpers/session_gen.ts";
import { thenFails } from "../_helpers/then.ts";
import {
  compacted,
  drafts,
  fails,
  ok,
  s,
  sessionOf,
} from "../_helpers/build.ts";

const { user } = drafts;

const atTime = <A, E>(
  time: number,
  effect: Effect.Effect<A, E>,
): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(time);
      return yield* effect;
    }).pipe(Effect.provide(TestClock.layer())),
  );

const parent = (): Session =>
  compacted(
    sessionOf([user("a"), user("b"), user("c")], "parent"),
    0,
    1,
    "a and b",
    "c1",
  );

Deno.test("fork() copies the whole log and ends the seed", async (t) => {
  const p = parent();
  const child = await atTime(5_000, fork(p));

  await t.step("the header names the parent", () => {
    assert.deepEqual(child.header, {
      id: "parent-fork-6-5000",
      createdAt: 5_000,
      isSeeded: true,
      parentSession: "parent",
    });
  });

  await t.step("the log is the parent's then session/end-seed", () => {
    const encoded = Result.getOrThrow(Session.encode(child));
    assert.deepEqual(
      encoded.slice(0, -1),
      Result.getOrThrow(Session.encode(p)),
    );
    const last = Result.getOrThrow(Session.eventAt(child, s(7)));
    assert.equal(last?.type, "session/end-seed");
    assert.deepEqual(last?.data, { inherited: true });
    assert.equal(last?.time, 5_000);
  });

  await t.step("the surface is the parent's", () => {
    assert.deepEqual(surfaceNodes(child.surface), surfaceNodes(p.surface));
    assert.deepEqual(
      deriveMessages(child.surface),
      deriveMessages(p.surface),
    );
  });
});

Deno.test("fork() at a seq takes the surface at the cut", () => {
  const p = parent();
  const child = ok(fork(p, s(2), { id: "child", meta: { why: "retry" } }));
  assert.equal(child.header.id, "child");
  assert.deepEqual(child.header.meta, { why: "retry" });
  assert.deepEqual(surfaceNodes(child.surface), [0, 1, 2]);
  assert.deepEqual(deriveMessages(child.surface).map((m) => m.id), [
    "a",
    "b",
    "c",
  ]);
  assert.equal(Session.nextSeq(child), 4);
  // The parent is untouched and the child grows on its own.
  const grown = ok(Session.append(child, user("d")));
  assert.deepEqual(surfaceNodes(grown.surface), [0, 1, 2, 4]);
  assert.deepEqual(surfaceNodes(p.surface), [5, 2]);
});

Deno.test("fork() refuses a cut outside the log", () => {
  const p = parent();
  const error = fails(fork(p, s(7)));
  thenFails(error, "ForkPointOutOfRange", { atSeq: 7, baseSeq: 0, nextSeq: 7 });
  const window = ok(Session.appendAll(
    Session.make({ id: "w", createdAt: 0, isSeeded: false }, {
      baseSeq: s(10),
    }),
    [user("a")],
  ));
  const below = fails(fork(window, s(3)));
  thenFails(below, "ForkPointOutOfRange");
  const child = ok(fork(window, s(10)));
  assert.equal(child.surface.baseSeq, 10);
  assert.deepEqual(surfaceNodes(child.surface), [10]);
});

Deno.test("fork() of an empty session holds only the end of the seed", async () => {
  const empty = Session.make({ id: "e", createdAt: 0, isSeeded: false });
  const child = await atTime(1, fork(empty));
  assert.equal(child.header.id, "e-fork-none-1");
  assert.deepEqual(
    Result.getOrThrow(Session.events(child)).map((e) => e.type),
    [
      "session/end-seed",
    ],
  );
});

Deno.test("a child's surface is the parent's surface at the cut", () => {
  fc.assert(
    fc.property(historySessionArb, fc.nat(), (p, cut) => {
      const length = Session.nextSeq(p);
      if (length === 0) return;
      const atSeq = s(cut % length);
      const child = ok(fork(p, atSeq));
      const expected = Result.getOrThrow(surfaceAt(p, atSeq));
      assert.ok(expected !== undefined);
      assert.deepEqual(surfaceNodes(child.surface), surfaceNodes(expected));
      assert.deepEqual(deriveMessages(child.surface), deriveMessages(expected));
      assert.deepEqual(
        Result.getOrThrow(Session.encode(child)).slice(0, -1),
        Result.getOrThrow(Session.encode(p)).slice(0, atSeq + 1),
      );
    }),
    { numRuns: 100 },
  );
});
