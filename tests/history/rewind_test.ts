/**
 * `rewind` and `branches`: the operation as a caller uses it, its
 * expectation, the law "rewind then the same appends derives what fork at
 * the point then the same appends derives", deterministic replay, and a
 * rewind through the JSONL and memory stores (with a checkpoint after it).
 */
import assert from "node:assert/strict";
import { Effect, Result } from "effect";
import {
  branches,
  deriveMessages,
  Draft,
  fork,
  layerMemoryStore,
  replay,
  rewind,
  Session,
  SessionSeq,
} from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import { decodeEventResult } from "@palimpsest/session/schema";
import { genValidLog } from "../_helpers/fuzz_logs.ts";
import { fuzz } from "../_helpers/fuzz.ts";
import {
  checkerState,
  checkRelational,
  judgeRewind,
} from "../_helpers/reference_checker.ts";
import { fails, ok, sessionOf } from "../_helpers/build.ts";
import { tempDir, useStore, withStore } from "../_helpers/store.ts";
import { storeTwoTurns, turnDrafts } from "../_helpers/rewind_stored.ts";

const turn = turnDrafts;

// Turns 0, 1 and 2: seqs 0-3, 4-7, 8-11.
const threeTurns = () =>
  sessionOf([
    ...turn(0, "hi", "hello"),
    ...turn(1, "more", "sure"),
    ...turn(2, "last", "ok"),
  ]);

Deno.test("rewind takes the surface back and goes on from the new message", () => {
  const session = ok(
    rewind(threeTurns(), { to: 7, event: Draft.user("edited", { id: "e" }) }),
  );
  assert.deepEqual(deriveMessages(session.surface).map((m) => m.id), [
    "u0",
    "a0",
    "u1",
    "a1",
    "e",
  ]);
  const event = Result.getOrThrow(
    Session.eventAt(session, SessionSeq.make(12)),
  );
  assert.deepEqual(event?.surfaceOp, { op: "rewind", toSeq: 7 });
  assert.deepEqual(event?.type === "user/message" && event.sourceEventSeqs, [
    9,
    10,
  ]);
});

Deno.test("rewind refuses what the caller did not expect it to drop", () => {
  const error = fails(rewind(threeTurns(), {
    to: 3,
    event: Draft.user("edited"),
    expect: { dropsTurnsFrom: 2 },
  }));
  assert.equal(error._tag, "RewindDropsUnexpectedTurns");
  assert.deepEqual(
    error._tag === "RewindDropsUnexpectedTurns" &&
      [error.keptThrough, error.droppedFrom],
    [0, 1],
  );
  ok(
    rewind(threeTurns(), {
      to: 3,
      event: Draft.user("e"),
      expect: { dropsTurnsFrom: 1 },
    }),
  );
  ok(
    rewind(threeTurns(), {
      to: 11,
      event: Draft.user("e"),
      expect: { dropsTurnsFrom: 3 },
    }),
  );
});

Deno.test("rewind refuses a point inside a turn before appending", () => {
  const session = threeTurns();
  const error = fails(rewind(session, { to: 5, event: Draft.user("e") }));
  assert.equal(error._tag, "RewindPointInsideWork");
  assert.equal(session.surface.nextSeq, 12);
});

Deno.test("branches lists each branch, and a branch tip is a rewind away", () => {
  const left = ok(
    rewind(threeTurns(), { to: 3, event: Draft.user("other", { id: "o" }) }),
  );
  const list = ok(branches(left));
  assert.deepEqual(
    list.map((
      b,
    ) => [
      b.fromSeq,
      b.leavesAt,
      b.tipSeq,
      b.turns,
      b.firstUserText,
      b.current,
    ]),
    [[0, undefined, 11, [0, 1, 2], "hi", false], [
      12,
      3,
      12,
      [],
      "other",
      true,
    ]],
  );
  const back = ok(
    rewind(left, { to: 11, event: Draft.user("again", { id: "g" }) }),
  );
  assert.deepEqual(
    deriveMessages(back.surface).map((m) => m.id),
    ["u0", "a0", "u1", "a1", "u2", "a2", "g"],
  );
});

