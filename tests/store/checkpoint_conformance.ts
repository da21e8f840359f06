/**
 * The checkpoint part of the store conformance suite: every layer that
 * keeps checkpoints registers it with {@link checkpointConformance}.
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
 *   `surfaceAt`, `fork` and the view on it as on the whole session, reading
 *   only as far back as they look.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fc from "fast-check";
import {
  deriveMessages,
  fork,
  lineage,
  Session,
  type SessionEvent,
  SessionStore,
  shadowedBy,
  surfaceAt,
} from "@palimpsest/session";
import { renderSessionHtml } from "@palimpsest/session/view";
import {
  interruptedTurnClosers,
  surfaceNodes,
} from "@palimpsest/session/internal";
import type { CheckpointOptions } from "@palimpsest/session";
import { Effect, type Layer, ManagedRuntime, Result, type Scope } from "effect";
import { historySessionArb } from "../_helpers/session_gen.ts";
import { decoded } from "../_helpers/build.ts";
import {
  assertSameFold,
  assertSameSession,
  lines,
} from "../_helpers/checkpoints.ts";

/** A store with a checkpoint policy, and a way to its checkpoint texts. */
export interface CheckpointStore {
  /** The store's layer; every build reaches the same storage. */
  readonly layer: Layer.Layer<SessionStore, unknown>;
  /** The stored checkpoint text of a session, if any. */
  readonly get: (id: string) => Promise<string | undefined>;
  /** Replaces a session's checkpoint text. */
  readonly set: (id: string, text: string) => Promise<void>;
}

/** What a layer gives the checkpoint suite. */
export interface CheckpointConformanceOptions {
  /** The layer's name, in test titles. */
  readonly name: string;
  /** A fresh, empty store with the given checkpoint policy. */
  readonly make: (checkpoints: CheckpointOptions) => CheckpointStore;
}

/** Splits `events` into batches of 1..4, the way a harness appends. */
const batches = (
  events: ReadonlyArray<SessionEvent>,
  sizes: ReadonlyArray<number>,
): SessionEvent[][] => {
  const out: SessionEvent[][] = [];
  let at = 0;
  for (let i = 0; at < events.length; i++) {
    const n = 1 + ((sizes[i % Math.max(1, sizes.length)] ?? 0) % 4);
    out.push(events.slice(at, at + n));
    at += n;
  }
  return out;
};

/** `text` with the character at `at` changed. */
const flip = (text: string, at: number): string =>
  `${text.slice(0, at)}${text[at] === "a" ? "b" : "a"}${text.slice(at + 1)}`;

const manual: CheckpointOptions = {
  everyEvents: Number.MAX_SAFE_INTEGER,
  onClose: false,
};

/**
 * Registers the checkpoint tests for one layer.
 *
 * @param options The layer.
 */
