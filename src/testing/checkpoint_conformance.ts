/**
 * The checkpoint part of the store conformance suite: every layer that
 * keeps checkpoints registers it with {@link checkpointConformance}. Its
 * sessions are generated from a seeded PRNG: a failure names the seed and
 * the sample that reproduce it.
 *
 * - for generated sessions (turns, steps, tool calls, compactions, prunes),
 *   a checkpoint written after any prefix, then an open from it, then
 *   appending the rest, gives what replaying the whole log gives: the
 *   surface, the messages, the held events, the stored log, the closers a
 *   repair would write; the open reads only the log after the checkpoint;
 * - a corrupted, truncated, foreign or stale checkpoint is detected: the
 *   open reports it (`checkpointRejected`) and replays the whole log;
 * - the store writes checkpoints on its own every K events and on close,
 *   and with `checkpoints: false` neither writes nor reads one;
 * - a session opened from a checkpoint hands out older events only through
 *   `store.events`, and `store.withHistory` runs `lineage`, `shadowedBy`,
 *   `surfaceAt`, `fork` (and the `readers` given) on it as on the whole
 *   session, reading
 *   only as far back as they look.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { interruptedTurnClosers } from "../session/repair.ts";
import { Session } from "../session/session.ts";
import type { CheckpointOptions } from "../store/checkpoints.ts";
import type { RegisterTest } from "./conformance_kit.ts";
import { defaultTest } from "./conformance_kit.ts";
import {
  assertSameFold,
  assertSameSession,
  batches,
  type CheckpointStore,
  flip,
  forHistories,
  header,
  lines,
  manual,
  nat,
  nats,
  run,
  seed,
  storeEvents,
  texts,
  use,
  whole,
} from "./checkpoint_kit.ts";
import { historyTests } from "./checkpoint_conformance_history.ts";

export type { CheckpointStore };

/** What a backend that keeps checkpoints gives the checkpoint suite. */
export interface CheckpointConformanceOptions {
  /** The layer's name, in test titles. */
  readonly name: string;
  /**
   * A fresh, empty store with the given checkpoint policy, and a way to
   * read and replace its checkpoint texts.
   */
  readonly make: (checkpoints: CheckpointOptions) => CheckpointStore;
  /**
   * More readers of a session, each asked of a session opened from a
   * checkpoint (through `store.withHistory`) and of the whole session: the
   * answers must be equal (the repository passes its HTML view).
   */
  readonly readers?: Readonly<Record<string, (session: Session) => unknown>>;
  /** Generated sessions per property; 12 by default. */
  readonly runs?: number;
  /** Seed of the generated sessions; 1 by default. */
  readonly seed?: number;
  /**
   * Registers one test: `Deno.test` by default; under Node, pass `test` of
   * `node:test`.
   */
  readonly test?: RegisterTest;
}

/** The checkpoint suite as its parts see it. */
export interface CheckpointSuite {
  /** The backend's options. */
  readonly options: CheckpointConformanceOptions;
  /** Registers a test titled after the layer. */
  readonly test: (title: string, body: () => Promise<void>) => void;
  /** A session id no other test uses. */
  readonly fresh: (what: string) => string;
  /** Generated sessions per property. */
  readonly runs: number;
  /** The seed of the `n`-th property's samples. */
  readonly seedOf: (n: number) => number;
}

/**
 * Registers the checkpoint conformance tests for one layer that keeps
 * checkpoints, one test each (see the module doc for what they check).
 * Call it at the top level of a test module; `deno test` then runs them.
 *
 * @param options The layer and its checkpoint texts.
 *
 * @example The memory store
 * ```ts ignore
 * import { Effect, Layer } from "effect";
 * import { makeMemoryStore, SessionStore } from "@palimpsest/session";
 * import { checkpointConformance } from "@palimpsest/session/testing";
 *
 * checkpointConformance({
 *   name: "memory",
 *   make: (checkpoints) => {
 *     const made = Effect.runSync(makeMemoryStore({ checkpoints }));
 *     return {
 *       layer: Layer.succeed(SessionStore, made.store),
 *       get: (id) => Promise.resolve(made.checkpoints.get(id)),
 *       set: (id, text) => Promise.resolve(made.checkpoints.set(id, text)),
 *     };
 *   },
 * });
 * ```
 */
