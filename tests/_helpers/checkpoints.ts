/**
 * What "the same session" means for checkpoint tests: a session restored
 * from a checkpoint (and folded on) against a whole replay of the same log.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  deriveMessages,
  openWork,
  Session,
  type SessionEvent,
  SessionSeq,
  type Surface,
} from "@palimpsest/session";
import {
  interruptedTurnClosers,
  logEvent,
  surfaceEvent,
  surfaceNodes,
} from "@palimpsest/session/internal";
import { restoreSurface } from "../../src/surface/restore.ts";
import { Effect, Result } from "effect";
import { heldEvents, turnMarks } from "../../src/prior.ts";
import { decoded, text } from "./build.ts";
import { encodeEventLine } from "@palimpsest/session/jsonl";

/** Events as their stored lines. */
export const lines = (events: ReadonlyArray<SessionEvent>): string[] =>
  events.map((e) => encodeEventLine(e));

/**
 * Asserts that `restored` and `whole` have the same surface, messages,
 * held events (those `restored` holds) and open work.
 */
export const assertSameSession = (restored: Session, whole: Session): void => {
  assert.equal(restored.surface.nextSeq, whole.surface.nextSeq);
  assert.deepEqual(surfaceNodes(restored.surface), surfaceNodes(whole.surface));
  assert.equal(restored.surface.replacements, whole.surface.replacements);
  assert.deepEqual(
    deriveMessages(restored.surface),
    deriveMessages(whole.surface),
  );
  const from = Session.heldFrom(restored);
  assert.deepEqual(
    lines(Result.getOrThrow(Session.events(restored, from))),
    lines(Result.getOrThrow(Session.events(whole, from))),
  );
  assert.deepEqual(
    openWork(Result.getOrThrow(Session.events(restored, from))),
    openWork(Result.getOrThrow(Session.events(whole))),
  );
};

/** Outcome of folding one event: the nodes after it, or the error's tag. */
const outcome = (session: Session, event: SessionEvent): unknown => {
  const exit = Effect.runSyncExit(Session.appendEvents(session, [event]));
  return exit._tag === "Success"
    ? surfaceNodes(exit.value.surface)
    : JSON.stringify(exit.cause);
};

/** A replace of `a..b` by a user message citing `cites`. */
const replaceEvent = (
  seq: number,
  a: number,
  b: number,
  cites: ReadonlyArray<number>,
): SessionEvent =>
  decoded({
    type: "user/message",
    seq,
    time: 0,
    surfaceOp: { op: "replace", startSeq: a, endSeq: b },
    sourceEventSeqs: [...cites],
    data: {
      id: `r${seq}`,
      role: "user",
      content: text("summary"),
      source: { kind: "user" },
    },
  });

/** Asserts that `restored` and `full`, at the same seq, are the same session. */
/**
 * Asserts that `restored` (restored from a checkpoint, or read holding only
 * its surface) folds as `full` does: {@link assertSameSession}, every node
 * held, the same turn marks and repair closers, and the same outcome of
 * replaces chosen by `probes` and of a replace of each of the first nodes.
 */
export const assertSameFold = (
  restored: Session,
  full: Session,
  probes: ReadonlyArray<number>,
): void => {
  assertSameSession(restored, full);
  for (const seq of surfaceNodes(full.surface)) {
    assert.equal(
      surfaceEvent(restored.surface, seq) !== undefined,
      true,
      `node ${seq} is held`,
    );
  }
  assert.deepEqual(turnMarks(restored), turnMarks(full));
  // Repair closes the same work with the same events.
  assert.deepEqual(
    lines(
      interruptedTurnClosers(heldEvents(restored), {
        surface: restored.surface,
      }),
    ),
    lines(interruptedTurnClosers(Result.getOrThrow(Session.events(full)))),
  );
  // Any further replace, valid or not, ends the same way on both.
  const next = full.surface.nextSeq;
  const nodes = surfaceNodes(full.surface);
  for (let i = 0; i + 1 < probes.length; i += 2) {
    const a = probes[i]! % next;
    const b = probes[i + 1]! % next;
    const between = nodes.filter((n) => n >= Math.min(a, b));
    const cites = probes[i]! % 3 === 0 || between.length === 0
      ? [Math.max(0, a - 1)]
      : between;
    const event = replaceEvent(next, a, b, cites);
    assert.deepEqual(outcome(restored, event), outcome(full, event));
  }
  // A replace of each node's own range, citing it (exercises the pinned
  // nodes, the head's protection and tool-result rules).
  for (const n of nodes.slice(0, 8)) {
    const event = replaceEvent(next, n, n, [n]);
    assert.deepEqual(outcome(restored, event), outcome(full, event));
  }
};

/**
 * The surface rebuilt from its nodes and the events from `heldFrom` on, as
 * a checkpoint restores it (its order keys renumbered, the nodes below
 * `heldFrom` pinned).
 */
export const restored = (surface: Surface, heldFrom: number): Surface => {
  const nodes = surfaceNodes(surface).map((seq) =>
    surfaceEvent(surface, seq) ?? assert.fail()
  );
  const held: SessionEvent[] = [];
  for (let seq = heldFrom; seq < surface.nextSeq; seq++) {
    held.push(logEvent(surface, SessionSeq.make(seq)) ?? assert.fail());
  }
  return restoreSurface(
    [
      surface.baseSeq,
      SessionSeq.make(heldFrom),
      surface.nextSeq,
      surface.replacements,
    ],
    nodes,
    held,
    undefined,
  ) ?? assert.fail("the surface does not restore");
};
