import assert from "node:assert/strict";
import fc from "fast-check";
import { Effect, Exit, Result } from "effect";
import {
  deriveMessages,
  type EventDraft,
  extensionType,
  Session,
  type SessionEvent,
  SessionSeq,
} from "@palimpsest/session";
import { decodeEventLine, encodeEventLine } from "@palimpsest/session/jsonl";
import { toolResultDraft } from "../_helpers/build.ts";
import { tempDir, useStoreExit } from "../_helpers/store.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";

const header = { id: "s", createdAt: 0, isSeeded: false };

/** A tool result whose `meta` holds `value` (meta is any JSON). */
const withMeta = (value: unknown): EventDraft => {
  const draft = toolResultDraft(0, 0, "c1", "out");
  return { ...draft, data: { ...Object(draft.data), meta: { value } } };
};

/** Both kinds of session: one that takes the data as it is, one that copies it. */
const MODES = [
  { name: "a session that takes the data", copyDrafts: false },
  { name: "a session that copies drafts", copyDrafts: true },
] as const;

const appendExit = (draft: EventDraft, copyDrafts = false) =>
  Effect.runSync(
    Effect.exit(Session.append(Session.make(header, { copyDrafts }), draft)),
  );

/**
 * The same JSON value, own keys and all: every own key (symbols too) and
 * every value match, and objects are plain on both sides. A null prototype
 * and `Object.prototype` are the same JSON object.
 */
const assertSameJson = (actual: unknown, expected: unknown): void => {
  if (typeof expected !== "object" || expected === null) {
    assert.ok(
      Object.is(actual, expected),
      `${String(actual)} is not ${String(expected)}`,
    );
    return;
  }
  assert.ok(typeof actual === "object" && actual !== null);
  assert.equal(Array.isArray(actual), Array.isArray(expected));
  for (const value of [actual, expected]) {
    const proto: unknown = Object.getPrototypeOf(value);
    assert.ok(
      proto === null || proto === Object.prototype || proto === Array.prototype,
    );
  }
  const keys = Reflect.ownKeys(expected);
  assert.deepStrictEqual(Reflect.ownKeys(actual), keys);
  for (const key of keys) {
    assertSameJson(Reflect.get(actual, key), Reflect.get(expected, key));
  }
};

class Point {
  x = 1;
}
const cycle: Record<string, unknown> = { a: 1 };
cycle.self = cycle;

const NOT_JSON: ReadonlyArray<
  readonly [string, unknown, ReadonlyArray<string | number>]
> = [
  ["a bigint", 12n, []],
  ["NaN", NaN, []],
  ["Infinity", Infinity, []],
  ["-Infinity", -Infinity, []],
  ["-0", -0, []],
  ["undefined in an array", [1, undefined], [1]],
  ["undefined as a value", { a: undefined }, ["a"]],
  ["a function", () => 1, []],
  ["a symbol", Symbol("s"), []],
  ["a Date", new Date(0), []],
  ["a Map", new Map(), []],
  ["a class instance", new Point(), []],
  ["a sparse array", [1, , 3], []],
  ["a cycle", cycle, ["self"]],
  ["a symbol key", { [Symbol("k")]: 1 }, []],
];

/** `fc.anything` options that mix in values JSON cannot hold. */
const notJsonValues = {
  withBigInt: true,
  withDate: true,
  withMap: true,
  withNullPrototype: true,
  withObjectString: true,
  withBoxedValues: true,
  withSparseArray: true,
  maxDepth: 4,
} as const;

Deno.test("a draft's data must be JSON", async (t) => {
  for (const { name: mode, copyDrafts } of MODES) {
    for (const [name, value, inner] of NOT_JSON) {
      await t.step(`${mode}: ${name} is InvalidEventData with its path`, () => {
        const exit = appendExit(withMeta(value), copyDrafts);
        assert.ok(Exit.isFailure(exit));
        const error = thenFails(failureOf(exit), "InvalidEventData", {
          seq: 0,
          type: "tool/result",
        });
        assert.deepEqual(
          error.path.slice(0, inner.length + 2),
          ["meta", "value", ...inner],
        );
      });
    }
  }

  await t.step(
    "the store refuses a bigint with a typed error, never a defect",
    async () => {
      const root = tempDir();
      const exit = await useStoreExit(root, (store) =>
        Effect.gen(function* () {
          const handle = yield* store.create(header);
          yield* store.append(handle, [withMeta(12n)]);
        }));
      thenFails(failureOf(exit), "InvalidEventData");
    },
  );

  await t.step(
    "a shared value is fine; an envelope error still comes first",
    () => {
      const shared = { k: [1, 2] };
      assert.ok(Exit.isSuccess(appendExit(withMeta([shared, shared]))));
      const exit = appendExit({ type: extensionType("x/y"), data: { v: 12n } });
      thenFails(failureOf(exit), "UnknownEventType");
    },
  );
});

