/**
 * How event types narrow, checked by `deno check` and at run time: a
 * `switch (event.type)` over a `CoreEvent` (or over a `SessionEvent` past
 * `isCoreEvent`) reaches each core type with its data; extension and opaque
 * events are reached through their own guard.
 */
import assert from "node:assert/strict";
import { Result, Schema } from "effect";
import {
  type CoreEvent,
  isCoreEvent,
  isOpaqueEvent,
  makeVocabulary,
  type SessionEvent,
} from "@palimpsest/session";
import { decodeEventResult } from "@palimpsest/session/schema";

const vocabulary = makeVocabulary({
  "harness/checkpoint": Schema.Struct({ label: Schema.String }),
});

const decode = (value: Record<string, unknown>): SessionEvent =>
  Result.getOrThrow(
    decodeEventResult({ seq: 0, time: 0, ...value }, { vocabulary }),
  );

/** One field read from each kind of event, through narrowing alone. */
const describe = (event: SessionEvent): string => {
  if (!isCoreEvent(event)) {
    return isOpaqueEvent(event)
      ? `opaque ${event.type}`
      : `extension ${event.type}`;
  }
  switch (event.type) {
    case "tool/call":
      return `call ${event.data.callId}`;
    case "turn/start":
      return `turn ${event.data.turn}`;
    case "turn/end":
      return `end ${event.data.reason.kind}`;
    case "compaction/start":
      return `compaction ${event.data.turn ?? "manual"}`;
    case "user/message":
      return `user ${event.data.id}`;
    case "tool/result":
      return `result ${event.data.message.source.callId}`;
    default:
      return event.type;
  }
};

Deno.test("switch (event.type) narrows data past isCoreEvent", () => {
  assert.deepEqual(
    [
      decode({
        type: "tool/call",
        data: { turn: 0, step: 0, callId: "c1", name: "ls", arguments: "{}" },
      }),
      decode({ type: "turn/start", data: { turn: 3 } }),
      decode({
        type: "turn/end",
        data: { turn: 3, reason: { kind: "interrupted" } },
      }),
      decode({
        type: "compaction/start",
        data: { compactionId: "k", turn: null },
      }),
      decode({
        type: "user/message",
        surfaceOp: "append",
        data: { id: "u1", role: "user", content: [], source: { kind: "user" } },
      }),
      decode({ type: "harness/checkpoint", data: { label: "a" } }),
      decode({ type: "future/thing", ignorable: true, data: 1 }),
    ].map(describe),
    [
      "call c1",
      "turn 3",
      "end interrupted",
      "compaction manual",
      "user u1",
      "extension harness/checkpoint",
      "opaque future/thing",
    ],
  );
});

Deno.test("a CoreEvent narrows on its type directly", () => {
  const event = decode({ type: "turn/start", data: { turn: 7 } });
  assert.ok(isCoreEvent(event));
  const core: CoreEvent = event;
  let turn = -1;
  if (core.type === "turn/start") turn = core.data.turn;
  assert.equal(turn, 7);
});

Deno.test("without the guard, an open-ended member keeps data unknown", () => {
  const event = decode({ type: "turn/start", data: { turn: 1 } });
  if (event.type === "turn/start") {
    // The union holds `type: string` members (extension and opaque
    // events), so comparing `type` alone cannot rule them out.
    // @ts-expect-error data is unknown until isCoreEvent narrows the event
    const turn: number = event.data.turn;
    assert.equal(turn, 1);
  }
});
