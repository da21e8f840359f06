/**
 * `resolveAppend` on PostgreSQL while the failed writer's server process
 * still runs: a relay holds the writer's `COMMIT`, closes the client's side
 * only, and delivers the `COMMIT` later, so that the process that can
 * still commit the batch holds the session's claim meanwhile. The answer
 * is never `"absent"` for a batch that is then stored: it waits for the
 * process to end, says the outcome is still unknown past its bound, or
 * ends the process when the caller allows it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import type { PostgresSessionStore } from "../../src/postgres/mod.ts";
import { postgresTest } from "../_helpers/postgres.ts";
import { failureOf } from "../_helpers/then.ts";
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

/** A `COMMIT` of the writer held for `millis`, its client side closed. */
const heldCommit = (millis: number): Fault => ({
  ...onStatement(WRITER, /^COMMIT/, "hold"),
  holdMillis: millis,
});

/**
 * Creates session `id`, then appends turns 10 and 11 with `faults` armed;
 * returns the append's `AppendOutcomeUnknown`.
 */
const unknownAppend = async (
  store: PostgresSessionStore,
  proxy: FaultProxy,
  id: string,
  ...faults: ReadonlyArray<Fault>
) => {
  await run(Effect.flatMap(store.create(header(id)), store.close));
  const exit = await run(Effect.gen(function* () {
    const writer = yield* store.open(id, { mode: "write" });
    proxy.arm(...faults);
    return yield* Effect.exit(store.append(writer, batch(1, 2)));
  }));
  assert.equal(kindOf(exit), "AppendOutcomeUnknown");
  return unknownOf(exit);
};

const sleep = (millis: number) =>
  new Promise((resolve) => setTimeout(resolve, millis));

postgresTest(
  "a COMMIT held past the append's own check is resolved as what its server process then does, never absent before it ends",
  async (url) => {
    await withProxiedStore(url, async (store, proxy) => {
      // The check waits deadWriterSeconds + 5 = 8 s for the head row; the
      // COMMIT arrives 10 s after it was sent.
      const started = Date.now();
      const error = await unknownAppend(
        store,
        proxy,
        "held",
        heldCommit(10_000),
      );
      assert.ok(error.writer !== undefined, "the writer's process is known");
      const resolution = await Effect.runPromise(store.resolveAppend(error));
      await sleep(Math.max(0, 11_000 - (Date.now() - started)));
      const stored = await storedTurns(url, "held");
      assert.equal(resolution, stored.length === 0 ? "absent" : "stored");
      assert.deepEqual(stored, resolution === "stored" ? [10, 11] : []);
    });
  },
);

postgresTest(
  "past its wait, resolveAppend says the outcome is still unknown while the writer's server process runs, and answers once it ends",
  async (url) => {
    await withProxiedStore(url, async (store, proxy) => {
      // The check is refused: the append's outcome is unknown at once.
      const error = await unknownAppend(
        store,
        proxy,
        "running",
        heldCommit(3000),
        onConnect(CHECK),
      );
      const early = await Effect.runPromise(Effect.exit(
        store.resolveAppend(error, { writerWait: "200 millis" }),
      ));
      const still = failureOf(early);
      assert.ok(still instanceof AppendOutcomeUnknown, kindOf(early));
      assert.equal(still.id, "running");
      assert.equal(still.fromSeq, error.fromSeq);
      assert.deepEqual(still.writer, error.writer);
      assert.match(still.message, /server process "\d+" still runs/);
      // A check that cannot look answers nothing either.
      proxy.arm(onConnect(CHECK));
      const blind = failureOf(
        await Effect.runPromise(Effect.exit(store.resolveAppend(still))),
      );
      assert.ok(blind instanceof AppendOutcomeUnknown);
      assert.deepEqual([blind.fromSeq, blind.writer], [
        error.fromSeq,
        error.writer,
      ]);
      assert.equal(proxy.fired(), 3);
      // The COMMIT arrives: the batch is stored, and so said.
      const resolution = await Effect.runPromise(store.resolveAppend(still));
      assert.equal(resolution, "stored");
      assert.deepEqual(await storedTurns(url, "running"), [10, 11]);
    });
  },
);

postgresTest(
  "with terminateWriter, resolveAppend ends the writer's server process and the batch stays absent",
  async (url) => {
    await withProxiedStore(url, async (store, proxy) => {
      const error = await unknownAppend(
        store,
        proxy,
        "terminated",
        heldCommit(1500),
        onConnect(CHECK),
      );
      const resolution = await Effect.runPromise(
        store.resolveAppend(error, { writerWait: 0, terminateWriter: true }),
      );
      assert.equal(resolution, "absent");
      // The held COMMIT finds its process gone.
      await sleep(2000);
      assert.deepEqual(await storedTurns(url, "terminated"), []);
      // Written again, the batch is stored once.
      await run(
        store.withSession("terminated", (w) => store.append(w, batch(1, 2))),
      );
      assert.deepEqual(await storedTurns(url, "terminated"), [10, 11]);
    });
  },
);
