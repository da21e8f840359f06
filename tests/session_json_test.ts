import assert from "node:assert/strict";
import fc from "fast-check";
import { Effect, Exit, Result } from "effect";
import {
  type EventDraft,
  extensionType,
  Session,
  SessionStore,
} from "@palimpsest/session";
import { decodeEventLine, encodeEventLine } from "@palimpsest/session/jsonl";
import { toolResultDraft } from "./_helpers/build.ts";
import { exitWithStore, tempDir } from "./_helpers/store.ts";
import { failureOf, thenFails } from "./_helpers/then.ts";

const header = { id: "s", createdAt: 0, isSeeded: false };

/** A tool result whose `meta` holds `value` (meta is any JSON). */
const withMeta = (value: unknown): EventDraft => {
  const draft = toolResultDraft(0, 0, "c1", "out");
  return { ...draft, data: { ...Object(draft.data), meta: { value } } };
};

const appendExit = (draft: EventDraft) =>
  Effect.runSync(Effect.exit(Session.append(Session.make(header), draft)));

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
  for (const [name, value, inner] of NOT_JSON) {
    await t.step(`${name} is InvalidEventData with its path`, () => {
      const exit = appendExit(withMeta(value));
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

  await t.step(
    "the store refuses a bigint with a typed error, never a defect",
    async () => {
      const root = tempDir();
      const exit = await exitWithStore(
        root,
        Effect.gen(function* () {
          const store = yield* SessionStore;
          const handle = yield* store.create(header);
          yield* store.append(handle, [withMeta(12n)]);
        }),
      );
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

Deno.test("changing a draft after appending it does not change the log", async () => {
  const draft = withMeta({ list: [1, 2], text: "a" });
  const session = await Effect.runPromise(
    Session.append(Session.make(header), draft),
  );
  const before = encodeEventLine(Session.events(session)[0] ?? assert.fail());
  const data = Object(draft.data);
  data.meta.value.list.push(3);
  data.meta.value.text = "b";
  data.message.content[0].content = [];
  const after = encodeEventLine(Session.events(session)[0] ?? assert.fail());
  assert.equal(after, before);
});

Deno.test("law: an accepted draft reads back from disk equal to the log", () => {
  fc.assert(
    fc.property(
      fc.anything({ ...notJsonValues, withSet: true, withTypedArray: true }),
      (value) => {
        const exit = appendExit(withMeta(value));
        if (Exit.isFailure(exit)) {
          thenFails(failureOf(exit), "InvalidEventData");
          return;
        }
        const event = Session.events(exit.value)[0] ?? assert.fail();
        const line = encodeEventLine(event);
        const read = Result.getOrThrow(decodeEventLine(line.slice(0, -1)));
        assert.deepStrictEqual(read, event);
      },
    ),
    { numRuns: 300, seed: 20261203 },
  );
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
    const event = Session.events(exit.value)[0] ?? assert.fail();
    return Object(event.data).meta.value;
  };
  const check = (value: unknown): void => {
    const shallow = appendExit(withMeta(value));
    const deep = appendExit(withMeta(nest(value)));
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
    const copied = metaOf(shallow);
    assert.deepStrictEqual(unnest(metaOf(deep)), copied);
    if (typeof value === "object" && value !== null) {
      assert.notEqual(copied, value);
    }
  };
  for (const [, value] of NOT_JSON) check(value);
  check({ zero: 0, list: [1.5, "a", null, true], nested: { a: { b: [] } } });
  fc.assert(
    fc.property(
      fc.anything(notJsonValues),
      (value) => check(value),
    ),
    { numRuns: 300, seed: 20261203 },
  );
});

Deno.test("a key added to Object.prototype never lands in the log", () => {
  const proto: Record<string, unknown> = Object.prototype as never;
  proto.polluted = { x: 1 };
  try {
    const exit = appendExit(withMeta({ a: { b: 1 } }));
    assert.ok(Exit.isSuccess(exit));
    const event = Session.events(exit.value)[0] ?? assert.fail();
    const meta = Object(event.data).meta;
    assert.deepEqual(Object.keys(meta.value.a), ["b"]);
    assert.ok(!Object.hasOwn(meta, "polluted"));
    assert.ok(!Object.hasOwn(meta.value.a, "polluted"));
  } finally {
    delete proto.polluted;
  }
});