const lineOf = (event: SessionEvent): string => encodeEventLine(event);

/** Changes every part of a {@link withMeta} draft's data it can reach. */
const changeDraft = (draft: EventDraft): void => {
  const data = Object(draft.data);
  data.meta.value.list.push(3);
  data.meta.value.text = "b";
  data.message.content[0].content = [];
};

Deno.test("changing a draft after appending it does not change a session that copies drafts", async () => {
  const draft = withMeta({ list: [1, 2], text: "a" });
  const session = await Effect.runPromise(
    Session.append(Session.make(header, { copyDrafts: true }), draft),
  );
  const before = encodeEventLine(
    Result.getOrThrow(Session.events(session))[0] ?? assert.fail(),
  );
  changeDraft(draft);
  const after = encodeEventLine(
    Result.getOrThrow(Session.events(session))[0] ?? assert.fail(),
  );
  assert.equal(after, before);
  // Every session appended from it copies too.
  const draft2 = withMeta({ list: [1, 2], text: "a" });
  const next = await Effect.runPromise(Session.append(session, draft2));
  assert.equal(next.copiesDrafts, true);
  assert.notEqual(
    Object(Result.getOrThrow(Session.events(next))[1]?.data).meta,
    Object(draft2.data).meta,
  );
});

Deno.test("a session made without copyDrafts takes the data as it is", async () => {
  const draft = withMeta({ list: [1, 2], text: "a" });
  const session = await Effect.runPromise(
    Session.append(Session.make(header), draft),
  );
  assert.equal(session.copiesDrafts, false);
  assert.equal(Result.getOrThrow(Session.events(session))[0]?.data, draft.data);
});

Deno.test("changing a replace draft's surfaceOp or sources after appending it changes no session", async () => {
  const user = (id: string): EventDraft => ({
    type: "user/message",
    surfaceOp: "append",
    data: { id, role: "user", content: [], source: { kind: "user" } },
  });
  for (const copyDrafts of [false, true]) {
    const surfaceOp = {
      op: "replace" as const,
      startSeq: SessionSeq.make(0),
      endSeq: SessionSeq.make(1),
    };
    const sourceEventSeqs = [SessionSeq.make(0), SessionSeq.make(1)];
    const replace: EventDraft = {
      type: "user/message",
      surfaceOp,
      sourceEventSeqs,
      data: { id: "s0", role: "user", content: [], source: { kind: "user" } },
    };
    const session = await Effect.runPromise(
      Session.appendAll(Session.make(header, { copyDrafts }), [
        user("u0"),
        user("u1"),
        replace,
      ]),
    );
    const before = encodeEventLine(
      Result.getOrThrow(Session.events(session))[2] ?? assert.fail(),
    );
    surfaceOp.startSeq = SessionSeq.make(1);
    sourceEventSeqs.push(SessionSeq.make(5));
    const event = Result.getOrThrow(Session.events(session))[2] ??
      assert.fail();
    assert.equal(encodeEventLine(event), before);
    assert.notEqual(Object(event).surfaceOp, surfaceOp);
    assert.notEqual(Object(event).sourceEventSeqs, sourceEventSeqs);
  }
});

Deno.test("changing a draft after store.append changes neither the store's session, its file nor its checkpoint", async () => {
  const root = tempDir();
  const first = withMeta({ list: [1, 2], text: "a" });
  const second = withMeta({ list: [1, 2], text: "a" });
  /** What the model is sent, and every event held, as lines. */
  const seen = (session: Session) => ({
    messages: JSON.stringify(deriveMessages(session.surface)),
    held: Result.getOrThrow(Session.events(session, Session.heldFrom(session)))
      .map(lineOf),
  });
  const exit = await useStoreExit(root, (store) =>
    Effect.gen(function* () {
      const handle = yield* store.create(header);
      assert.equal(handle.session.copiesDrafts, true);
      yield* store.append(handle, [first]);
      // Through update too: the session it is handed copies drafts.
      yield* store.update(handle, (session) => Session.append(session, second));
      const before = Result.getOrThrow(Session.events(handle.session)).map(
        lineOf,
      );
      const messages = JSON.stringify(deriveMessages(handle.session.surface));
      changeDraft(first);
      changeDraft(second);
      yield* store.checkpoint(handle);
      assert.deepEqual(seen(handle.session), { messages, held: before });
      return { messages, lines: before };
    }));
  assert.ok(Exit.isSuccess(exit));
  // Reopened from its checkpoint and by a full replay: the same messages,
  // and the file holds the lines appended.
  const reopened = await useStoreExit(root, (store) =>
    Effect.gen(function* () {
      const fromCheckpoint = yield* store.open("s");
      assert.equal(fromCheckpoint.report.checkpoint, 2);
      const replayed = yield* store.open("s", { wholeLog: true });
      return {
        fromCheckpoint: seen(fromCheckpoint.session).messages,
        replayed: seen(replayed.session).messages,
        lines: Result.getOrThrow(Session.events(replayed.session)).map(lineOf),
      };
    }));
  assert.ok(Exit.isSuccess(reopened));
  assert.deepEqual(reopened.value, {
    fromCheckpoint: exit.value.messages,
    replayed: exit.value.messages,
    lines: exit.value.lines,
  });
});

