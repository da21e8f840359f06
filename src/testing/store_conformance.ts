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
 *   `InvalidSessionSeq`;
 * - `list` with a query filters, searches, orders and pages the catalogue;
 *   `remove` takes a session away whole and never one a writer holds, nor
 *   does `retainSessions`.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as Cause from "effect/Cause";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Schedule from "effect/Schedule";
import * as Exit from "effect/Exit";
import * as Fiber from "effect/Fiber";
import * as Result from "effect/Result";
import type * as Scope from "effect/Scope";
import * as Stream from "effect/Stream";
import { compact } from "../history/compact.ts";
import { SessionSeq } from "../core/seq.ts";
import { Session } from "../session/session.ts";
import { type SessionHandle, SessionStore } from "../store/store.ts";
import {
  drafts,
  failureOf,
  header,
  range,
  seqsOf,
  thenFails,
  TURN,
  turnBatches,
  withStore,
} from "./conformance_kit.ts";
import {
  makeSuite,
  mulberry32,
  type RegisterTest,
  spawnWriterProcess,
  type WriterProcess,
  type WriterSignal,
} from "./conformance_kit.ts";
import { writeTests } from "./store_conformance_writes.ts";
import { followTests } from "./store_conformance_follow.ts";
import { catalogueTests } from "./store_conformance_catalogue.ts";
import process from "node:process";
import type * as Layer from "effect/Layer";

export type { RegisterTest, WriterProcess, WriterSignal };

/** What a backend gives the store conformance suite. */
export interface StoreConformanceOptions {
  /** The layer's name, in test titles. */
  readonly name: string;
  /**
   * The layer. Each test builds it once and runs against that store; with
   * `spawnWriter`, every build must reach the storage the writers reach.
   */
  readonly layer: () => Layer.Layer<SessionStore, unknown>;
  /**
   * Starts a writer process over the same storage, a program that calls
   * `runWriterProcess` with the given arguments (`MODE ID [N]`); see
   * {@link spawnDenoWriter}. Absent for a store that lives in one process,
   * whose cross-process tests are then not registered.
   */
  readonly spawnWriter?: (args: ReadonlyArray<string>) => WriterProcess;
  /**
   * How long, in ms, the claim of a writer process killed with SIGKILL may
   * outlive it: 0 (the default) for a claim that goes with the process (a
   * lock the kernel or the server drops at once); a lease's length for a
   * store whose claim is a lease (the writer processes' lease, which
   * should be short in the suite).
   */
  readonly claimOutlivesWriter?: number;
  /**
   * The layer's resources in use (descriptors, lock files, connections),
   * as descriptions; empty when nothing is held. Checked after every
   * interruption.
   */
  readonly held?: () => ReadonlyArray<string>;
  /** Seed of the interruption points; 1 by default. */
  readonly seed?: number;
  /**
   * Registers one test: `Deno.test` by default; under Node, pass `test` of
   * `node:test`.
   */
  readonly test?: RegisterTest;
}

/**
 * Starts `deno run -A script ...prefix ...args`: the writer process of a
 * backend whose writer program is a Deno script taking its storage's
 * address first (`prefix`), then the protocol's arguments; for
 * {@link StoreConformanceOptions.spawnWriter}.
 *
 * @param script The writer program's path.
 * @param prefix Its first arguments (where the storage is).
 * @param args The protocol's arguments (`MODE ID [N]`).
 * @returns The process.
 *
 * @example A writer over a folder
 * ```ts ignore
 * import { spawnDenoWriter } from "@palimpsest/session/testing";
 *
 * const spawnWriter = (args: ReadonlyArray<string>) =>
 *   spawnDenoWriter("./my_writer.ts", ["/tmp/store"], args);
 * ```
 */
export function spawnDenoWriter(
  script: string,
  prefix: ReadonlyArray<string>,
  args: ReadonlyArray<string>,
): WriterProcess {
  return spawnWriterProcess(process.execPath, [
    "run",
    "-A",
    script,
    ...prefix,
    ...args,
  ]);
}

/**
 * Registers the store conformance tests for one `SessionStore` layer, one
 * test each (see the module doc for what they check). Call it at the top
 * level of a test module; `deno test` then runs them.
 *
 * @param options The layer and what it needs.
 *
 * @example The memory store
 * ```ts ignore
 * import { layerMemoryStore } from "@palimpsest/session";
 * import { storeConformance } from "@palimpsest/session/testing";
 *
 * storeConformance({ name: "memory", layer: () => layerMemoryStore() });
 * ```
 */
export function storeConformance(options: StoreConformanceOptions): void {
  const suite = makeSuite(options);
  const { test, run, exitOf, fresh, assertNothingHeld, seeded, readAll } =
    suite;
  writeTests(suite);
  followTests(suite);
  catalogueTests(suite);

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
      const outlives = options.claimOutlivesWriter ?? 0;
      const events = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        // A claim that outlives its writer (a lease) is refused until it
        // runs out, and no longer.
        const writer = yield* store.open(id, { mode: "write" }).pipe(
          Effect.retry({
            while: (error) => error._tag === "SessionLocked",
            schedule: Schedule.spaced("100 millis"),
            times: Math.ceil((outlives + 2000) / 100),
          }),
        );
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
        await winner?.send("go");
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
}
