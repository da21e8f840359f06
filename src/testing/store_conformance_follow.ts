/**
 * The store conformance suite's follows: stored then live batches, waiting
 * for a session to be created, ending with `until`, the seqs it takes; and
 * `resolveAppend`, which tells a stored batch from an absent one.
 *
 * @internal
 * @module
 */
import assert from "node:assert/strict";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Fiber from "effect/Fiber";
import * as Result from "effect/Result";
import * as Stream from "effect/Stream";
import type { SessionEvent } from "../core/event.ts";
import { SessionSeq } from "../core/seq.ts";
import { Session } from "../session/session.ts";
import { AppendOutcomeUnknown } from "../store/errors.ts";
import { SessionStore } from "../store/store.ts";
import {
  failureOf,
  header,
  range,
  seqsOf,
  type Suite,
  thenFails,
  TURN,
  turnBatches,
} from "./conformance_kit.ts";

/** Registers the follow and `resolveAppend` tests on `suite`. */
export const followTests = (suite: Suite): void => {
  const { test, run, fresh, assertNothingHeld, seeded } = suite;

  test(
    `follow serves stored then live batches`,
    async () => {
      const id = fresh("follow");
      const followed = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        const fiber = yield* Effect.forkChild(
          Stream.runCollect(
            Stream.take(store.follow(id, { fromSeq: TURN - 2 }), 4),
          ),
        );
        yield* store.withSession(id, (writer) =>
          Effect.gen(function* () {
            for (const batch of turnBatches(1).slice(0, 2)) {
              yield* Effect.sleep(Duration.millis(20));
              yield* store.append(writer, batch);
            }
          }));
        return yield* Fiber.join(fiber);
      }));
      assert.deepEqual(seqsOf(followed), range(TURN - 2, TURN + 2));
    },
  );

  /** Collects a follow that must end on its own, within 10 s. */
  const collected = (
    stream: Stream.Stream<SessionEvent, unknown>,
  ): Effect.Effect<ReadonlyArray<SessionEvent>, unknown> =>
    Stream.runCollect(stream).pipe(Effect.timeout(Duration.seconds(10)));

  test(
    `follow waits for a session to be created with waitForSession`,
    async () => {
      const id = fresh("follow-wait");
      const { missing, waited, early } = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        const missing = yield* Effect.exit(
          Stream.runCollect(store.follow(id)),
        );
        const fiber = yield* Effect.forkChild(collected(
          store.follow(id, { waitForSession: true, until: { seq: TURN + 1 } }),
        ));
        // Let the follow look for the session at least once.
        yield* Effect.sleep(Duration.millis(100));
        const early = fiber.pollUnsafe();
        yield* seeded(id);
        yield* store.withSession(
          id,
          (writer) => store.append(writer, turnBatches(1)[0] ?? []),
        );
        return { missing, waited: yield* Fiber.join(fiber), early };
      }));
      thenFails(failureOf(missing), "SessionNotFound", { id });
      assert.equal(early, undefined, "the follow waits");
      assert.deepEqual(seqsOf(waited), range(0, TURN + 2));
    },
  );

  test(
    `follow ends after the event that meets until`,
    async () => {
      const id = fresh("follow-until");
      const results = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id, 2);
        const stored = {
          turnEnd: yield* collected(store.follow(id, { until: "turnEnd" })),
          turn1: yield* collected(
            store.follow(id, { fromSeq: 3, until: { turnEnd: 1 } }),
          ),
          seq: yield* collected(
            store.follow(id, { fromSeq: 2, until: { seq: 5 } }),
          ),
          past: yield* collected(
            store.follow(id, { fromSeq: 3, until: { seq: 1 } }),
          ),
          predicate: yield* collected(
            store.follow(id, {
              fromSeq: TURN,
              until: (event) => event.type === "tool/result",
            }),
          ),
        };
        // Live: a follow from the next seq ends with the turn in progress.
        const fiber = yield* Effect.forkChild(
          collected(store.follow(id, { fromSeq: 2 * TURN, until: "turnEnd" })),
        );
        yield* store.withSession(id, (writer) =>
          Effect.gen(function* () {
            for (const batch of [...turnBatches(2), ...turnBatches(3)]) {
              yield* Effect.sleep(Duration.millis(5));
              yield* store.append(writer, batch);
            }
          }));
        return { ...stored, live: yield* Fiber.join(fiber) };
      }));
      assert.deepEqual(seqsOf(results.turnEnd), range(0, TURN));
      assert.deepEqual(seqsOf(results.turn1), range(3, 2 * TURN));
      assert.deepEqual(seqsOf(results.seq), range(2, 6));
      assert.deepEqual(seqsOf(results.past), []);
      const toolResult = results.predicate.at(-1);
      assert.equal(toolResult?.type, "tool/result");
      assert.deepEqual(
        seqsOf(results.predicate),
        range(TURN, toolResult?.seq === undefined ? 0 : toolResult.seq + 1),
      );
      assert.deepEqual(seqsOf(results.live), range(2 * TURN, 3 * TURN));
      assert.equal(results.live.at(-1)?.type, "turn/end");
    },
  );

  test(
    `follow takes plain non-negative integers as seqs and refuses others`,
    async () => {
      const id = fresh("follow-seq");
      const { plain, refused } = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        const plain = yield* collected(
          store.follow(id, { fromSeq: 1, until: { seq: 2 } }),
        );
        const refused = [];
        for (
          const options of [
            { fromSeq: -1 },
            { fromSeq: 1.5 },
            { fromSeq: Number.NaN },
            { until: { seq: -1 } },
            { until: { seq: 2 ** 53 } },
          ]
        ) {
          refused.push(
            [
              options,
              yield* Effect.exit(Stream.runCollect(store.follow(id, options))),
            ] as const,
          );
        }
        return { plain, refused };
      }));
      assert.deepEqual(seqsOf(plain), [1, 2]);
      for (const [options, exit] of refused) {
        const error = failureOf(exit);
        assert.equal(error._tag, "InvalidSessionSeq", JSON.stringify(options));
      }
    },
  );

  test(
    `resolveAppend tells a stored batch from an absent one, and refuses a log that differs`,
    async () => {
      const id = fresh("resolve");
      const found = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        const session = (yield* Effect.scoped(store.open(id))).session;
        const unknown = (
          batch: ReadonlyArray<SessionEvent>,
          created?: { readonly id: string; readonly createdAt: number },
        ) =>
          new AppendOutcomeUnknown({
            id: created?.id ?? id,
            fromSeq: batch[0]?.seq ?? TURN,
            events: batch.length,
            batch,
            header: created === undefined
              ? undefined
              : { ...header(created.id), createdAt: created.createdAt },
            cause: undefined,
            undo: undefined,
          });
        const stored = Result.getOrThrow(
          Session.events(session, SessionSeq.make(TURN - 2)),
        );
        const next = yield* Session.appendAll(session, turnBatches(1)[0] ?? []);
        const absent = Result.getOrThrow(
          Session.events(next, SessionSeq.make(TURN)),
        );
        const [last] = stored.slice(-1);
        assert.ok(last !== undefined);
        const resolve = (error: AppendOutcomeUnknown) =>
          Effect.result(store.resolveAppend(error));
        // A writer holds the session meanwhile: the answers are the same.
        const writer = yield* store.open(id, { mode: "write" });
        const held = yield* resolve(unknown(stored));
        yield* store.close(writer);
        return {
          stored: yield* resolve(unknown(stored)),
          held,
          absent: yield* resolve(unknown(absent)),
          part: yield* resolve(unknown([last, ...absent])),
          other: yield* resolve(unknown([{ ...last, time: last.time + 1 }])),
          created: yield* resolve(
            unknown(Result.getOrThrow(Session.events(session)), {
              id,
              createdAt: 1,
            }),
          ),
          neverCreated: yield* resolve(
            unknown([], { id: `${id}-never`, createdAt: 1 }),
          ),
          otherHeader: yield* resolve(unknown([], { id, createdAt: 2 })),
        };
      }));
      assert.deepEqual(
        [found.stored, found.held, found.absent, found.neverCreated],
        [
          Result.succeed("stored"),
          Result.succeed("stored"),
          Result.succeed("absent"),
          Result.succeed("absent"),
        ],
      );
      assert.deepEqual(found.created, Result.succeed("stored"));
      thenFails(failureOf(found.part), "StoredLogDiffers", {
        id,
        seq: TURN,
        difference: "part",
      });
      thenFails(failureOf(found.other), "StoredLogDiffers", {
        id,
        seq: TURN - 1,
        difference: "event",
      });
      thenFails(failureOf(found.otherHeader), "StoredLogDiffers", {
        id,
        seq: 0,
        difference: "header",
      });
      assertNothingHeld("after resolveAppend");
    },
  );
};
