/**
 * Fuzz category `store/interrupt`: every store operation (create, open for
 * read and for write, append, update, repair, withSession, close) and the
 * file operations beside it (`migrateFile`, the command line's
 * `repairFile`), on logs of random length, interrupted at a random point
 * (after a random number of scheduler yields or a random delay, or by
 * `Effect.timeout`). Then nothing is held under the folder (no descriptor,
 * no lock, no temp file), the session opens for reading and for writing,
 * and a migration's target is either absent or complete.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Cause, Duration, Effect, Exit, Fiber, Result } from "effect";
import {
  compact,
  layerJsonlStore,
  SessionSeq,
  SessionStore,
} from "@palimpsest/session";
import {
  encodeSessionId,
  readSessionFile,
  repairFile,
} from "@palimpsest/session/jsonl";
import { migrateFile } from "@palimpsest/session/migrations";
import {
  countsReport,
  fuzzAsync,
  heavyRuns,
  type Rng,
} from "../_helpers/fuzz.ts";
import { turnBatches } from "../_helpers/build.ts";
import { heldUnder, largeLog } from "../store/held.ts";

const OPERATIONS = [
  "create",
  "open-read",
  "open-write",
  "append",
  "update",
  "repair",
  "with-session",
  "close",
  "migrate-file",
  "repair-file",
] as const;

type Operation = typeof OPERATIONS[number];

/** Tallies: which operations ran, and how many were really interrupted. */
const tally = new Map<string, number>();
const count = (key: string) => tally.set(key, (tally.get(key) ?? 0) + 1);

const storeOperation = (operation: Operation, id: string) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    switch (operation) {
      case "create":
        return yield* Effect.scoped(
          store.create({ id: `${id}-new`, createdAt: 0, isSeeded: false }),
        );
      case "open-read":
        return yield* Effect.scoped(store.open(id));
      case "open-write":
        return yield* Effect.scoped(store.open(id, { mode: "write" }));
      case "append":
        return yield* store.withSession(
          id,
          (w) => store.append(w, turnBatches(900_000)[0] ?? []),
        );
      case "update":
        return yield* store.withSession(
          id,
          (w) =>
            store.update(w, (s) =>
              compact(s, {
                startSeq: SessionSeq.make(2),
                endSeq: SessionSeq.make(5),
                summary: "s",
                compactionId: `c-${s.surface.nextSeq}`,
              })),
        );
      case "repair":
        return yield* store.withSession(id, (w) => store.repair(w));
      case "with-session":
        return yield* store.withSession(id, () => Effect.never);
      case "close":
        return yield* Effect.scoped(
          Effect.flatMap(
            store.open(id, { mode: "write" }),
            (h) => store.close(h),
          ),
        );
      case "migrate-file":
      case "repair-file":
        return undefined;
    }
  });

const interruptAt = <A, E>(
  rng: Rng,
  effect: Effect.Effect<A, E>,
): Effect.Effect<Exit.Exit<A, unknown>> =>
  Effect.gen(function* () {
    const how = rng.int(0, 2);
    if (how === 0) {
      return yield* Effect.exit(
        Effect.timeout(effect, Duration.millis(rng.int(0, 20))),
      );
    }
    const fiber = yield* Effect.forkChild(effect);
    if (how === 1) {
      const yields = rng.int(0, 60);
      for (let i = 0; i < yields; i++) yield* Effect.yieldNow;
    } else {
      yield* Effect.sleep(Duration.millis(rng.int(0, 15)));
    }
    yield* Fiber.interrupt(fiber);
    return yield* Fiber.await(fiber);
  });

Deno.test("fuzz: interruption at random points of every store operation", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fuzz-interrupt-"));
  const layer = layerJsonlStore({ root });
  await fuzzAsync("store/interrupt", heavyRuns(5, 20), async (rng, index) => {
    const operation = OPERATIONS[index % OPERATIONS.length] ?? "create";
    const id = `case-${index}`;
    const file = path.join(
      root,
      `${Result.getOrThrow(encodeSessionId(id))}.jsonl`,
    );
    // Small logs are valid workload turns; large ones are many turn/start
    // lines, so that reading takes long enough to be interrupted.
    const large = rng.chance(0.4);
    if (large) {
      fs.writeFileSync(
        file,
        largeLog(
          id,
          operation === "migrate-file" ? 2 : 3,
          rng.int(20_000, 80_000),
        ),
      );
    } else {
      const turns = rng.int(1, 6);
      await Effect.runPromise(
        Effect.scoped(Effect.gen(function* () {
          const store = yield* SessionStore;
          const writer = yield* store.create({
            id,
            createdAt: 0,
            isSeeded: false,
          });
          for (let turn = 0; turn < turns; turn++) {
            for (const batch of turnBatches(turn)) {
              yield* store.append(writer, batch);
            }
          }
        })).pipe(Effect.provide(layer)),
      );
    }
    const target = path.join(root, `${id}.v3.jsonl`);
    const effect: Effect.Effect<unknown, unknown> = operation === "migrate-file"
      ? migrateFile(file, { target })
      : operation === "repair-file"
      ? repairFile(file)
      : storeOperation(operation, id).pipe(Effect.provide(layer));
    const exit = await Effect.runPromise(interruptAt(rng, effect));
    count(`ran ${operation}`);
    if (
      Exit.isFailure(exit) &&
      (Cause.hasInterrupts(exit.cause) ||
        Cause.pretty(exit.cause).includes("TimeoutError"))
    ) {
      count(`interrupted ${operation}`);
    }
    assert.ok(
      !(Exit.isFailure(exit) && Cause.hasDies(exit.cause)),
      Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "",
    );

    assert.deepEqual(heldUnder(root), [], operation);
    // The session opens for reading and for writing.
    const reopened = await Effect.runPromise(
      Effect.exit(Effect.scoped(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* store.open(id, { mode: "write" });
        return yield* store.open(id);
      }))).pipe(Effect.provide(layer)),
    );
    if (operation !== "migrate-file" || !large) {
      assert.ok(
        Exit.isSuccess(reopened),
        Exit.isFailure(reopened) ? Cause.pretty(reopened.cause) : "",
      );
    }
    // A migration's target is absent or complete.
    if (fs.existsSync(target)) {
      const read = await Effect.runPromise(
        Effect.exit(readSessionFile(target)),
      );
      assert.ok(Exit.isSuccess(read));
      assert.equal(read.value.report.tornTail, undefined);
    }
    assert.deepEqual(heldUnder(root), [], `${operation}, after reopening`);
    fs.rmSync(file, { force: true });
    fs.rmSync(target, { force: true });
    fs.rmSync(
      path.join(
        root,
        `${Result.getOrThrow(encodeSessionId(`${id}-new`))}.jsonl`,
      ),
      { force: true },
    );
  });
  console.log(countsReport());
  for (const [key, n] of [...tally.entries()].sort()) {
    console.log(`fuzz-outcome store/interrupt ${key}=${n}`);
  }
  // The category proves little unless it really interrupts operations.
  const interruptedTotal = [...tally.entries()]
    .filter(([key]) => key.startsWith("interrupted"))
    .reduce((n, [, v]) => n + v, 0);
  assert.ok(interruptedTotal > 0);
  fs.rmSync(root, { recursive: true });
});
