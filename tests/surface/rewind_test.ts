/**
 * The rewind surface operation: given / when / then for the fold, one case
 * per rule, and the surfaces it restores across compactions, prunes,
 * system-prompt changes and branches.
 */
import assert from "node:assert/strict";
import { Result } from "effect";
import { deriveMessages } from "@palimpsest/session";
import { applyEventResult, surfaceNodes } from "@palimpsest/session/internal";
import { decodeEventResult } from "@palimpsest/session/schema";
import { fold, given } from "../_helpers/decider.ts";
import {
  assistant,
  logOnly,
  type Raw,
  replace,
  rewindTo,
  system,
  toolResult,
  toolResultData,
  user,
} from "../_helpers/build.ts";

const turn = (type: string, seq: number, n = 0): Raw =>
  logOnly(
    type,
    seq,
    type.startsWith("turn/end")
      ? { turn: n, reason: { kind: "completed" } }
      : { turn: n },
  );
const step = (type: string, seq: number): Raw =>
  logOnly(type, seq, { turn: 0, step: 0 });

// 0 system, 1 u, 2 turn/start, 3 a(call c3), 4 result, 5 a, 6 turn/end,
// 7 u, 8 turn/start, 9 a, 10 turn/end
const base: Raw[] = [
  system(0),
  user(1),
  turn("turn/start", 2),
  assistant(3, { callId: "c3" }),
  toolResult(4, { callId: "c3" }),
  assistant(5),
  turn("turn/end", 6),
  user(7),
  turn("turn/start", 8, 1),
  assistant(9),
  turn("turn/end", 10, 1),
];

Deno.test("a rewind restores the surface right after its point and appends its event", () => {
  given(base)
    .when(user(11, { op: rewindTo(6), sources: [7, 9] }))
    .then([0, 1, 3, 4, 5, 11]);
});

Deno.test("a rewind that takes nothing off cites nothing", () => {
  given(base).when(user(11, { op: rewindTo(10) })).then([
    0,
    1,
    3,
    4,
    5,
    7,
    9,
    11,
  ]);
});

Deno.test("a rewind brings back the nodes a compaction shadowed", () => {
  const history = [
    ...base,
    user(11, { op: replace(1, 5), sources: [1, 3, 4, 5] }),
  ];
  given(history)
    .when(user(12, { op: rewindTo(6), sources: [11, 7, 9] }))
    .then([0, 1, 3, 4, 5, 12]);
});

Deno.test("a rewind brings back a pruned result and an older system prompt", () => {
  const history = [
    ...base,
    toolResult(11, {
      callId: "c3",
      op: replace(4, 4),
      sources: [4],
      id: "r4",
      turn: 0,
      content: [{ type: "text", text: "pruned" }],
    }),
    system(12, { op: replace(0, 0), sources: [0], text: "new prompt" }),
  ];
  const surface = given(history)
    .when(user(13, { op: rewindTo(10), sources: [12, 11] }))
    .then([0, 1, 3, 4, 5, 7, 9, 13]);
  assert.equal(deriveMessages(surface)[0]?.id, "sys0");
});

Deno.test("a rewind goes back to the tip of a branch it left", () => {
  const history = [
    ...base,
    user(11, { op: rewindTo(6), sources: [7, 9] }),
    assistant(12),
  ];
  // Back to the first branch's tip (10): the nodes 7 and 9 return.
  given(history)
    .when(user(13, { op: rewindTo(10), sources: [11, 12] }))
    .then([0, 1, 3, 4, 5, 7, 9, 13]);
  // A point inside the left branch.
  given(history)
    .when(user(13, { op: rewindTo(7), sources: [11, 12] }))
    .then([0, 1, 3, 4, 5, 7, 13]);
});

Deno.test("a rewind into a compaction of a branch expands it there", () => {
  const history = [
    ...base,
    user(11, { op: replace(7, 9), sources: [7, 9] }),
    user(12, { op: rewindTo(6), sources: [11] }),
  ];
  given(history)
    .when(user(13, { op: rewindTo(11), sources: [12] }))
    .then([0, 1, 3, 4, 5, 11, 13]);
  given(history)
    .when(user(13, { op: rewindTo(7), sources: [12] }))
    .then([0, 1, 3, 4, 5, 7, 13]);
});

