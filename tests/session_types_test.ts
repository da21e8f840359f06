/**
 * The draft type's surface rules, checked by `deno check`: each
 * `@ts-expect-error` fails the type check if the draft compiles. The same
 * drafts, smuggled past the compiler, are refused at run time.
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import {
  type EventDraft,
  extensionType,
  Session,
  SessionSeq,
} from "@palimpsest/session";

const userData = {
  id: "u",
  role: "user",
  content: [],
  source: { kind: "user" },
} as const;
const assistantData = {
  turn: 0,
  step: 0,
  message: {
    id: "a",
    role: "assistant",
    content: [],
    source: { kind: "model", provider: "p", model: "m" },
  },
  stream: [],
} as const;
const zero = SessionSeq.make(0);

Deno.test("well-typed drafts compile", () => {
  const drafts: ReadonlyArray<EventDraft> = [
    { type: "user/message", data: userData, surfaceOp: "append" },
    {
      type: "user/message",
      data: userData,
      surfaceOp: { op: "replace", startSeq: zero, endSeq: zero },
      sourceEventSeqs: [zero],
    },
    { type: "assistant/message", data: assistantData, surfaceOp: "append" },
    { type: "turn/start", data: { turn: 0 } },
    { type: "turn/start", data: { turn: 0 }, ignorable: true },
    { type: extensionType("harness/checkpoint"), data: { label: "a" } },
  ];
  assert.equal(drafts.length, 6);
});

Deno.test("a literal surface type without surfaceOp does not compile", () => {
  // @ts-expect-error surfaceOp is required on user/message
  const user: EventDraft = { type: "user/message", data: userData };
  // @ts-expect-error surfaceOp is required on assistant/message
  const model: EventDraft = { type: "assistant/message", data: assistantData };
  assert.equal([user, model].length, 2);
});

Deno.test("assistant/message with sourceEventSeqs does not compile", () => {
  // @ts-expect-error assistant/message never cites
  const draft: EventDraft = {
    type: "assistant/message",
    data: assistantData,
    surfaceOp: "append",
    sourceEventSeqs: [zero],
  };
  assert.equal(draft.type, "assistant/message");
});

Deno.test("a log-only type with surface metadata does not compile", () => {
  const op: EventDraft = {
    type: "turn/start",
    data: { turn: 0 },
    // @ts-expect-error log-only types take no surfaceOp
    surfaceOp: "append",
  };
  // @ts-expect-error log-only types take no sourceEventSeqs
  const sources: EventDraft = {
    type: "tool/call",
    data: { turn: 0, step: 0, callId: "c", name: "n", arguments: "{}" },
    sourceEventSeqs: [zero],
  };
  // @ts-expect-error an extension type takes no surfaceOp either
  const extension: EventDraft = {
    type: extensionType("x/y"),
    data: {},
    surfaceOp: "append",
  };
  assert.equal([op, sources, extension].length, 3);
});

Deno.test("a plain number is not a source at compile time", () => {
  const draft: EventDraft = {
    type: "user/message",
    data: userData,
    surfaceOp: "append",
    // @ts-expect-error sources are SessionSeq, not number
    sourceEventSeqs: [0],
  };
  assert.equal(draft.type, "user/message");
});

Deno.test("widened drafts are still refused at run time", async () => {
  const session = Session.make({ id: "t", createdAt: 0, isSeeded: false });
  const tag = (draft: EventDraft) =>
    Effect.runPromise(
      Session.append(session, draft).pipe(
        Effect.map(() => "appended"),
        Effect.catch((e) => Effect.succeed(e._tag)),
      ),
    );
  // A core name behind the extension brand escapes the literal checks.
  assert.equal(
    await tag({ type: extensionType("user/message"), data: userData }),
    "SurfaceOpMissing",
  );
  assert.equal(
    await tag({ type: extensionType("turn/start"), data: { turn: 0 } }),
    "appended",
  );
  assert.equal(
    await tag({ type: extensionType("harness/checkpoint"), data: {} }),
    "UnknownEventType",
  );
});
