/**
 * How event types narrow, checked by `deno check` and at run time: comparing
 * or switching on `event.type` of a `SessionEvent` reaches each core type
 * with its data, no guard first; extension and opaque events (the
 * `ForeignEvent`s) are what is left, reached through their own guards and
 * named with `eventTypeName`.
 */
import assert from "node:assert/strict";
import { Effect, Result, Schema } from "effect";
import {
  type ExtensionEvent,
  isExtensionEvent,
  makeVocabulary,
  type OpaqueEvent,
  Session,
  type SessionEvent,
} from "@palimpsest/session";
import {
  type CoreEvent,
  eventTypeName,
  type ForeignEvent,
  isCoreEvent,
  isForeignEvent,
  isOpaqueEvent,
} from "@palimpsest/session/schema";
import { decodeEventResult } from "@palimpsest/session/schema";

const vocabulary = makeVocabulary({
  "harness/checkpoint": Schema.Struct({ label: Schema.String }),
});

const decode = (value: Record<string, unknown>, seq = 0): SessionEvent =>
  Result.getOrThrow(
    decodeEventResult({ seq, time: 0, ...value }, { vocabulary }),
  );

const toolCall = {
  type: "tool/call",
  data: { turn: 0, step: 0, callId: "c1", name: "ls", arguments: "{}" },
};

/** One field read from each kind of event, through narrowing alone. */
const describe = (event: SessionEvent): string => {
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
    case "system/message":
    case "assistant/message":
    case "step/start":
    case "step/end":
    case "assistant/attempt":
    case "assistant/partial":
    case "request/header":
    case "request/context":
    case "session/end-seed":
    case "compaction/summary":
    case "compaction/prune":
    case "compaction/end":
    case "session/metadata":
      return event.type;
    default: {
      // Every core type is handled above: what is left is foreign.
      const rest: ForeignEvent = event;
      return isOpaqueEvent(rest)
        ? `opaque ${eventTypeName(rest)}`
        : `extension ${eventTypeName(rest)}`;
    }
  }
};

Deno.test("switch (event.type) narrows a SessionEvent's data with no guard first", () => {
  assert.deepEqual(
    [
      decode(toolCall),
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

Deno.test("an if on event.type reads the data of an event from the log", () => {
  const session = Effect.runSync(
    Session.fromEvents(
      { id: "s", createdAt: 0, isSeeded: false },
      [
        decode({ type: "turn/start", data: { turn: 0 } }, 0),
        decode({ ...toolCall }, 1),
        decode({ type: "future/thing", ignorable: true, data: 1 }, 2),
      ],
      { vocabulary },
    ),
  );
  const callIds: Array<string> = [];
  for (const e of Result.getOrThrow(Session.events(session))) {
    if (e.type === "tool/call") callIds.push(e.data.callId);
  }
  assert.deepEqual(callIds, ["c1"]);
});

Deno.test("the guards split core, extension and opaque events", () => {
  const events = [
    decode(toolCall),
    decode({ type: "harness/checkpoint", data: { label: "a" } }),
    decode({ type: "future/thing", ignorable: true, data: 1 }),
  ];
  const kinds = events.map((event) => {
    if (isExtensionEvent(event)) {
      const extension: ExtensionEvent = event;
      return `extension ${eventTypeName(extension)}`;
    }
    if (isOpaqueEvent(event)) {
      const opaque: OpaqueEvent = event;
      return `opaque ${eventTypeName(opaque)}`;
    }
    if (!isForeignEvent(event)) {
      // Past the foreign guard, the rest is core.
      const core: CoreEvent = event;
      return `core ${core.type}`;
    }
    return "unreachable";
  });
  assert.deepEqual(kinds, [
    "core tool/call",
    "extension harness/checkpoint",
    "opaque future/thing",
  ]);
  assert.deepEqual(events.map(isCoreEvent), [true, false, false]);
  assert.deepEqual(events.map(isForeignEvent), [false, true, true]);
});

Deno.test("a foreign name is not a core name: comparing with it asks for the guard", () => {
  const event = decode({ type: "harness/checkpoint", data: { label: "a" } });
  // @ts-expect-error no core type is named so: use isExtensionEvent and eventTypeName
  const compared = event.type === "harness/checkpoint";
  assert.equal(compared, true);
  assert.equal(
    isExtensionEvent(event) && eventTypeName(event) === "harness/checkpoint",
    true,
  );
});

Deno.test("a switch over every core type leaves the foreign events, never nothing", () => {
  const event = decode({ type: "future/thing", ignorable: true, data: 1 });
  if (isCoreEvent(event)) return assert.fail("decoded as core");
  // @ts-expect-error a foreign event is still possible here
  const nothing: never = event;
  assert.equal(eventTypeName(nothing), "future/thing");
});