Deno.test("RewindPointInsideWork: a turn, a step or a compaction open at the point", () => {
  given(base).when(user(11, { op: rewindTo(8), sources: [7, 9] }))
    .thenFails("RewindPointInsideWork", {
      seq: 11,
      toSeq: 8,
      work: "turn",
      openedAt: 8,
    });
  given([user(0), step("step/start", 1), assistant(2), step("step/end", 3)])
    .when(user(4, { op: rewindTo(2) }))
    .thenFails("RewindPointInsideWork", { work: "step", openedAt: 1 });
  given([
    user(0),
    logOnly("compaction/start", 1, { compactionId: "c", turn: null }),
    user(2),
  ]).when(user(3, { op: rewindTo(1) }))
    .thenFails("RewindPointInsideWork", { work: "compaction", openedAt: 1 });
});

Deno.test("RewindPointInsideWork: what a rewind's point left open is closed after it, and an older version keeps its own", () => {
  // A step opened at 1 and never closed on the branch a rewind left: the
  // points after the rewind have nothing open.
  given([
    user(0),
    step("step/start", 1),
    assistant(2),
    user(3, { op: rewindTo(0), sources: [2] }),
    user(4),
  ]).when(user(5, { op: rewindTo(4) })).then([0, 3, 4, 5]);
  // A turn holding a closed step is still open after the step ends.
  given([
    user(0),
    turn("turn/start", 1),
    step("step/start", 2),
    step("step/end", 3),
    user(4),
  ]).when(user(5, { op: rewindTo(4) }))
    .thenFails("RewindPointInsideWork", { work: "turn", openedAt: 1 });
  // The version before a compaction ends sees it open; the one after not.
  const open = fold([
    user(0),
    logOnly("compaction/start", 1, { compactionId: "c", turn: null }),
    user(2),
  ]);
  const closed = fold(
    [logOnly("compaction/end", 3, { compactionId: "c" })],
    open,
  );
  given([], closed).when(user(4, { op: rewindTo(3) })).then([0, 2, 4]);
  given([], open).when(user(3, { op: rewindTo(2) }))
    .thenFails("RewindPointInsideWork", { work: "compaction", openedAt: 1 });
});

Deno.test("RewindBreaksToolPair: a call whose result the point leaves out", () => {
  given([
    user(0),
    assistant(1, { callId: "c1" }),
    toolResult(2, { callId: "c1" }),
  ])
    .when(user(3, { op: rewindTo(1), sources: [2] }))
    .thenFails("RewindBreaksToolPair", {
      seq: 3,
      toSeq: 1,
      node: 1,
      callId: "c1",
    });
});

Deno.test("RewindDropsSystemHead: a point before the system prompt", () => {
  given([user(0), user(1), system(2, { op: "prepend" })])
    .when(user(3, { op: rewindTo(1), sources: [2] }))
    .thenFails("RewindDropsSystemHead", { seq: 3, toSeq: 1, head: 2 });
});

Deno.test("RewindSourcesMismatch: the event cites exactly what it takes off", () => {
  given(base).when(user(11, { op: rewindTo(6), sources: [7] }))
    .thenFails("RewindSourcesMismatch", {
      seq: 11,
      toSeq: 6,
      missing: [9],
      extra: [],
    });
  given(base).when(user(11, { op: rewindTo(6), sources: [7, 9, 5] }))
    .thenFails("RewindSourcesMismatch", { missing: [], extra: [5] });
});

Deno.test("decoding: only a user message carries a rewind, to an earlier point", () => {
  const bad = decodeEventResult(assistant(3, { op: rewindTo(1) }));
  assert.equal(
    Result.isFailure(bad) && bad.failure._tag,
    "RewindNotUserMessage",
  );
  const late = decodeEventResult(user(3, { op: rewindTo(3) }));
  assert.equal(
    Result.isFailure(late) && late.failure._tag,
    "RewindPointNotEarlier",
  );
  const extraKey = decodeEventResult({
    ...user(3),
    surfaceOp: { op: "rewind", toSeq: 1, x: 1 },
  });
  assert.equal(
    Result.isFailure(extraKey) && extraKey.failure._tag,
    "InvalidSurfaceOp",
  );
});

Deno.test("derived messages after a rewind are those of the restored surface", () => {
  const surface = fold([
    ...base,
    user(11, { op: rewindTo(6), sources: [7, 9] }),
  ]);
  // Derive before and after, so a basis exists.
  const before = fold(base);
  deriveMessages(before);
  const after = applyEventResult(
    before,
    Result.getOrThrow(
      decodeEventResult(user(11, { op: rewindTo(6), sources: [7, 9] })),
    ),
  );
  assert.ok(Result.isSuccess(after));
  assert.deepEqual(
    deriveMessages(after.success).map((m) => m.id),
    deriveMessages(surface).map((m) => m.id),
  );
  assert.deepEqual(surfaceNodes(surface), [0, 1, 3, 4, 5, 11]);
  void toolResultData;
});
