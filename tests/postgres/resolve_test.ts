/**
 * `resolveAppend` on PostgreSQL while a failed writer's write may still be
 * on its way or running: a relay holds the writer's statement (closing the
 * client's side only) and delivers it later. A write that has not reached
 * the server is fenced: the check (or `resolveAppend`) replaces or revokes
 * the writer's token under the head row's lock, so the late statement can
 * never commit, and the answer is final at once. A large batch's
 * transaction whose `COMMIT` is held holds the head row meanwhile: the
 * answer is never `"absent"` for a batch that is then stored; it waits,
 * says the outcome is still unknown past its bound, or ends the server
 * process that holds the row when the caller allows it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import type { PostgresSessionStore } from "../../src/postgres/mod.ts";
import { postgresTest } from "../_helpers/postgres.ts";
import { failureOf, thenFails } from "../_helpers/then.ts";
import {
  type Fault,
  type FaultProxy,
  onConnect,
  onStatement,
} from "../_helpers/fault_proxy.ts";
import {
  batch,
  CHECK,
  header,
  kindOf,
  run,
  storedTurns,
  unknownOf,
  withProxiedStore,
  WRITER,
} from "../_helpers/fault_store.ts";
import { AppendOutcomeUnknown } from "@palimpsest/session";

/** The writer's write statement held for `millis`, its client side closed. */
const heldWrite = (millis: number): Fault => ({
  ...onStatement(WRITER, /^WITH h AS/, "hold"),
  holdMillis: millis,
});

/** A `COMMIT` of the writer held for `millis`, its client side closed. */
const heldCommit = (millis: number): Fault => ({
  ...onStatement(WRITER, /^COMMIT/, "hold"),
  holdMillis: millis,
});

/** Events of a batch large enough to be written as a transaction. */
const LARGE = 1001;

/** Turns 10 to 10 + size - 1: batch 1 of `size` events. */
const turnsOf = (size: number) =>
  Array.from({ length: size }, (_, i) => 10 + i);

/**
 * Creates session `id`, then appends batch 1 (`size` turns from 10 on)
 * with `faults` armed; returns the append's exit.
 */
const faultedAppend = async (
  store: PostgresSessionStore,
  proxy: FaultProxy,
  id: string,
  size: number,
  ...faults: ReadonlyArray<Fault>
) => {
  await run(Effect.flatMap(store.create(header(id)), store.close));
  return await run(Effect.gen(function* () {
    const writer = yield* store.open(id, { mode: "write" });
    proxy.arm(...faults);
    return yield* Effect.exit(store.append(writer, batch(1, size)));
  }));
};

/** A store behind a fault proxy, with the steps every test here takes. */
interface Proxied {
  readonly url: string;
  readonly store: PostgresSessionStore;
  readonly proxy: FaultProxy;
  /** {@link faultedAppend} on this store. */
  readonly faultedAppend: (
    id: string,
    size: number,
    ...faults: ReadonlyArray<Fault>
  ) => ReturnType<typeof faultedAppend>;
  /**
   * As `faultedAppend` with the writer's statement held by `held` and the
   * append's check refused: the outcome must be unknown, left to
   * `resolveAppend`.
   */
  readonly blindAppend: (
    id: string,
    size: number,
    held: Fault,
  ) => Promise<AppendOutcomeUnknown>;
  /**
   * Checks that session `id` holds no turn of batch 1, then that batch 1 of
   * two turns written again is stored once.
   */
  readonly storedOnceWrittenAgain: (id: string) => Promise<void>;
}

const proxied = (
  url: string,
  store: PostgresSessionStore,
  proxy: FaultProxy,
): Proxied => {
  const append: Proxied["faultedAppend"] = (id, size, ...faults) =>
    faultedAppend(store, proxy, id, size, ...faults);
  return {
    url,
    store,
    proxy,
    faultedAppend: append,
    blindAppend: async (id, size, held) => {
      const exit = await append(id, size, held, onConnect(CHECK));
      assert.equal(kindOf(exit), "AppendOutcomeUnknown");
      return unknownOf(exit);
    },
    storedOnceWrittenAgain: async (id) => {
      assert.deepEqual(await storedTurns(url, id), []);
      await run(store.withSession(id, (w) => store.append(w, batch(1, 2))));
      assert.deepEqual(await storedTurns(url, id), [10, 11]);
    },
  };
};

