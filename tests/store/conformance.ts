/**
 * The store conformance suite: every `SessionStore` layer registers it with
 * {@link storeConformance} and must pass it. It assumes nothing about how a
 * layer stores sessions; what needs another process or a look at the
 * layer's resources comes in through {@link ConformanceOptions}.
 *
 * - no-clobber create (also from a whole session, a fork);
 * - an append batch is all or nothing, and visible to a new reader when it
 *   resolves; `append` returns the stored events; `update` stores exactly
 *   what a history operation appended;
 * - one writer per session: in this process, and (with `spawnWriter`) in
 *   another process, including a writer killed with SIGKILL whose claim is
 *   then taken over, and 20 writer processes racing for one session
 *   (exactly one writes, no gap, no duplicate);
 * - readers see only committed events (a snapshot at open; a refused batch
 *   is never seen, by readers or followers);
 * - seqs stay dense under concurrent appends on one handle;
 * - bad ids are refused by every operation;
 * - interruption at any point of every scoped operation leaves nothing
 *   held: the session can be opened for writing again, it opens for
 *   reading, and (with `held`) the layer reports no resource in use;
 * - `follow` serves stored events and then live batches, from `fromSeq`;
 *   with `waitForSession` it waits for a session to be created; with
 *   `until` it ends after the event that meets it (a turn's end, a seq, a
 *   predicate); a seq given that is not a non-negative integer is
 *   `InvalidSessionSeq`.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  AppendOutcomeUnknown,
  compact,
  fork,
  Session,
  type SessionEvent,
  type SessionHandle,
  SessionSeq,
  SessionStore,
} from "@palimpsest/session";
import {
  Cause,
  Duration,
  Effect,
  Exit,
  Fiber,
  type Layer,
  ManagedRuntime,
  Result,
  type Scope,
  Stream,
} from "effect";
import { mulberry32 } from "../_helpers/workload.ts";
import {
  type LineProcess,
  spawnLineProcess,
} from "../_helpers/line_process.ts";
import { drafts, turnBatches } from "../_helpers/build.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";

/** A writer in another process, speaking `writer_process.ts`'s protocol. */
export type WriterProcess = LineProcess;

/** What a layer gives the suite. */
export interface ConformanceOptions {
  /** The layer's name, in test titles. */
  readonly name: string;
  /**
   * The layer. Each test builds it once and runs against that store; with
   * `spawnWriter`, every build must reach the storage the writers reach.
   */
  readonly layer: () => Layer.Layer<SessionStore, unknown>;
  /**
   * Starts a writer process over the same storage with the arguments of
   * `writer_process.ts` (`MODE ID [N]`); absent for a store that lives in
   * one process, whose cross-process tests are then not registered.
   */
  readonly spawnWriter?: (args: ReadonlyArray<string>) => WriterProcess;
  /**
   * The layer's resources in use (descriptors, lock files, connections),
   * as descriptions; empty when nothing is held. Checked after every
   * interruption.
   */
  readonly held?: () => ReadonlyArray<string>;
  /** Seed of the interruption points; 1 by default. */
  readonly seed?: number;
}

const header = (id: string) => ({ id, createdAt: 1, isSeeded: false });

/** Events in one turn of the workload. */
const TURN = turnBatches(0).flat().length;

/** Runs `f` with the store. */
const withStore = <A, E, R>(
  f: (store: SessionStore) => Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R | SessionStore> =>
  Effect.gen(function* () {
    return yield* f(yield* SessionStore);
  });

const seqsOf = (events: ReadonlyArray<SessionEvent>): number[] =>
  events.map((e) => e.seq);

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from }, (_, i) => from + i);

/** Spawns a writer process from a command; for `spawnWriter`. */
export const spawnDenoWriter = (
  script: string,
  prefix: ReadonlyArray<string>,
  args: ReadonlyArray<string>,
): WriterProcess =>
  spawnLineProcess(Deno.execPath(), ["run", "-A", script, ...prefix, ...args]);

/**
 * Registers the conformance tests for one layer.
 *
 * @param options The layer and what it needs.
 */
