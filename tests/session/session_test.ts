import assert from "node:assert/strict";
import { Effect, Result, Schema } from "effect";
import { TestClock } from "effect/testing";
import {
  deriveMessages,
  Draft,
  type EventDraft,
  extensionType,
  makeVocabulary,
  Session,
  SessionSeq,
} from "@palimpsest/session";
import { decodeEvent } from "@palimpsest/session/schema";
import { surfaceNodes } from "@palimpsest/session/internal";
import { thenFails } from "../_helpers/then.ts";
import { drafts } from "../_helpers/build.ts";

const header = { id: "s1", createdAt: 0, isSeeded: false };
const userDraft = (id: string): EventDraft => drafts.user(id);
const replaceDraft = (
  id: string,
  start: number,
  end: number,
  sources: ReadonlyArray<number>,
): EventDraft => ({
  ...Draft.user(id, { id, source: { kind: "plugin", plugin: "compaction" } }),
  surfaceOp: {
    op: "replace",
    startSeq: SessionSeq.make(start),
    endSeq: SessionSeq.make(end),
  },
  sourceEventSeqs: sources.map((n) => SessionSeq.make(n)),
});

const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(effect.pipe(Effect.provide(TestClock.layer())));

const snapshot = (session: Session) =>
  JSON.stringify(Result.getOrThrow(Session.encode(session)));

Deno.test("Session.append assigns the next seq and the Clock's time", async () => {
  const events = await run(Effect.gen(function* () {
    yield* TestClock.setTime(1_000);
    let session = Session.make(header);
    session = yield* Session.append(session, userDraft("u0"));
    yield* TestClock.adjust("5 seconds");
    session = yield* Session.append(session, {
      type: "turn/start",
      data: { turn: 1 },
    });
    return Result.getOrThrow(Session.events(session));
  }));
  assert.deepEqual(events.map((e) => [e.seq, e.time, e.type]), [
    [0, 1_000, "user/message"],
    [1, 6_000, "turn/start"],
  ]);
});

Deno.test("Session.append in a window starts at the base seq", async () => {
  const session = await run(
    Session.append(
      Session.make(header, { baseSeq: SessionSeq.make(40) }),
      userDraft("u"),
    ),
  );
  assert.equal(
    Result.getOrThrow(Session.eventAt(session, SessionSeq.make(40)))?.seq,
    40,
  );
  assert.equal(Session.nextSeq(session), 41);
  assert.deepEqual(surfaceNodes(session.surface), [40]);
});

Deno.test("a rejected draft changes nothing and the session stays usable", async () => {
  await run(Effect.gen(function* () {
    const session = yield* Session.appendAll(Session.make(header), [
      userDraft("u0"),
      userDraft("u1"),
    ]);
    const before = snapshot(session);
    const refused = (draft: EventDraft) =>
      Effect.flip(Session.append(session, draft));
    thenFails(
      yield* refused(replaceDraft("x", 1, 0, [0, 1])),
      "ReplaceRangeInverted",
    );
    thenFails(
      yield* refused(replaceDraft("x", 0, 1, [0])),
      "ShadowedNodeNotCited",
    );
    thenFails(yield* refused(replaceDraft("x", 0, 1, [])), "EmptySourceList");
    thenFails(
      yield* refused(replaceDraft("x", 0, 5, [0])),
      "ReplaceEndpointNotEarlier",
    );
    assert.equal(snapshot(session), before);
    const next = yield* Session.append(
      session,
      replaceDraft("s", 0, 1, [0, 1]),
    );
    assert.deepEqual(surfaceNodes(next.surface), [2]);
    assert.deepEqual(surfaceNodes(session.surface), [0, 1]);
  }));
});

