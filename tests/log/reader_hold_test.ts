/**
 * A read that holds only the surface (`holdLogUpTo`): for generated logs
 * and sessions and any bound, the session it gives folds as a read that
 * holds every event does (the surface, the messages, the held events, open
 * work, turn marks, repair closers, further replaces), holds every event
 * when the log is within the bound, and otherwise holds from the start of
 * the oldest work still open; its `events` are those it holds.
 *
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { Effect, Result } from "effect";
import { openWork, Session } from "@palimpsest/session";
import {
  encodeEventLine,
  encodeHeaderLine,
  readSessionBytes,
} from "@palimpsest/session/jsonl";
import { logArb } from "../_helpers/log_gen.ts";
import { historySessionArb } from "../_helpers/session_gen.ts";
import { decoded } from "../_helpers/build.ts";
import { assertSameFold, lines } from "../_helpers/checkpoints.ts";

const header = { id: "hold", createdAt: 0, isSeeded: false } as const;

/** The log of `session` as one file's bytes. */
const bytesOf = (session: Session): Uint8Array =>
  new TextEncoder().encode(
    encodeHeaderLine(session.header) +
      Result.getOrThrow(Session.events(session)).map((e) => encodeEventLine(e))
        .join(""),
  );

/** Reads `session`'s bytes holding every event, and holding up to `bound`. */
const bothReads = (session: Session, bound: number) => {
  const bytes = bytesOf(session);
  // Small chunks, so the bound is crossed inside a read, not at its end.
  const chunks = Array.from(
    { length: Math.ceil(bytes.length / 257) },
    (_, i) => bytes.subarray(i * 257, (i + 1) * 257),
  );
  const whole = Effect.runSync(readSessionBytes(chunks));
  const lean = Effect.runSync(readSessionBytes(chunks, { holdLogUpTo: bound }));
  return { whole, lean };
};

const check = (session: Session, bound: number, probes: number[]) => {
  const { whole, lean } = bothReads(session, bound);
  const n = Result.getOrThrow(Session.events(session)).length;
  assertSameFold(lean.session, whole.session, probes);
  assert.equal(lean.report.lines, whole.report.lines);
  assert.equal(lean.report.bytes, whole.report.bytes);
  const heldFrom = Session.heldFrom(lean.session);
  if (n <= bound) {
    assert.equal(heldFrom, 0);
    assert.deepEqual(lines(lean.events), lines(whole.events));
  } else {
    // Held from the start of the oldest open work (or nothing open).
    const open = openWork(whole.events);
    for (const t of open.turns) assert.ok(heldFrom <= t.startSeq);
    for (const c of open.compactions) assert.ok(heldFrom <= c.startSeq);
    assert.deepEqual(lines(lean.events), lines(whole.events.slice(heldFrom)));
  }
};

Deno.test("a read holding only the surface folds as a read holding every event, for generated logs", () => {
  fc.assert(
    fc.property(
      logArb(60),
      fc.nat({ max: 70 }),
      fc.array(fc.nat(), { maxLength: 8 }),
      (log, bound, probes) => {
        if (log.base !== 0 || log.lines.length === 0) return;
        const session = Effect.runSync(
          Session.fromEvents(header, log.lines.map((raw) => decoded(raw))),
        );
        check(session, bound, probes);
      },
    ),
    { numRuns: 150 },
  );
});

Deno.test("a read holding only the surface keeps open turns and compactions whole, for generated sessions", () => {
  fc.assert(
    fc.property(
      historySessionArb,
      fc.nat({ max: 60 }),
      fc.array(fc.nat(), { maxLength: 8 }),
      (session, bound, probes) => {
        if (session.surface.nextSeq === 0) return;
        check(session, bound, probes);
      },
    ),
    { numRuns: 100 },
  );
});

Deno.test("a log cut in an open turn is held from the turn's start", () => {
  const raw = [
    { type: "turn/start", data: { turn: 0 } },
    { type: "turn/end", data: { turn: 0, reason: { kind: "completed" } } },
    { type: "turn/start", data: { turn: 1 } },
    { type: "step/start", data: { turn: 1, step: 0 } },
    { type: "compaction/start", data: { compactionId: "c", turn: 1 } },
    { type: "step/end", data: { turn: 1, step: 0 } },
  ].map((e, seq) => decoded({ ...e, seq, time: seq }));
  const session = Effect.runSync(Session.fromEvents(header, raw));
  const { lean } = bothReads(session, 1);
  assert.equal(Session.heldFrom(lean.session), 2);
  assert.deepEqual(lines(lean.events), lines(raw.slice(2)));
  const older = Session.events(lean.session);
  assert.ok(Result.isFailure(older));
  assert.equal(older.failure._tag, "EventsNotHeld");
  const closed = Effect.runSync(Session.fromEvents(header, raw.slice(0, 2)));
  const quiet = bothReads(closed, 1).lean;
  assert.equal(Session.heldFrom(quiet.session), 2);
  assert.deepEqual(quiet.events, []);
});
