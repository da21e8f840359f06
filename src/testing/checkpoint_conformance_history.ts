/**
 * The checkpoint conformance suite's reads through the store: history
 * functions and `withHistory` on a session opened from a checkpoint, a
 * checkpoint written on demand for a log that had none, and corrupted
 * checkpoints that every open detects.
 *
 * @internal
 * @module
 */
import assert from "node:assert/strict";
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { deriveMessages } from "../session/derive.ts";
import { fork } from "../history/fork.ts";
import { lineage, shadowedBy, surfaceAt } from "../history/provenance.ts";
import { Session } from "../session/session.ts";
import { surfaceNodes } from "../surface/surface.ts";
import type { CheckpointSuite } from "./checkpoint_conformance.ts";
import {
  assertSameFold,
  decoded,
  flip,
  forHistories,
  forSamples,
  header,
  historySession,
  int,
  manual,
  nat,
  nats,
  reforged,
  run,
  seed,
  storeEvents,
  use,
} from "./checkpoint_kit.ts";
import { mulberry32 } from "./conformance_kit.ts";

/** Registers the tests of reads through the store on `suite`. */
export const historyTests = (suite: CheckpointSuite): void => {
  const { options, test, fresh, runs, seedOf } = suite;

  test(
    `history functions on a session opened from a checkpoint read what they need through the store`,
    async () => {
      await forHistories(
        runs,
        seedOf(3),
        (random) => ({
          at: nat(random),
          probes: nats(random, 1, 4),
        }),
        async (session, events, { at, probes }) => {
          const cut = 1 + (at % events.length);
          const seqs = probes.map((p) => p % cut);
          const made = options.make(manual);
          const id = fresh("history");
          const prefix = Effect.runSync(
            Session.fromEvents(
              { ...session.header, id },
              events.slice(0, cut),
            ),
          );
          const plain = (value: unknown): unknown =>
            value === undefined ? undefined : JSON.parse(JSON.stringify(value));
          // What each function gives on a session: the same on both.
          const ask = (s: Session, seq: number) =>
            Effect.gen(function* () {
              const before = Result.getOrThrow(surfaceAt(s, seq));
              const child = yield* fork(s, seq, { id: "child" });
              return plain({
                lineage: Result.getOrThrow(lineage(s, seq)),
                shadowedBy: Result.getOrThrow(shadowedBy(s, seq)) ?? null,
                surfaceAt: before && {
                  nodes: surfaceNodes(before),
                  messages: deriveMessages(before),
                },
                fork: Result.getOrThrow(Session.events(child)).slice(0, -1),
                ...Object.fromEntries(
                  Object.entries(options.readers ?? {}).map((
                    [key, read],
                  ) => [key, read(s)]),
                ),
              });
            });
          const got = await use(made, (store) =>
            Effect.gen(function* () {
              yield* seed(id, session.header, events, cut);
              const reader = yield* store.open(id);
              const answers: unknown[] = [];
              for (const seq of seqs) {
                answers.push(
                  yield* store.withHistory(reader, (s) => ask(s, seq)),
                );
              }
              // A surface node is held: one run, on the session as held.
              const last = surfaceNodes(reader.session.surface).at(-1);
              const given: number[] = [];
              const held = yield* store.withHistory(reader, (s) =>
                Effect.sync(() => {
                  given.push(Session.heldFrom(s));
                  return last === undefined
                    ? undefined
                    : Result.getOrThrow(Session.eventAt(s, last))?.seq;
                }));
              // The whole log: runs again on sessions holding more, down
              // to the base.
              const reached: number[] = [];
              yield* store.withHistory(reader, (s) =>
                Effect.sync(() => {
                  reached.push(Session.heldFrom(s));
                  return Result.getOrThrow(Session.events(s)).length;
                }));
              return {
                answers,
                heldFrom: Session.heldFrom(reader.session),
                given,
                held,
                reached,
              };
            }));
          assert.deepEqual(
            got.answers,
            await Promise.all(
              seqs.map((seq) => Effect.runPromise(ask(prefix, seq))),
            ).then((all) => all.map((answer) => plain(answer))),
          );
          assert.deepEqual(got.given, [got.heldFrom]);
          assert.equal(got.held, surfaceNodes(prefix.surface).at(-1));
          assert.equal(got.reached[0], got.heldFrom);
          assert.equal(got.reached.at(-1), 0);
          for (let i = 1; i < got.reached.length; i++) {
            assert.ok((got.reached[i] ?? 0) < (got.reached[i - 1] ?? 0));
          }
        },
      );
    },
  );

  test(
    `withHistory reads older events in growing ranges, from where they are asked for`,
    async () => {
      const made = options.make(manual);
      const id = fresh("growing");
      // Log-only events: a surface node is held wherever it is.
      const events = Array.from({ length: 3000 }, (_, seq) =>
        decoded({
          type: "x/note",
          seq,
          time: seq,
          ignorable: true,
          data: { n: seq },
        }));
      const got = await use(made, (store) =>
        Effect.gen(function* () {
          yield* seed(id, header, events, 3000);
          const reader = yield* store.open(id);
          const trace = (asked: ReadonlyArray<number>) =>
            Effect.gen(function* () {
              const given: number[] = [];
              const found = yield* store.withHistory(reader, (s) =>
                Effect.sync(() => {
                  given.push(Session.heldFrom(s));
                  return asked.map((seq) =>
                    Result.getOrThrow(Session.eventAt(s, seq))?.seq
                  );
                }));
              return { given, found };
            });
          return {
            heldFrom: Session.heldFrom(reader.session),
            near: yield* trace([2990]),
            far: yield* trace([1500]),
            deeper: yield* trace([2990, 1900]),
          };
        }));
      assert.equal(got.heldFrom, 3000);
      // At least 1,024 events a read, then at least twice the read before.
      assert.deepEqual(got.near, { given: [3000, 1976], found: [2990] });
      assert.deepEqual(got.far, { given: [3000, 1500], found: [1500] });
      assert.deepEqual(got.deeper, {
        given: [3000, 1976, 0],
        found: [2990, 1900],
      });
    },
  );

  test(
    `store.checkpoint on a write handle opened without a checkpoint writes one the next open starts from`,
    async () => {
      await forHistories(
        runs,
        seedOf(4),
        (random) => ({
          bound: nat(random, 20),
          probes: nats(random, 0, 6),
        }),
        async (session, events, { bound, probes }) => {
          // A log written without checkpoints (an older release, an
          // import, a copy), then opened for writing the ordinary way.
          const made = options.make({ ...manual, holdLogUpTo: bound });
          const id = fresh("late");
          const got = await use(made, (store) =>
            Effect.gen(function* () {
              yield* storeEvents(store, { ...session.header, id }, events);
              const before = yield* Effect.promise(() => made.get(id));
              const written = yield* Effect.scoped(Effect.gen(function* () {
                const writer = yield* store.open(id, { mode: "write" });
                return yield* store.checkpoint(writer);
              }));
              const reader = yield* Effect.scoped(store.open(id));
              return { before, written, reader };
            }));
          assert.equal(got.before, undefined);
          assert.equal(got.written, events.length);
          assert.equal(got.reader.report.checkpoint, events.length);
          assert.equal(got.reader.report.checkpointRejected, undefined);
          assert.equal(got.reader.report.events, 0);
          assertSameFold(got.reader.session, session, probes);
        },
      );
    },
  );

  test(
    `150 corrupted checkpoints, each opened from: every open is a whole replay's session`,
    async () => {
      const made = options.make(manual);
      const sessions = Array.from(
        { length: 40 },
        (_, i) => historySession(mulberry32(seedOf(6) * 7919 + i)),
      ).filter((s) => Result.getOrThrow(Session.events(s)).length > 4)
        .slice(0, 3);
      assert.equal(sessions.length, 3);
      const seeded: Array<{ id: string; text: string; session: Session }> = [];
      for (const session of sessions) {
        const id = fresh("corrupt");
        const events = Result.getOrThrow(Session.events(session));
        await run(made, seed(id, session.header, events, events.length));
        const text = await made.get(id);
        assert.ok(text !== undefined);
        seeded.push({ id, text, session });
      }
      let rejected = 0;
      await forSamples(
        150,
        seedOf(5),
        (random) => ({
          which: nat(random),
          at: nat(random),
          delta: int(random, -3, 3),
          kind: nat(random, 3),
          probes: nats(random, 0, 4),
        }),
        async ({ which, at, delta, kind, probes }) => {
          const target = seeded[which % seeded.length];
          assert.ok(target !== undefined);
          const text = target.text;
          const corrupted = kind === 0
            ? flip(text, at % text.length)
            : kind === 1
            ? text.slice(0, at % text.length)
            : reforged(text, at, delta === 0 ? 1 : delta, kind === 2);
          await made.set(target.id, corrupted);
          const reader = await use(made, (store) =>
            Effect.gen(function* () {
              return yield* Effect.scoped(store.open(target.id));
            }));
          if (reader.report.checkpointRejected !== undefined) rejected++;
          assertSameFold(reader.session, target.session, probes);
        },
      );
      const first = seeded[0];
      assert.ok(first !== undefined);
      await made.set(first.id, first.text);
      // Every one is caught: none is opened from.
      assert.equal(rejected, 150);
    },
  );
};