/** The events of a session as decoded values, replayed from nothing. */
const replayed = (session: Session) =>
  Effect.runSync(replay(Result.getOrThrow(Session.events(session))));

Deno.test("property: rewind then the same appends derives what fork at the point then the same appends derives", () => {
  fuzz("history/rewind-vs-fork", 40, (rng) => {
    const log = genValidLog(rng, rng.int(20, 80));
    const events = log.events.map((e) =>
      Result.getOrThrow(decodeEventResult(e))
    );
    const session = ok(
      Session.appendEvents(
        Session.make({ id: "p", createdAt: 0, isSeeded: false }),
        events,
      ),
    );
    const state = checkerState(0);
    for (const e of log.events) checkRelational(state, e);
    const points: number[] = [];
    for (let x = 0; x < state.next; x++) {
      if (!("tag" in judgeRewind(state, state.next, x, undefined))) {
        points.push(x);
      }
    }
    if (points.length === 0) return;
    const to = rng.pick(points);
    const more = [
      Draft.user("edited", { id: "edited" }),
      Draft.user("then", { id: "then" }),
    ];
    const [first, ...rest] = more;
    if (first === undefined || first.type !== "user/message") return;
    const rewound = ok(
      Effect.flatMap(
        rewind(session, { to, event: first }),
        (s) => Session.appendAll(s, rest),
      ),
    );
    const forked = ok(
      Effect.flatMap(fork(session, to), (s) => Session.appendAll(s, more)),
    );
    assert.deepEqual(
      deriveMessages(rewound.surface),
      deriveMessages(forked.surface),
    );
    // Replay is deterministic: the log folds to the same surface again.
    assert.deepEqual(
      surfaceNodes(replayed(rewound)),
      surfaceNodes(rewound.surface),
    );
  });
});

/** Session "r" created in the store of the context, with turns 0 and 1. */
const twoTurnsStored = Effect.map(
  storeTwoTurns("r"),
  ({ store, writer }) => ({ store, handle: writer }),
);

Deno.test("a rewind through the JSONL store reads back, and opens from a checkpoint alike", async () => {
  const root = tempDir();
  const nodes = await withStore(
    root,
    Effect.gen(function* () {
      const { store, handle } = yield* twoTurnsStored;
      const { session } = yield* store.update(
        handle,
        (s) => rewind(s, { to: 3, event: Draft.user("edited") }),
      );
      yield* store.append(handle, turn(2, "after", "fine"));
      yield* store.checkpoint(handle);
      return surfaceNodes(session.surface);
    }),
  );
  assert.deepEqual(nodes, [1, 2, 8]);
  await useStore(root, (store) =>
    Effect.gen(function* () {
      const reader = yield* store.open("r", { mode: "read" });
      const whole = yield* store.open("r", { mode: "read", wholeLog: true });
      assert.deepEqual(surfaceNodes(reader.session.surface), [1, 2, 8, 10, 11]);
      assert.deepEqual(
        surfaceNodes(whole.session.surface),
        surfaceNodes(reader.session.surface),
      );
      assert.deepEqual(
        deriveMessages(whole.session.surface),
        deriveMessages(reader.session.surface),
      );
    }));
});

Deno.test("a rewind on the memory store gives the session the JSONL store gives", async () => {
  const program = Effect.gen(function* () {
    const { store, handle } = yield* twoTurnsStored;
    yield* store.update(
      handle,
      (s) => rewind(s, { to: 3, event: Draft.user("edited", { id: "e" }) }),
    );
    const reader = yield* store.open("r", { mode: "read" });
    // The same events but for the clock's times.
    return Result.getOrThrow(Session.encode(reader.session)).map((e) =>
      JSON.stringify(e).replace(/"time":\d+/, "")
    );
  });
  const memory = await Effect.runPromise(
    Effect.scoped(program).pipe(Effect.provide(layerMemoryStore())),
  );
  const jsonl = await withStore(tempDir(), program);
  assert.deepEqual(memory, jsonl);
});
