import assert from "node:assert/strict";
import { Cause, Effect, Equal, Exit, Result } from "effect";
import {
  applyEvent,
  emptySurface,
  replay,
  type SessionEvent,
} from "@palimpsest/session";
import { decodeEvent } from "@palimpsest/session/schema";
import { decodeEventResult } from "@palimpsest/session/schema";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { CHECKED_EFFECT_VERSION } from "../../src/core/lazy_exit.ts";

/** The version in the package.json of the effect these tests run on. */
const loadedEffectVersion = (): string => {
  let dir = path.dirname(fileURLToPath(import.meta.resolve("effect")));
  for (;;) {
    const file = path.join(dir, "package.json");
    if (fs.existsSync(file)) {
      const json: unknown = JSON.parse(fs.readFileSync(file, "utf8"));
      if (
        typeof json === "object" && json !== null && "name" in json &&
        json.name === "effect" && "version" in json &&
        typeof json.version === "string"
      ) return json.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("no package.json of effect found");
    dir = parent;
  }
};

/** A turn/start value whose every read of `seq` is counted. */
const counted = () => {
  const reads = { count: 0 };
  const value = {
    type: "turn/start",
    time: 0,
    data: { turn: 0 },
    get seq() {
      reads.count++;
      return 0;
    },
  };
  return { reads, value };
};

Deno.test("decodeEvent does its work when run, not when built", () => {
  const { reads, value } = counted();
  const effect = decodeEvent(value);
  assert.equal(reads.count, 0);
  const event = Effect.runSync(effect);
  assert.ok(reads.count > 0);
  assert.equal(event.seq, 0);
});

Deno.test("applyEvent does its work when run, not when built", () => {
  const event: SessionEvent = Result.getOrThrow(
    decodeEventResult({
      type: "turn/start",
      seq: 0,
      time: 0,
      data: { turn: 0 },
    }),
  );
  const reads = { count: 0 };
  const watched = new Proxy(event, {
    get(target, key, receiver) {
      reads.count++;
      return Reflect.get(target, key, receiver);
    },
  });
  const effect = applyEvent(emptySurface, watched);
  assert.equal(reads.count, 0);
  const surface = Effect.runSync(effect);
  assert.ok(reads.count > 0);
  assert.equal(surface.nextSeq, 1);
});

Deno.test("the lazy Effects behave as the Exit they stand for", async (t) => {
  const line = { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } };
  const bad = { type: "turn/start", seq: -1, time: 0, data: { turn: 0 } };

  await t.step("composed without being run, they do no work", () => {
    const { reads, value } = counted();
    const composed = Effect.flatMap(
      decodeEvent(value),
      (event) => applyEvent(emptySurface, event),
    );
    const replayed = Effect.flatMap(
      Effect.all([decodeEvent(value)]),
      (events) => replay(events),
    );
    assert.equal(reads.count, 0);
    assert.equal(Effect.runSync(composed).nextSeq, 1);
    assert.equal(Effect.runSync(replayed).nextSeq, 1);
    assert.ok(reads.count > 0);
  });

  await t.step(
    "in a generator, with Effect.exit, and as a promise",
    async () => {
      const program = Effect.gen(function* () {
        const event = yield* decodeEvent(line);
        const surface = yield* applyEvent(emptySurface, event);
        const failed = yield* Effect.exit(decodeEvent(bad));
        return { surface, failed };
      });
      const { surface, failed } = Effect.runSync(program);
      assert.equal(surface.nextSeq, 1);
      assert.ok(Exit.isFailure(failed));
      assert.equal(
        Cause.findErrorOption(failed.cause).pipe(
          (o) => o._tag === "Some" ? o.value._tag : "none",
        ),
        "InvalidSessionSeq",
      );
      const event = await Effect.runPromise(decodeEvent(line));
      assert.equal(event.seq, 0);
    },
  );

  await t.step("failures are typed and can be caught by tag", () => {
    const tag = Effect.runSync(
      decodeEvent(bad).pipe(
        Effect.map(() => "decoded"),
        Effect.catchTag("InvalidSessionSeq", (e) => Effect.succeed(e._tag)),
      ),
    );
    assert.equal(tag, "InvalidSessionSeq");
    const exit = Effect.runSyncExit(decodeEvent(bad));
    assert.ok(Exit.isExit(exit) && Exit.isFailure(exit));
    assert.ok(Effect.isEffect(decodeEvent(line)));
  });

  await t.step(
    "read member by member, they are the Exit they stand for",
    () => {
      for (const value of [line, bad]) {
        const real = Effect.runSyncExit(
          Effect.fromResult(decodeEventResult(value)),
        );
        // `_tag` and `value` first (what a runner reads), then the rest.
        const lazy = decodeEvent(value) as unknown as Exit.Exit<
          unknown,
          unknown
        >;
        assert.equal(lazy._tag, real._tag);
        assert.deepEqual(
          Exit.isSuccess(lazy) ? lazy.value : undefined,
          Exit.isSuccess(real) ? real.value : undefined,
        );
        assert.ok(Equal.equals(lazy, real));
        // A member other than those two first.
        const other = decodeEvent(value) as unknown as Exit.Exit<
          unknown,
          unknown
        >;
        assert.ok(Equal.equals(other, real));
        assert.equal(other._tag, real._tag);
      }
    },
  );

  await t.step("read by its own work while it runs, it dies there only", () => {
    // Run inside the work it stands for, the Effect is read there and then.
    let inner: { tag: string; dies: boolean } | undefined;
    const value = {
      ...line,
      get seq(): number {
        const exit = Effect.runSyncExit(effect);
        inner ??= {
          tag: exit._tag,
          dies: Exit.isFailure(exit) && Cause.hasDies(exit.cause),
        };
        return 0;
      },
    };
    const effect = decodeEvent(value);
    const outer = Effect.runSync(effect);
    assert.deepEqual(inner, { tag: "Failure", dies: true });
    assert.equal(outer.seq, 0);
    assert.ok(Exit.isSuccess(Effect.runSyncExit(effect)));
  });

  await t.step("run twice, they give the same outcome", () => {
    const effect = decodeEvent(line);
    const a = Effect.runSync(effect);
    const b = Effect.runSync(effect);
    assert.equal(a, b);
    assert.ok(Equal.equals(Effect.runSyncExit(effect), Exit.succeed(a)));
  });

  await t.step("a throwing input dies, as inside Effect.suspend", () => {
    const hostile = {
      ...line,
      get seq(): number {
        throw new Error("boom");
      },
    };
    const exit = Effect.runSyncExit(decodeEvent(hostile));
    assert.ok(Exit.isFailure(exit) && Cause.hasDies(exit.cause));
    const suspended = Effect.runSyncExit(
      Effect.suspend(() => Effect.fromResult(decodeEventResult(hostile))),
    );
    assert.ok(Exit.isFailure(suspended) && Cause.hasDies(suspended.cause));
  });
});

Deno.test("the lazy Exit runs only on the effect version it was checked against", () => {
  // src/core/lazy_exit.ts copies the members of effect's private Exit prototypes:
  // on another version, follow docs/architecture.md ("The lazy Exit") before
  // changing the checked version.
  assert.equal(loadedEffectVersion(), CHECKED_EFFECT_VERSION);
});
