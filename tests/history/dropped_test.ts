/**
 * `compactions` and `droppedBy`: given a log with a prune, two compactions
 * (the second over the first's summary) and a rewind that undoes the
 * second, when asked what each dropped, then each lists the nodes it took
 * off, where it is in the log, what replaced them and what took that off.
 */
import assert from "node:assert/strict";
import { Effect, Result } from "effect";
import {
  compact,
  type CompactionDrop,
  CompactionNotFound,
  compactions,
  Draft,
  droppedBy,
  Session,
} from "@palimpsest/session";
import { EventsNotHeld } from "@palimpsest/session/schema";
import { droppedLog, LISTING } from "../_helpers/dropped_log.ts";
import { restored } from "../_helpers/checkpoints.ts";

const drop = (session: Session, which: string | number): CompactionDrop =>
  Result.getOrThrow(droppedBy(session, which));

const seqsOf = (d: CompactionDrop) => d.dropped.map((n) => n.seq);

Deno.test("given two compactions and a prune, compactions lists each with its events and branch", () => {
  const list = Result.getOrThrow(compactions(droppedLog()));
  assert.deepEqual(
    list.map((c) => [
      c.kind,
      c.compactionId,
      c.startSeq,
      c.recordSeq,
      c.replacementSeq,
      c.endSeq,
      c.branch?.fromSeq,
      c.branch?.tipSeq,
      c.branch?.current,
      c.onCurrentPath,
    ]),
    [
      ["prune", undefined, undefined, 6, 7, undefined, 0, 16, false, true],
      ["compaction", "c1", 8, 9, 10, 11, 0, 16, false, true],
      ["compaction", "c2", 13, 14, 15, 16, 0, 16, false, false],
    ],
  );
});

Deno.test("when asked by id, the first compaction gives its nodes in surface order, its ranges and its summary", () => {
  const d = drop(droppedLog(), "c1");
  assert.deepEqual(seqsOf(d), [0, 1, 7]);
  assert.deepEqual(
    d.dropped.map((n) => [n.type, n.role, n.text, n.toolCallId]),
    [
      ["user/message", "user", "list the files", undefined],
      ["assistant/message", "assistant", "let me look", undefined],
      ["tool/result", "tool", "[pruned]", "c1"],
    ],
  );
  assert.deepEqual(d.dropped[1]?.toolCalls, [{ id: "c1", name: "ls" }]);
  assert.deepEqual(d.dropped[2]?.replacement, {
    kind: "prune",
    compactionId: undefined,
  });
  assert.deepEqual(d.ranges, [{ first: 0, last: 1 }, { first: 7, last: 7 }]);
  assert.deepEqual(d.surfaceRange, { startSeq: 0, endSeq: 7 });
  assert.equal(d.replacementSeq, 10);
  assert.equal(d.replacementChars, "listed files".length);
  assert.equal(d.droppedChars, d.dropped.reduce((n, x) => n + x.chars, 0));
  assert.ok(d.droppedTokens > 0);
  // c2 took the summary off; the rewind to before c2 brought it back.
  assert.deepEqual(d.takenOffBy, { seq: 15, kind: "compaction" });
  assert.equal(d.onSurface, true);
});

Deno.test("when asked for the nested compaction, it lists the first summary as a compaction it dropped", () => {
  const d = drop(droppedLog(), "c2");
  assert.deepEqual(seqsOf(d), [10, 4]);
  assert.deepEqual(d.dropped[0]?.replacement, {
    kind: "compaction",
    compactionId: "c1",
  });
  assert.equal(d.dropped[1]?.replacement, undefined);
  assert.deepEqual(d.ranges, [{ first: 4, last: 4 }, { first: 10, last: 10 }]);
});

Deno.test("given a rewind that undoes a compaction, the compaction says which rewind and that it is off the current branch", () => {
  const d = drop(droppedLog(), "c2");
  assert.deepEqual(d.takenOffBy, { seq: 17, kind: "rewind" });
  assert.equal(d.onSurface, false);
  assert.equal(d.branch?.current, false);
  assert.equal(d.onCurrentPath, false);
  const before = drop(droppedLog({ rewound: false }), "c2");
  assert.equal(before.onCurrentPath, true);
  assert.equal(before.takenOffBy, undefined);
  assert.equal(before.onSurface, true);
  assert.equal(before.branch?.current, true);
});

Deno.test("a prune is found by the seq of its record or of its result, and gives the result it replaced", () => {
  const session = droppedLog();
  const byRecord = drop(session, 6);
  assert.deepEqual(byRecord, drop(session, 7));
  assert.equal(byRecord.kind, "prune");
  assert.deepEqual(seqsOf(byRecord), [3]);
  assert.equal(byRecord.dropped[0]?.toolCallId, "c1");
  assert.equal(byRecord.dropped[0]?.chars, LISTING.length);
  assert.equal(byRecord.dropped[0]?.text?.length, 120);
  assert.equal(byRecord.replacementChars, "[pruned]".length);
  assert.deepEqual(byRecord.takenOffBy, { seq: 10, kind: "compaction" });
});

Deno.test("any event of a compaction names it", () => {
  const session = droppedLog();
  for (const seq of [13, 14, 15, 16]) {
    assert.equal(drop(session, seq).compactionId, "c2");
  }
});

Deno.test("an unknown id or seq fails CompactionNotFound with the known ones", () => {
  const session = droppedLog();
  for (const which of ["nope", 0]) {
    const result = droppedBy(session, which);
    assert.ok(Result.isFailure(result));
    assert.ok(result.failure instanceof CompactionNotFound);
    assert.deepEqual(
      [result.failure.given, result.failure.compactionIds, result.failure.seqs],
      [String(which), ["c1", "c2"], [7, 10, 15]],
    );
  }
  const none = droppedBy(
    Session.make({ id: "e", createdAt: 0, isSeeded: false }),
    "c1",
  );
  assert.ok(Result.isFailure(none));
  assert.equal(none.failure._tag, "CompactionNotFound");
  assert.match(none.failure.message, /it has no compactions/);
});

Deno.test("a number that is not a seq fails InvalidSessionSeq", () => {
  const result = droppedBy(droppedLog(), -1);
  assert.ok(Result.isFailure(result));
  assert.equal(result.failure._tag, "InvalidSessionSeq");
});

Deno.test("a compaction of a single node drops that node, one range", () => {
  const session = Effect.runSync(Effect.gen(function* () {
    const s = yield* Session.append(
      Session.make({ id: "s", createdAt: 0, isSeeded: false }),
      Draft.user("only"),
    );
    return yield* compact(s, {
      startSeq: 0,
      endSeq: 0,
      summary: "only",
      compactionId: "c",
    });
  }));
  const d = drop(session, "c");
  assert.deepEqual(seqsOf(d), [0]);
  assert.deepEqual(d.ranges, [{ first: 0, last: 0 }]);
});

Deno.test("a session that holds only its surface fails EventsNotHeld", () => {
  const session = droppedLog();
  const lean: Session = {
    ...session,
    surface: restored(session.surface, session.surface.nextSeq),
  };
  const failureOf = (result: Result.Result<unknown, unknown>): unknown =>
    Result.isFailure(result) ? result.failure : undefined;
  assert.ok(failureOf(compactions(lean)) instanceof EventsNotHeld);
  assert.ok(failureOf(droppedBy(lean, "c1")) instanceof EventsNotHeld);
});