Deno.test("Session.appendAll is all or nothing, with one Clock reading", async () => {
  await run(Effect.gen(function* () {
    yield* TestClock.setTime(77);
    const session = yield* Session.append(
      Session.make(header),
      userDraft("u0"),
    );
    const before = snapshot(session);
    const error = yield* Effect.flip(Session.appendAll(session, [
      userDraft("u1"),
      replaceDraft("s", 0, 1, [0, 1]),
      replaceDraft("bad", 0, 1, [0, 1]),
      userDraft("u4"),
    ]));
    thenFails(error, "ReplaceStartNotOnSurface");
    assert.equal(snapshot(session), before);
    assert.equal(Session.nextSeq(session), 1);

    yield* TestClock.adjust(10);
    const next = yield* Session.appendAll(session, [
      userDraft("u1"),
      replaceDraft("s", 0, 1, [0, 1]),
      userDraft("u3"),
    ]);
    assert.deepEqual(
      Result.getOrThrow(Session.events(next)).map((e) => [e.seq, e.time]),
      [
        [0, 77],
        [1, 87],
        [2, 87],
        [3, 87],
      ],
    );
    assert.deepEqual(deriveMessages(next.surface).map((m) => m.id), [
      "s",
      "u3",
    ]);
    assert.equal(snapshot(session), before);
  }));
});

Deno.test("Session.appendAll of nothing returns an equal session", async () => {
  const session = await run(Session.appendAll(Session.make(header), []));
  assert.equal(Session.nextSeq(session), 0);
  assert.deepEqual(Result.getOrThrow(Session.events(session)), []);
});

Deno.test("Session.appendEvents and fromEvents fold decoded events atomically", async () => {
  await run(Effect.gen(function* () {
    const session = yield* Session.appendAll(Session.make(header), [
      userDraft("u0"),
      userDraft("u1"),
    ]);
    const lines = Result.getOrThrow(Session.encode(session));
    const events = yield* Effect.forEach(lines, (l) => decodeEvent(l));
    const copy = yield* Session.fromEvents(header, events);
    assert.equal(snapshot(copy), snapshot(session));

    const more = yield* decodeEvent({
      type: "turn/start",
      seq: 2,
      time: 0,
      data: { turn: 0 },
    });
    const gap = yield* decodeEvent({
      type: "turn/start",
      seq: 4,
      time: 0,
      data: { turn: 0 },
    });
    thenFails(
      yield* Effect.flip(Session.appendEvents(session, [more, gap])),
      "NonContiguousSeq",
    );
    assert.equal(Session.nextSeq(session), 2);
    thenFails(
      yield* Effect.flip(Session.fromEvents(header, [more])),
      "NonContiguousSeq",
    );
    const extended = yield* Session.appendEvents(session, [more]);
    assert.equal(Session.nextSeq(extended), 3);
    assert.deepEqual(
      Result.getOrThrow(Session.events(extended, SessionSeq.make(1))).map((e) =>
        e.seq
      ),
      [1, 2],
    );
  }));
});

Deno.test("Session.encode writes canonical lines that decode back", async () => {
  const session = await run(Session.appendAll(Session.make(header), [
    userDraft("u0"),
    { type: "turn/start", data: { turn: 0 }, ignorable: true },
  ]));
  assert.deepEqual(
    Result.getOrThrow(Session.encode(session)).map((l) => JSON.stringify(l)),
    [
      '{"type":"user/message","seq":0,"time":0,"data":{"id":"u0","role":"user","content":[{"type":"text","text":"u0"}],"source":{"kind":"user"}},"surfaceOp":"append"}',
      '{"type":"turn/start","seq":1,"time":0,"data":{"turn":0},"ignorable":true}',
    ],
  );
});

Deno.test("a session decodes and encodes its vocabulary's types", async () => {
  const vocabulary = makeVocabulary({
    "harness/counter": Schema.Struct({ n: Schema.FiniteFromString }),
  });
  const session = await run(Effect.gen(function* () {
    const empty = Session.make(header, { vocabulary });
    const error = yield* Effect.flip(
      Session.append(empty, {
        type: extensionType("harness/counter"),
        data: { n: 1 },
      }),
    );
    thenFails(error, "InvalidEventData");
    return yield* Session.append(empty, {
      type: extensionType("harness/counter"),
      data: { n: "3" },
    });
  }));
  assert.deepEqual(
    Result.getOrThrow(Session.eventAt(session, SessionSeq.make(0)))?.data,
    {
      n: 3,
    },
  );
  assert.deepEqual(Result.getOrThrow(Session.encode(session)), [{
    type: "harness/counter",
    seq: 0,
    time: 0,
    data: { n: "3" },
  }]);
});
