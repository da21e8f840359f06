import assert from "node:assert/strict";
import { Result } from "effect";
import {
  deriveMessages,
  type SessionEvent,
  SessionSeq,
} from "@palimpsest/session";
import {
  emptySurfaceAt,
  logEvent,
  replayResult,
  surfaceNodes,
} from "@palimpsest/session/internal";
import { decodeEventResult } from "@palimpsest/session/schema";

const decode = (value: unknown): SessionEvent =>
  Result.getOrThrow(decodeEventResult(value));

const user = (seq: number, extra: object): SessionEvent =>
  decode({
    type: "user/message",
    seq,
    time: 0,
    data: {
      id: `u${seq}`,
      role: "user",
      content: [{ type: "text", text: `m${seq}` }],
      source: { kind: "user" },
    },
    ...extra,
  });

const log: ReadonlyArray<SessionEvent> = [
  decode({ type: "turn/start", seq: 0, time: 0, data: { turn: 0 } }),
  user(1, { surfaceOp: "append" }),
  user(2, { surfaceOp: "append" }),
  user(3, {
    surfaceOp: { op: "replace", startSeq: 1, endSeq: 1 },
    sourceEventSeqs: [1],
  }),
];

Deno.test("a surface that does not keep its log keeps only its nodes' events", () => {
  const base = SessionSeq.make(0);
  const lean = Result.getOrThrow(
    replayResult(log, emptySurfaceAt(base, { keepLog: false })),
  );
  const full = Result.getOrThrow(replayResult(log, emptySurfaceAt(base)));
  assert.deepEqual(surfaceNodes(lean), surfaceNodes(full));
  assert.deepEqual(deriveMessages(lean), deriveMessages(full));
  assert.equal(lean.keepsLog, false);
  assert.equal(logEvent(lean, SessionSeq.make(0)), undefined);
  assert.equal(logEvent(lean, SessionSeq.make(1)), undefined);
  assert.equal(logEvent(full, SessionSeq.make(1))?.seq, 1);
  assert.equal(logEvent(lean, SessionSeq.make(3))?.seq, 3);
});

Deno.test("an older lean surface still sees the node a newer one shadowed", () => {
  const before = Result.getOrThrow(
    replayResult(
      log.slice(0, 3),
      emptySurfaceAt(SessionSeq.make(0), { keepLog: false }),
    ),
  );
  const after = Result.getOrThrow(replayResult(log.slice(3), before));
  assert.deepEqual(surfaceNodes(after), [3, 2]);
  assert.deepEqual(deriveMessages(before).map((m) => m.id), ["u1", "u2"]);
  assert.deepEqual(deriveMessages(after).map((m) => m.id), ["u3", "u2"]);
});