export const storeConformance = (options: ConformanceOptions): void => {
  const { name } = options;
  let counter = 0;
  const fresh = (what: string) =>
    `${what}-${Date.now().toString(36)}-${counter++}`;
  // Each test builds the layer once and runs all its programs against that
  // store (a memory store lives as long as its runtime).
  let runtime: ManagedRuntime.ManagedRuntime<SessionStore, unknown> | undefined;
  const test = (title: string, body: () => Promise<void>): void => {
    Deno.test(
      `${name}: ${title}`,
      async () => {
        runtime = ManagedRuntime.make(options.layer());
        try {
          await body();
        } finally {
          await runtime.dispose();
          runtime = undefined;
        }
      },
    );
  };
  const run = <A, E>(
    program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
  ): Promise<A> => {
    assert.ok(runtime !== undefined);
    return runtime.runPromise(Effect.scoped(program));
  };
  const exitOf = <A, E>(
    program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
  ): Promise<Exit.Exit<A, E | unknown>> => {
    assert.ok(runtime !== undefined);
    return runtime.runPromise(Effect.exit(Effect.scoped(program)));
  };
  const assertNothingHeld = (when: string) => {
    const held = options.held?.() ?? [];
    assert.deepEqual(held, [], `${when}: still held`);
  };
  const seeded = (id: string, turns = 1) =>
    Effect.gen(function* () {
      const store = yield* SessionStore;
      yield* Effect.scoped(Effect.gen(function* () {
        const writer = yield* store.create(header(id));
        for (let turn = 0; turn < turns; turn++) {
          for (const batch of turnBatches(turn)) {
            yield* store.append(writer, batch);
          }
        }
      }));
    });
  const readAll = (id: string) =>
    Effect.gen(function* () {
      const store = yield* SessionStore;
      const reader = yield* Effect.scoped(store.open(id));
      return Result.getOrThrow(Session.events(reader.session));
    });

  test(
    `create never replaces a stored session`,
    async () => {
      const id = fresh("clobber");
      const [second, events] = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        const second = yield* Effect.exit(
          Effect.scoped(store.create(header(id))),
        );
        return [second, yield* readAll(id)] as const;
      }));
      thenFails(failureOf(second), "SessionAlreadyExists", { id });
      assert.equal(events.length, TURN);
      assertNothingHeld("after create");
    },
  );

  test(
    `create stores a whole session (a fork)`,
    async () => {
      const parentId = fresh("parent");
      const childId = fresh("child");
      const [forked, events] = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(parentId);
        const parent = (yield* Effect.scoped(store.open(parentId))).session;
        const child = yield* fork(parent, undefined, { id: childId });
        yield* Effect.scoped(store.create(child));
        return [child, yield* readAll(childId)] as const;
      }));
      assert.deepEqual(events, Result.getOrThrow(Session.events(forked)));
    },
  );

  test(
    `a batch is all or nothing`,
    async () => {
      const id = fresh("batch");
      const result = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        return yield* store.withSession(
          id,
          (writer) =>
            Effect.gen(function* () {
              const follower = yield* Effect.forkChild(
                Stream.runCollect(
                  Stream.take(store.follow(id, { fromSeq: TURN }), 1),
                ),
              );
              const before = writer.session;
              const refused = yield* Effect.exit(store.append(writer, [
                drafts.user("ok", "fine"),
                // A replacement of seq 0 (turn/start, never on the surface):
                // the fold refuses it after the first draft was accepted.
                {
                  type: "user/message",
                  surfaceOp: {
                    op: "replace",
                    startSeq: SessionSeq.make(0),
                    endSeq: SessionSeq.make(0),
                  },
                  sourceEventSeqs: [SessionSeq.make(0)],
                  data: {
                    id: "bad",
                    role: "user",
                    content: [],
                    source: { kind: "user" },
                  },
                },
              ]));
              const unchanged = writer.session === before;
              const reader = yield* readAll(id);
              const stored = yield* store.append(writer, [
                drafts.user("next", "x"),
              ]);
              const followed = yield* Fiber.join(follower);
              return { refused, unchanged, reader, stored, followed };
            }),
        );
      }));
      thenFails(failureOf(result.refused), "ReplaceStartNotOnSurface");
      assert.ok(result.unchanged);
      assert.equal(result.reader.length, TURN);
      assert.deepEqual(seqsOf(result.stored.events), [TURN]);
      assert.deepEqual(
        result.followed.map((e) => [e.seq, e.type]),
        [[TURN, "user/message"]],
      );
    },
  );

  test(
    `a compaction over a call no result answered is refused, and nothing is stored`,
    async () => {
      const id = fresh("unanswered");
      const result = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        return yield* store.withSession(
          id,
          (writer) =>
            Effect.gen(function* () {
              const { events } = yield* store.append(writer, [
                drafts.assistant("open", "", ["c-open"]),
              ]);
              const call = events[0]?.seq ?? SessionSeq.make(0);
              const refused = yield* Effect.exit(
                store.update(writer, (session) =>
                  compact(session, {
                    startSeq: call,
                    endSeq: call,
                    summary: "s",
                    compactionId: "k",
                  })),
              );
              // Once answered, the call compacts with its result.
              const answered = yield* store.append(writer, [
                drafts.toolResult("c-open", "done"),
              ]);
              const result = answered.events[0]?.seq ?? call;
              const compacted = yield* store.update(writer, (session) =>
                compact(session, {
                  startSeq: call,
                  endSeq: result,
                  summary: "s",
                  compactionId: "k",
                }));
              return { call, refused, compacted, reader: yield* readAll(id) };
            }),
        );
      }));
      thenFails(failureOf(result.refused), "ReplaceShadowsUnansweredCall", {
        callSeq: result.call,
        callIds: ["c-open"],
      });
      // The refused batch left nothing: the result came right after the call.
      assert.deepEqual(
        result.reader.slice(TURN).map((e) => e.type),
        [
          "assistant/message",
          "tool/result",
          "compaction/start",
          "compaction/summary",
          "user/message",
          "compaction/end",
        ],
      );
      assert.equal(result.compacted.events.length, 4);
    },
  );

  test(
    `a stored batch is returned and seen by a new reader`,
    async () => {
      const id = fresh("durable");
      const { stored, events } = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        const writer = yield* store.create(header(id));
        const stored = yield* store.append(writer, turnBatches(0)[0] ?? []);
        return { stored, events: yield* readAll(id) };
      }));
      assert.deepEqual(seqsOf(stored.events), [0, 1, 2]);
      assert.deepEqual(events, stored.events);
      assert.deepEqual(
        Result.getOrThrow(Session.events(stored.session)),
        stored.events,
      );
    },
  );

  test(
    `update stores exactly what a history operation appended`,
    async () => {
      const id = fresh("update");
      const other = fresh("other");
      const { compacted, events, foreign } = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id, 2);
        return yield* store.withSession(
          id,
          (writer) =>
            Effect.gen(function* () {
              const before = Session.nextSeq(writer.session);
              const compacted = yield* store.update(writer, (s) =>
                compact(s, {
                  startSeq: SessionSeq.make(2),
                  endSeq: SessionSeq.make(5),
                  summary: "earlier",
                  compactionId: "c1",
                }));
              assert.equal(compacted.events[0]?.seq, before);
              const foreign = yield* Effect.exit(
                store.update(
                  writer,
                  () => Effect.succeed(Session.make(header(other))),
                ),
              );
              return { compacted, events: yield* readAll(id), foreign };
            }),
        );
      }));
      assert.deepEqual(
        compacted.events.map((e) => e.type),
        [
          "compaction/start",
          "compaction/summary",
          "user/message",
          "compaction/end",
        ],
      );
      assert.deepEqual(events.slice(-4), compacted.events);
      thenFails(failureOf(foreign), "NotAnAppend");
    },
  );

  test(
    `one writer per session in this process`,
    async () => {
      const id = fresh("writer");
      const result = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        const second = yield* Effect.scoped(Effect.gen(function* () {
          yield* store.open(id, { mode: "write" });
          const second = yield* Effect.exit(
            Effect.scoped(store.open(id, { mode: "write" })),
          );
          const reader = yield* Effect.exit(Effect.scoped(store.open(id)));
          const stat = yield* store.stat(id);
          return { second, reader, locked: stat.locked };
        }));
        const after = yield* Effect.exit(
          Effect.scoped(store.open(id, { mode: "write" })),
        );
        const stat = yield* store.stat(id);
        return { ...second, after, unlocked: !stat.locked };
      }));
      thenFails(failureOf(result.second), "SessionLocked", { id });
      assert.ok(Exit.isSuccess(result.reader));
      assert.ok(result.locked);
      assert.ok(Exit.isSuccess(result.after));
      assert.ok(result.unlocked);
      assertNothingHeld("after the writers");
    },
  );

  test(
    `seqs stay dense under concurrent appends`,
    async () => {
      const id = fresh("dense");
      const { results, events } = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        const writer = yield* store.create(header(id));
        const results = yield* Effect.forEach(
          range(0, 20),
          (i) =>
            Effect.forEach(
              range(0, 5),
              (j) =>
                store.append(writer, [
                  { type: "turn/start", data: { turn: i * 100 + j } },
                  {
                    type: "turn/end",
                    data: { turn: i * 100 + j, reason: { kind: "completed" } },
                  },
                ]),
            ),
          { concurrency: "unbounded" },
        );
        return { results, events: yield* readAll(id) };
      }));
      const assigned = results.flat().flatMap((r) => seqsOf(r.events)).sort(
        (a, b) => a - b,
      );
      assert.deepEqual(assigned, range(0, 200));
      assert.deepEqual(seqsOf(events), range(0, 200));
    },
  );

  test(
    `bad ids are refused`,
    async () => {
      const exits = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        const all: ReadonlyArray<
          Exit.Exit<unknown, { readonly _tag: string }>
        > = [
          yield* Effect.exit(Effect.scoped(store.create(header("")))),
          yield* Effect.exit(Effect.scoped(store.open(""))),
          yield* Effect.exit(Effect.scoped(store.open("", { mode: "write" }))),
          yield* Effect.exit(store.withSession("", () => Effect.void)),
          yield* Effect.exit(store.stat("")),
          yield* Effect.exit(Stream.runCollect(store.follow(""))),
          yield* Effect.exit(Effect.scoped(store.create(header("\uD800")))),
        ];
        return all;
      }));
      for (const exit of exits) {
        thenFails(failureOf(exit), "InvalidSessionId");
      }
    },
  );

  test(
    `list and stat name stored sessions`,
    async () => {
      const id = fresh("listed");
      const [ids, stat, missing] = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        return [
          yield* store.list(),
          yield* store.stat(id),
          yield* Effect.exit(store.stat(fresh("missing"))),
        ] as const;
      }));
      assert.ok(ids.includes(id));
      assert.equal(stat.id, id);
      assert.ok(stat.bytes > 0);
      assert.equal(stat.locked, false);
      thenFails(failureOf(missing), "SessionNotFound");
    },
  );

  test(
    `readers see a snapshot of stored batches`,
    async () => {
      const id = fresh("snapshot");
      const { early, late } = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        const early = yield* store.open(id);
        yield* store.withSession(
          id,
          (w) => store.append(w, [drafts.user("x", "x")]),
        );
        const late = yield* store.open(id);
        return { early, late };
      }));
      assert.equal(Session.nextSeq(early.session), TURN);
      assert.equal(Session.nextSeq(late.session), TURN + 1);
    },
  );

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

  /** Every scoped operation, each run on a session that is then checked. */
  const operations: ReadonlyArray<{
    readonly name: string;
    readonly run: (
      id: string,
    ) => Effect.Effect<unknown, unknown, SessionStore | Scope.Scope>;
  }> = [
    {
      name: "create",
      run: (id) => withStore((store) => store.create(header(`${id}-new`))),
    },
    {
      name: "open for write",
      run: (id) => withStore((store) => store.open(id, { mode: "write" })),
    },
    {
      name: "open for read",
      run: (id) => withStore((store) => store.open(id)),
    },
    {
      name: "append",
      run: (id) =>
        withStore((store) =>
          store.withSession(id, (w) => store.append(w, turnBatches(5)[0] ?? []))
        ),
    },
    {
      name: "update",
      run: (id) =>
        withStore((store) =>
          store.withSession(id, (w) =>
            store.update(w, (s) =>
              compact(s, {
                startSeq: SessionSeq.make(2),
                endSeq: SessionSeq.make(5),
                summary: "s",
                compactionId: `c-${Session.nextSeq(s)}`,
              })))
        ),
    },
    {
      name: "repair",
      run: (id) =>
        withStore((store) => store.withSession(id, (w) => store.repair(w))),
    },
    {
      name: "close",
      run: (id) =>
        withStore((store) =>
          Effect.flatMap(
            store.open(id, { mode: "write" }),
            (h: SessionHandle) => store.close(h),
          )
        ),
    },
  ];

  test(
    `interruption at any point of every operation leaves nothing held`,
    async () => {
      const random = mulberry32(options.seed ?? 1);
      const id = fresh("interrupt");
      let interrupted = 0;
      await run(seeded(id, 30));
      for (const operation of operations) {
        for (let round = 0; round < 12; round++) {
          // Interrupt after a random number of scheduler yields, or after a
          // short random time, and sometimes not at all.
          const yields = Math.floor(random() ** 2 * 40);
          const exit = await exitOf(Effect.gen(function* () {
            const fiber = yield* Effect.forkChild(
              Effect.scoped(operation.run(id)),
            );
            if (random() < 0.5) {
              for (let i = 0; i < yields; i++) yield* Effect.yieldNow;
            } else {
              yield* Effect.sleep(Duration.millis(Math.floor(random() * 8)));
            }
            yield* Fiber.interrupt(fiber);
            return yield* Fiber.await(fiber);
          }));
          if (
            Exit.isSuccess(exit) && Exit.isFailure(exit.value) &&
            Cause.hasInterrupts(exit.value.cause)
          ) {
            interrupted++;
          }
          assertNothingHeld(`${operation.name}, round ${round}`);
          const reopened = await exitOf(Effect.gen(function* () {
            const store = yield* SessionStore;
            yield* Effect.scoped(store.open(id, { mode: "write" }));
            yield* Effect.scoped(store.open(id));
          }));
          assert.ok(
            Exit.isSuccess(reopened),
            `${operation.name}, round ${round}: ${
              Exit.isFailure(reopened) ? Cause.pretty(reopened.cause) : ""
            }`,
          );
        }
      }
      // Some rounds must really interrupt, or the test proves little; how
      // many depends on how many suspension points the layer's operations
      // have (the memory layer's are nearly atomic).
      assert.ok(interrupted >= operations.length, `interrupted ${interrupted}`);
    },
  );

  const spawn = options.spawnWriter;
  if (spawn === undefined) return;

  /**
   * Seeds a fresh session, has a writer process hold it, runs `body`, then
   * ends the process and waits for its exit.
   */
  const whileHeldElsewhere = async (
    prefix: string,
    body: (id: string, holder: WriterProcess) => Promise<void>,
  ): Promise<string> => {
    const id = fresh(prefix);
    await run(seeded(id));
    const holder = spawn(["hold", id]);
    try {
      assert.equal(await holder.line(), "opened");
      await body(id, holder);
    } finally {
      await holder.end();
      await holder.status;
    }
    return id;
  };

  test(
    `a writer in another process holds the session`,
    async () => {
      const id = await whileHeldElsewhere("other", async (id, holder) => {
        const here = await run(Effect.gen(function* () {
          const store = yield* SessionStore;
          return yield* Effect.exit(store.open(id, { mode: "write" }));
        }));
        thenFails(failureOf(here), "SessionLocked", { id });
        await holder.send("append");
        assert.equal(await holder.line(), `appended ${TURN}`);
        const events = await run(readAll(id));
        assert.equal(events.length, TURN + 1);
      });
      // Released at its exit: this process can write now, and another
      // process is refused while this one holds it.
      await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* store.open(id, { mode: "write" });
        const other = spawn(["try", id]);
        assert.equal(
          yield* Effect.promise(() => other.line()),
          "SessionLocked",
        );
        yield* Effect.promise(() => other.status);
      }));
    },
  );

  test(
    `a writer killed with SIGKILL loses its claim, and no stored batch`,
    async () => {
      const id = fresh("killed");
      await run(seeded(id));
      const holder = spawn(["hold", id]);
      assert.equal(await holder.line(), "opened");
      for (let i = 0; i < 3; i++) {
        await holder.send("append");
        assert.equal(await holder.line(), `appended ${TURN + i}`);
      }
      holder.kill("SIGKILL");
      await holder.status;
      const events = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        const writer = yield* store.open(id, { mode: "write" });
        const { events } = yield* store.append(writer, [drafts.user("u", "x")]);
        assert.deepEqual(seqsOf(events), [TURN + 3]);
        return Result.getOrThrow(Session.events(writer.session));
      }));
      assert.deepEqual(seqsOf(events), range(0, TURN + 4));
    },
  );

  test(
    `20 writer processes race for one session: exactly one writes`,
    async () => {
      const id = fresh("race");
      await run(seeded(id));
      const writers = range(0, 20).map(() => spawn(["race", id, "30"]));
      try {
        const first = await Promise.all(writers.map((w) => w.line()));
        const opened = first.filter((l) => l === "opened").length;
        const locked = first.filter((l) => l === "SessionLocked").length;
        assert.deepEqual([opened, locked], [1, 19], first.join(","));
        const winner = writers[first.indexOf("opened")];
        assert.equal(await winner?.line(), "done");
      } finally {
        await Promise.all(writers.map((w) => w.end()));
        await Promise.all(writers.map((w) => w.status));
      }
      const events = await run(readAll(id));
      assert.deepEqual(seqsOf(events), range(0, TURN + 30));
    },
  );

  test(
    `follow sees a writer in another process`,
    async () => {
      await whileHeldElsewhere("follow-other", async (id, holder) => {
        const followed = await run(Effect.gen(function* () {
          const store = yield* SessionStore;
          const fiber = yield* Effect.forkChild(
            Stream.runCollect(
              Stream.take(store.follow(id, { fromSeq: TURN - 1 }), 4),
            ),
          );
          for (let i = 0; i < 3; i++) {
            yield* Effect.promise(() => holder.send("append"));
            yield* Effect.promise(() => holder.line());
          }
          return yield* Fiber.join(fiber);
        }));
        assert.deepEqual(seqsOf(followed), range(TURN - 1, TURN + 3));
      });
    },
  );
};