export const checkpointConformance = (
  options: CheckpointConformanceOptions,
): void => {
  const { name } = options;
  let counter = 0;
  const fresh = (what: string) =>
    `${what}-${Date.now().toString(36)}-${counter++}`;
  const run = async <A, E>(
    store: CheckpointStore,
    program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
  ): Promise<A> => {
    const runtime = ManagedRuntime.make(store.layer);
    try {
      return await runtime.runPromise(Effect.scoped(program));
    } finally {
      await runtime.dispose();
    }
  };
  const use = <A, E>(
    made: CheckpointStore,
    f: (store: SessionStore) => Effect.Effect<A, E, SessionStore | Scope.Scope>,
  ): Promise<A> =>
    run(
      made,
      Effect.gen(function* () {
        return yield* f(yield* SessionStore);
      }),
    );
  /** Stores `events` as `id` in batches, with a checkpoint after `cut`. */
  const seed = (
    id: string,
    header: Session["header"],
    events: ReadonlyArray<SessionEvent>,
    cut: number,
    sizes: ReadonlyArray<number> = [0],
  ) =>
    Effect.gen(function* () {
      const store = yield* SessionStore;
      yield* Effect.scoped(Effect.gen(function* () {
        const writer = yield* store.create({ ...header, id });
        for (const batch of batches(events.slice(0, cut), sizes)) {
          yield* store.appendEvents(writer, batch);
        }
        const at = yield* store.checkpoint(writer);
        assert.equal(at, cut === 0 ? undefined : cut);
      }));
    });
  const whole = (id: string) =>
    Effect.gen(function* () {
      const store = yield* SessionStore;
      return yield* Effect.scoped(store.open(id, { wholeLog: true }));
    });

  Deno.test(
    `${name}: an open from any checkpoint, then the rest, gives a whole replay's session`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          historySessionArb,
          fc.nat(),
          fc.array(fc.nat(), { maxLength: 6 }),
          async (session, at, sizes) => {
            const events = Result.getOrThrow(Session.events(session));
            if (events.length === 0) return;
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
        ),
        { numRuns: 12 },
      );
    },
  );

  Deno.test(
    `${name}: a long log opened without a checkpoint holds its surface and open work, and folds as the whole log`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          historySessionArb,
          fc.nat({ max: 40 }),
          fc.array(fc.nat(), { maxLength: 6 }),
          async (session, bound, probes) => {
            const events = Result.getOrThrow(Session.events(session));
            if (events.length === 0) return;
            const made = options.make({ ...manual, holdLogUpTo: bound });
            const id = fresh("lean");
            const got = await use(made, (store) =>
              Effect.gen(function* () {
                yield* Effect.scoped(Effect.gen(function* () {
                  const writer = yield* store.create({
                    ...session.header,
                    id,
                  });
                  yield* store.appendEvents(writer, events);
                }));
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
        ),
        { numRuns: 12 },
      );
    },
  );

  const user = (seq: number, text: string): SessionEvent =>
    decoded({
      type: "user/message",
      seq,
      time: seq,
      surfaceOp: "append",
      data: {
        id: `u${seq}`,
        role: "user",
        content: [{ type: "text", text }],
        source: { kind: "user" },
      },
    });
  const texts = (prefix: string, n: number): SessionEvent[] =>
    Array.from({ length: n }, (_, seq) => user(seq, `${prefix}${seq}`));
  const header = { id: "x", createdAt: 1, isSeeded: false };

  Deno.test(
    `${name}: a corrupted, truncated, foreign or stale checkpoint is reported and the whole log replayed`,
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

  Deno.test(
    `${name}: the store writes checkpoints every K events and on close, and none when off`,
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

  Deno.test(
    `${name}: a session opened from a checkpoint reads older events through the store`,
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
      assert.equal(
        (got.thrown as { _tag?: string } | undefined)?._tag,
        "EventsNotHeld",
      );
      assert.deepEqual(lines(got.all), lines(events.slice(0, 7)));
      assert.deepEqual(lines(got.some), lines(events.slice(2, 5)));
      assert.deepEqual(got.held, []);
    },
  );

  Deno.test(
    `${name}: history functions on a session opened from a checkpoint read what they need through the store`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          historySessionArb,
          fc.nat(),
          fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
          async (session, at, probes) => {
            const events = Result.getOrThrow(Session.events(session));
            if (events.length === 0) return;
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
              value === undefined
                ? undefined
                : JSON.parse(JSON.stringify(value));
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
                  view: Result.getOrThrow(renderSessionHtml(s)),
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
        ),
        { numRuns: 12 },
      );
    },
  );

  Deno.test(
    `${name}: withHistory reads older events in growing ranges, from where they are asked for`,
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

  Deno.test(
    `${name}: store.checkpoint on a write handle opened without a checkpoint writes one the next open starts from`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          historySessionArb,
          fc.nat({ max: 20 }),
          fc.array(fc.nat(), { maxLength: 6 }),
          async (session, bound, probes) => {
            const events = Result.getOrThrow(Session.events(session));
            if (events.length === 0) return;
            // A log written without checkpoints (an older release, an
            // import, a copy), then opened for writing the ordinary way.
            const made = options.make({ ...manual, holdLogUpTo: bound });
            const id = fresh("late");
            const got = await use(made, (store) =>
              Effect.gen(function* () {
                yield* Effect.scoped(Effect.gen(function* () {
                  const writer = yield* store.create({
                    ...session.header,
                    id,
                  });
                  yield* store.appendEvents(writer, events);
                }));
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
        ),
        { numRuns: 12 },
      );
    },
  );

  Deno.test(
    `${name}: 150 corrupted checkpoints, each opened from: every open is a whole replay's session`,
    async () => {
      const made = options.make(manual);
      const sessions = fc.sample(historySessionArb, { numRuns: 40, seed: 7 })
        .filter((s) => Result.getOrThrow(Session.events(s)).length > 4).slice(
          0,
          3,
        );
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
      await fc.assert(
        fc.asyncProperty(
          fc.nat(),
          fc.nat(),
          fc.integer({ min: -3, max: 3 }),
          fc.nat({ max: 3 }),
          fc.array(fc.nat(), { maxLength: 4 }),
          async (which, at, delta, kind, probes) => {
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
        ),
        { numRuns: 150 },
      );
      await made.set(seeded[0]!.id, seeded[0]!.text);
      // Every one is caught: none is opened from.
      assert.equal(rejected, 150);
    },
  );
};

/**
 * A checkpoint with one number of its references moved by `delta` and its
 * hash made right again: what a writer with a wrong line table would
 * write. `lines`: a line reference (for a file; else the first held seq's
 * line or, for rows, an order entry is left alone and `heldFrom` moved).
 */
const reforged = (
  text: string,
  at: number,
  delta: number,
  lines: boolean,
): string => {
  const body = JSON.parse(text.slice(65, -1)) as Record<string, unknown>;
  const refs = body.lines as number[] | null;
  if (lines && refs !== null && refs.length > 0) {
    const i = at % refs.length;
    refs[i] = (refs[i] ?? 0) + delta;
  } else if (body.heldBytes !== null && typeof body.heldBytes === "number") {
    body.heldBytes = body.heldBytes + delta;
  } else {
    body.lastBytes = Math.max(0, (body.lastBytes as number) + delta);
    body.last = "0".repeat(64);
  }
  const json = JSON.stringify(body);
  return `${createHash("sha256").update(json).digest("hex")}\n${json}\n`;
};
