/**
 * The draft type's surface rules, checked by `deno check`: each
 * `@ts-expect-error` fails the type check if the draft compiles. The same
 * drafts, smuggled past the compiler, are refused at run time, and that is
 * what each test asserts; the well-typed drafts are accepted.
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import { Schema } from "effect";
import {
  type EventDraft,
  extensionType,
  makeVocabulary,
  Session,
  SessionSeq,
} from "@palimpsest/session";
import { thenFails } from "../_helpers/then.ts";

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

const header = { id: "t", createdAt: 0, isSeeded: false };
const vocabulary = makeVocabulary({
  "harness/checkpoint": Schema.Struct({ label: Schema.String }),
});

/** Appends the drafts in order to a fresh session; they must be accepted. */
const appended = (...drafts: ReadonlyArray<EventDraft>): Promise<Session> =>
  Effect.runPromise(
    Session.appendAll(Session.make(header, { vocabulary }), drafts),
  );

/** Appends the drafts in order to a fresh session: the first refusal. */
const refusal = (...drafts: ReadonlyArray<EventDraft>) =>
  Effect.runPromise(
    Effect.flip(
      Session.appendAll(Session.make(header, { vocabulary }), drafts),
    ),
  );

const userFirst: EventDraft = {
  type: "user/message",
  data: userData,
  surfaceOp: "append",
};

Deno.test("well-typed drafts compile and are accepted", async () => {
  const drafts: ReadonlyArray<EventDraft> = [
    userFirst,
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
  const session = await appended(...drafts);
  assert.equal(Session.nextSeq(session), drafts.length);
});

Deno.test("a literal surface type without surfaceOp does not compile", async () => {
  // @ts-expect-error surfaceOp is required on user/message
  const user: EventDraft = { type: "user/message", data: userData };
  // @ts-expect-error surfaceOp is required on assistant/message
  const model: EventDraft = { type: "assistant/message", data: assistantData };
  thenFails(await refusal(user), "SurfaceOpMissing");
  thenFails(await refusal(model), "SurfaceOpMissing");
});

Deno.test("assistant/message with sourceEventSeqs does not compile", async () => {
  // @ts-expect-error assistant/message never cites
  const draft: EventDraft = {
    type: "assistant/message",
    data: assistantData,
    surfaceOp: "append",
    sourceEventSeqs: [zero],
  };
  thenFails(await refusal(userFirst, draft), "SourcesOnAssistantMessage");
});

Deno.test("a log-only type with surface metadata does not compile", async () => {
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
    type: extensionType("harness/checkpoint"),
    data: { label: "a" },
    surfaceOp: "append",
  };
  thenFails(await refusal(op), "SurfaceMetadataOnLogOnlyEvent");
  thenFails(await refusal(userFirst, sources), "SurfaceMetadataOnLogOnlyEvent");
  thenFails(await refusal(extension), "SurfaceMetadataOnLogOnlyEvent");
});

Deno.test("a plain number is not a source at compile time", async () => {
  const draft: EventDraft = {
    type: "user/message",
    data: userData,
    surfaceOp: "append",
    // @ts-expect-error sources are SessionSeq, not number
    sourceEventSeqs: [0],
  };
  // Cited by its own seq (0), the plain number is refused at run time too.
  thenFails(await refusal(draft), "SourceNotEarlier");
});

Deno.test("widened drafts are still refused at run time", async () => {
  const session = Session.make({ id: "t", createdAt: 0, isSeeded: false });
  const append = (draft: EventDraft) =>
    Effect.runPromise(Session.append(session, draft));
  const refused = (draft: EventDraft) =>
    Effect.runPromise(Effect.flip(Session.append(session, draft)));
  // A core name behind the extension brand escapes the literal checks.
  thenFails(
    await refused({ type: extensionType("user/message"), data: userData }),
    "SurfaceOpMissing",
  );
  const started = await append({
    type: extensionType("turn/start"),
    data: { turn: 0 },
  });
  assert.equal(Session.nextSeq(started), 1);
  thenFails(
    await refused({ type: extensionType("harness/checkpoint"), data: {} }),
    "UnknownEventType",
  );
});
