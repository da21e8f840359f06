import assert from "node:assert/strict";
import { Effect, Result } from "effect";
import { Session, SessionSeq } from "@palimpsest/session";
import { decoded, replace, turnStart, user } from "../_helpers/build.ts";

const header = { id: "s", createdAt: 0, isSeeded: false };

/** A window from seq 10: users, a turn start, and a replace that drops two nodes. */
const session = () => {
  const base = SessionSeq.make(10);
  const events = [
    decoded(user(10)),
    decoded(turnStart(11)),
    decoded(user(12)),
    decoded(user(13)),
    decoded(
      user(14, { op: replace(12, 13), sources: [12, 13] }),
    ),
    decoded(user(15)),
  ];
  const made = Effect.runSync(
    Session.fromEvents(header, events, { baseSeq: base }),
  );
  return made;
};

Deno.test("Session.events from a seq is exactly the log from that seq", () => {
  const s = session();
  const seqs = (from?: number) =>
    Result.getOrThrow(
      Session.events(s, from === undefined ? undefined : SessionSeq.make(from)),
    )
      .map((e) => e.seq);
  assert.deepEqual(seqs(), [10, 11, 12, 13, 14, 15]);
  assert.deepEqual(seqs(0), [10, 11, 12, 13, 14, 15]);
  assert.deepEqual(seqs(10), [10, 11, 12, 13, 14, 15]);
  assert.deepEqual(seqs(13), [13, 14, 15]);
  assert.deepEqual(seqs(15), [15]);
  assert.deepEqual(seqs(16), []);
  assert.deepEqual(seqs(1_000), []);
  // Each call returns a fresh array the caller may keep.
  assert.notEqual(
    Result.getOrThrow(Session.events(s)),
    Result.getOrThrow(Session.events(s)),
  );
});