/** A PostgreSQL test whose store reaches the server through a fault proxy. */
const proxiedTest = (name: string, body: (t: Proxied) => Promise<void>) =>
  postgresTest(name, async (url) => {
    await withProxiedStore(
      url,
      (store, proxy) => body(proxied(url, store, proxy)),
    );
  });

const sleep = (millis: number) =>
  new Promise((resolve) => setTimeout(resolve, millis));

proxiedTest(
  "a write held past the append's check is fenced: reported not stored, and never stored when it arrives",
  async (t) => {
    const exit = await t.faultedAppend("held", 2, heldWrite(1500));
    thenFails(failureOf(exit), "WriterClaimLost", { id: "held" });
    assert.deepEqual(await storedTurns(t.url, "held"), []);
    // The held statement arrives with the replaced token: refused.
    await sleep(2500);
    await t.storedOnceWrittenAgain("held");
  },
);

proxiedTest(
  "when the check cannot look, resolveAppend revokes the writer's lease and answers at once: a write still on its way is fenced",
  async (t) => {
    const error = await t.blindAppend("blind", 2, heldWrite(1500));
    assert.ok(error.writerToken !== undefined, "the writer's token is known");
    const resolution = await Effect.runPromise(
      t.store.resolveAppend(error, { writerWait: "200 millis" }),
    );
    assert.equal(resolution, "absent");
    await sleep(2500);
    await t.storedOnceWrittenAgain("blind");
  },
);

proxiedTest(
  "past its wait, resolveAppend says the outcome is still unknown while a large batch's transaction holds the head row, and answers once it ends",
  async (t) => {
    // The check is refused: the append's outcome is unknown at once.
    const error = await t.blindAppend("running", LARGE, heldCommit(3000));
    const early = await Effect.runPromise(Effect.exit(
      t.store.resolveAppend(error, { writerWait: "200 millis" }),
    ));
    const still = failureOf(early);
    assert.ok(still instanceof AppendOutcomeUnknown, kindOf(early));
    assert.equal(still.id, "running");
    assert.equal(still.fromSeq, error.fromSeq);
    assert.equal(still.writerToken, error.writerToken);
    assert.match(still.message, /still runs after 200 ms/);
    // A check that cannot look answers nothing either.
    t.proxy.arm(onConnect(CHECK));
    const blind = failureOf(
      await Effect.runPromise(Effect.exit(t.store.resolveAppend(still))),
    );
    assert.ok(blind instanceof AppendOutcomeUnknown);
    assert.deepEqual([blind.fromSeq, blind.writerToken], [
      error.fromSeq,
      error.writerToken,
    ]);
    // The COMMIT arrives: the batch is stored, and so said.
    const resolution = await Effect.runPromise(t.store.resolveAppend(still));
    assert.equal(resolution, "stored");
    assert.deepEqual(await storedTurns(t.url, "running"), turnsOf(LARGE));
  },
);

proxiedTest(
  "with terminateWriter, resolveAppend ends the server process that holds the head row and the batch stays absent",
  async (t) => {
    const error = await t.blindAppend("terminated", LARGE, heldCommit(6000));
    const started = Date.now();
    const resolution = await Effect.runPromise(
      t.store.resolveAppend(error, { writerWait: 0, terminateWriter: true }),
    );
    assert.equal(resolution, "absent");
    // The held COMMIT finds its process gone.
    await sleep(Math.max(0, 6500 - (Date.now() - started)));
    // Written again, the batch is stored once.
    await t.storedOnceWrittenAgain("terminated");
  },
);