Deno.test("law: an accepted draft reads back from disk equal to the log", async (t) => {
  for (const { name, copyDrafts } of MODES) {
    await t.step(name, () => {
      fc.assert(
        fc.property(
          fc.anything({
            ...notJsonValues,
            withSet: true,
            withTypedArray: true,
          }),
          (value) => {
            const exit = appendExit(withMeta(value), copyDrafts);
            if (Exit.isFailure(exit)) {
              thenFails(failureOf(exit), "InvalidEventData");
              return;
            }
            const event = Result.getOrThrow(Session.events(exit.value))[0] ??
              assert.fail();
            const line = encodeEventLine(event);
            const read = Result.getOrThrow(decodeEventLine(line.slice(0, -1)));
            // A copy is a plain value, as the reader makes it; data taken as
            // it is may keep a null prototype.
            if (copyDrafts) assert.deepStrictEqual(read, event);
            else assertSameJson(read, event);
          },
        ),
        { numRuns: 300, seed: 20261203 },
      );
    });
  }
});

Deno.test("law: shallow and deeply nested drafts are judged and copied alike", () => {
  // Data nested deeper than any message is judged by a different walk than
  // everyday data: both must accept, refuse and copy the same values.
  const DEPTH = 100;
  const nest = (value: unknown): unknown => {
    let out = value;
    for (let i = 0; i < DEPTH; i++) out = [out];
    return out;
  };
  const unnest = (value: unknown): unknown => {
    let out = value;
    for (let i = 0; i < DEPTH; i++) {
      assert.ok(Array.isArray(out) && out.length === 1);
      out = out[0];
    }
    return out;
  };
  const metaOf = (exit: ReturnType<typeof appendExit>): unknown => {
    assert.ok(Exit.isSuccess(exit));
    const event = Result.getOrThrow(Session.events(exit.value))[0] ??
      assert.fail();
    return Object(event.data).meta.value;
  };
  const check = (value: unknown, copyDrafts: boolean): void => {
    const shallow = appendExit(withMeta(value), copyDrafts);
    const deep = appendExit(withMeta(nest(value)), copyDrafts);
    assert.equal(shallow._tag, deep._tag);
    if (Exit.isFailure(shallow)) {
      const a = thenFails(failureOf(shallow), "InvalidEventData");
      const b = thenFails(failureOf(deep), "InvalidEventData");
      assert.equal(b.issue, a.issue);
      // Where a cycle is reported depends on how deep the walk went.
      if (a.issue.includes("cycle")) return;
      assert.deepEqual(
        b.path,
        [
          ...a.path.slice(0, 2),
          ...Array(DEPTH).fill(0),
          ...a.path.slice(2),
        ],
      );
      return;
    }
    const kept = metaOf(shallow);
    assert.deepStrictEqual(unnest(metaOf(deep)), kept);
    if (typeof value === "object" && value !== null) {
      // A copy, or the caller's own value.
      if (copyDrafts) assert.notEqual(kept, value);
      else assert.equal(kept, value);
    }
  };
  for (const { copyDrafts } of MODES) {
    for (const [, value] of NOT_JSON) check(value, copyDrafts);
    check(
      { zero: 0, list: [1.5, "a", null, true], nested: { a: { b: [] } } },
      copyDrafts,
    );
    fc.assert(
      fc.property(
        fc.anything(notJsonValues),
        (value) => check(value, copyDrafts),
      ),
      { numRuns: 300, seed: 20261203 },
    );
  }
});

Deno.test("a key added to Object.prototype never lands in the log", () => {
  const proto: Record<string, unknown> = Object.prototype as never;
  proto.polluted = { x: 1 };
  try {
    const exit = appendExit(withMeta({ a: { b: 1 } }));
    assert.ok(Exit.isSuccess(exit));
    const event = Result.getOrThrow(Session.events(exit.value))[0] ??
      assert.fail();
    const meta = Object(event.data).meta;
    assert.deepEqual(Object.keys(meta.value.a), ["b"]);
    assert.ok(!Object.hasOwn(meta, "polluted"));
    assert.ok(!Object.hasOwn(meta.value.a, "polluted"));
  } finally {
    delete proto.polluted;
  }
});