export function checkpointConformance(
  options: CheckpointConformanceOptions,
): void {
  const register = options.test ?? defaultTest;
  let counter = 0;
  const suite: CheckpointSuite = {
    options,
    test: (title, body) => register(`${options.name}: ${title}`, body),
    fresh: (what) => `${what}-${Date.now().toString(36)}-${counter++}`,
    runs: options.runs ?? 12,
    seedOf: (n) => (options.seed ?? 1) * 1000 + n,
  };
  const { test, fresh, runs, seedOf } = suite;

  test(
    `an open from any checkpoint, then the rest, gives a whole replay's session`,
    async () => {
      await forHistories(
        runs,
        seedOf(1),
        (random) => ({
          at: nat(random),
          sizes: nats(random, 0, 6),
        }),
        async (session, events, { at, sizes }) => {
          const cut = 1 + (at % events.length);
          const made = options.make(manual);
          const id = fresh("any");
          const outcome = await use(made, (store) =>
            Effect.gen(function* () {
              yield* seed(id, session.header, events, cut, sizes);
              const writer = yield* store.open(id, { mode: "write" });
              const opened = writer.report;
              // Repair would close what a whole replay says is open.
              const closers = interruptedTurnClosers(
                Result.getOrThrow(Session.events(
                  writer.session,
                  Session.heldFrom(writer.session),
                )),
                { surface: writer.session.surface },
              );
              for (const batch of batches(events.slice(cut), sizes)) {
                yield* store.appendEvents(writer, batch);
              }
              const all = yield* store.events(writer);
              yield* store.close(writer);
              const reread = yield* whole(id);
              return { opened, closers, live: writer.session, all, reread };
            }));
          assert.equal(outcome.opened.checkpoint, cut);
          assert.equal(outcome.opened.events, 0);
          assert.equal(outcome.opened.checkpointRejected, undefined);
          const prefix = Effect.runSync(
            Session.fromEvents(session.header, events.slice(0, cut)),
          );
          assert.deepEqual(
            lines(outcome.closers),
            lines(
              interruptedTurnClosers(
                Result.getOrThrow(Session.events(prefix)),
              ),
            ),
          );
          assertSameSession(outcome.live, session);
          assert.deepEqual(lines(outcome.all), lines(events));
          assert.deepEqual(
            lines(Result.getOrThrow(Session.events(outcome.reread.session))),
            lines(events),
          );
        },
      );
    },
  );

  test(
    `a long log opened without a checkpoint holds its surface and open work, and folds as the whole log`,
    async () => {
      await forHistories(
        runs,
        seedOf(2),
        (random) => ({
          bound: nat(random, 40),
          probes: nats(random, 0, 6),
        }),
        async (session, events, { bound, probes }) => {
          const made = options.make({ ...manual, holdLogUpTo: bound });
          const id = fresh("lean");
          const got = await use(made, (store) =>
            Effect.gen(function* () {
              yield* storeEvents(store, { ...session.header, id }, events);
              const reader = yield* store.open(id);
              const writer = yield* store.open(id, { mode: "write" });
              return {
                reader,
                writer,
                all: yield* store.events(reader),
              };
            }));
          for (const handle of [got.reader, got.writer]) {
            assert.equal(handle.report.events, events.length);
            assert.equal(handle.report.checkpoint, undefined);
            assertSameFold(handle.session, session, probes);
            if (events.length <= bound) {
              assert.equal(Session.heldFrom(handle.session), 0);
            }
          }
          assert.deepEqual(lines(got.all), lines(events));
        },
      );
    },
  );

  test(
    `a corrupted, truncated, foreign or stale checkpoint is reported and the whole log replayed`,
    async () => {
      const made = options.make(manual);
      const events = texts("t", 12);
      const id = fresh("damaged");
      const other = fresh("other");
      // The same header and length, another history: a stale checkpoint.
      const twin = options.make(manual);
      await run(twin, seed(id, header, texts("u", 12), 9));
      const staleText = await twin.get(id);
      await run(made, seed(id, header, events, 9));
      await run(made, seed(other, header, events, 9));
      const good = await made.get(id);
      const foreign = await made.get(other);
      assert.ok(good !== undefined && foreign !== undefined);
      assert.ok(staleText !== undefined);
      const cases: ReadonlyArray<readonly [string, string]> = [
        // One character of the body changed.
        ["unreadable", flip(good, Math.floor(good.length * 0.6))],
        ["unreadable", good.slice(0, Math.floor(good.length / 2))],
        ["unreadable", ""],
        ["foreign", foreign],
        ["stale", staleText],
        // Larger than any checkpoint of this log: not read at all.
        ["unreadable", `${good.slice(0, 65)}${" ".repeat(200_000)}\n`],
      ];
      for (const [problem, text] of cases) {
        await made.set(id, text);
        const reader = await use(made, (store) =>
          Effect.gen(function* () {
            return yield* store.open(id);
          }));
        assert.equal(reader.report.checkpointRejected?.problem, problem);
        if (text.length > 100_000) {
          assert.match(reader.report.checkpointRejected?.detail ?? "", /over/);
        }
        assert.equal(reader.report.checkpoint, undefined);
        assert.equal(reader.report.events, 9);
        assert.equal(Session.heldFrom(reader.session), 0);
        assert.deepEqual(
          lines(Result.getOrThrow(Session.events(reader.session))),
          lines(events.slice(0, 9)),
        );
      }
      // A stale checkpoint past the end of the log: cut back, say.
      await made.set(id, good);
      await run(made, seed(fresh("short"), header, events, 3));
      const shorter = fresh("shorter");
      await run(made, seed(shorter, header, events, 3));
      await made.set(
        shorter,
        good.replace(`"id":"${id}"`, `"id":"${shorter}"`),
      );
      const cut = await use(made, (store) =>
        Effect.gen(function* () {
          return yield* store.open(shorter);
        }));
      assert.notEqual(cut.report.checkpointRejected, undefined);
      assert.equal(cut.report.events, 3);
    },
  );

  test(
    `the store writes checkpoints every K events and on close, and none when off`,
    async () => {
      const made = options.make({ everyEvents: 5, onClose: 0, holdLogUpTo: 0 });
      const id = fresh("auto");
      const events = texts("a", 14);
      const seen = await use(made, (store) =>
        Effect.gen(function* () {
          const reports: Array<number | undefined> = [];
          yield* Effect.scoped(Effect.gen(function* () {
            const writer = yield* store.create({ ...header, id });
            for (const event of events.slice(0, 12)) {
              yield* store.appendEvents(writer, [event]);
            }
            reports.push(
              (yield* Effect.scoped(store.open(id))).report.checkpoint,
            );
          }));
          // Closed at 12: a checkpoint there.
          const reader = yield* Effect.scoped(store.open(id));
          reports.push(reader.report.checkpoint, reader.report.events);
          yield* Effect.scoped(Effect.gen(function* () {
            const writer = yield* store.open(id, { mode: "write" });
            yield* store.appendEvents(writer, events.slice(12));
          }));
          reports.push(
            (yield* Effect.scoped(store.open(id))).report.checkpoint,
          );
          return reports;
        }));
      assert.deepEqual(seen, [10, 12, 0, 14]);

      const off = options.make(false);
      const quiet = fresh("off");
      await run(off, seed(quiet, header, events, 0));
      await use(off, (store) =>
        Effect.gen(function* () {
          yield* Effect.scoped(Effect.gen(function* () {
            const writer = yield* store.open(quiet, { mode: "write" });
            yield* store.appendEvents(writer, events);
          }));
        }));
      assert.equal(await off.get(quiet), undefined);
    },
  );

  test(
    `a session opened from a checkpoint reads older events through the store`,
    async () => {
      const made = options.make(manual);
      const id = fresh("held");
      const events = texts("h", 10);
      const got = await use(made, (store) =>
        Effect.gen(function* () {
          yield* seed(id, header, events, 7);
          const reader = yield* store.open(id);
          // The read returns the failure; it does not throw.
          const whole = Session.events(reader.session);
          const thrown = Result.isFailure(whole) ? whole.failure : undefined;
          // Storing it elsewhere would need every event: refused, typed.
          const copied = yield* Effect.flip(Effect.scoped(store.create({
            ...reader.session,
            header: { ...reader.session.header, id: fresh("copy") },
          })));
          return {
            copied,
            heldFrom: Session.heldFrom(reader.session),
            thrown,
            all: yield* store.events(reader),
            some: yield* store.events(reader, { fromSeq: 2, toSeq: 5 }),
            held: yield* store.events(reader, { fromSeq: 7 }),
          };
        }));
      assert.equal(got.heldFrom, 7);
      assert.equal(got.copied._tag, "EventsNotHeld");
      assert.equal(got.thrown?._tag, "EventsNotHeld");
      assert.deepEqual(lines(got.all), lines(events.slice(0, 7)));
      assert.deepEqual(lines(got.some), lines(events.slice(2, 5)));
      assert.deepEqual(got.held, []);
    },
  );

  historyTests(suite);
}
