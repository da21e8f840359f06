/**
 * Interrupting the JSONL store's long operations (issue: an `open` for
 * write interrupted by `Effect.timeout` on a large log used to leave its
 * lock behind, so every later writer got `SessionLocked`), and the file
 * operations beside the store: `migrateFile` and the command line's
 * `repairFile`. After each interruption nothing is held (no descriptor on
 * the folder, no lock or temp file) and the file opens.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Cause, Effect, Exit, Result } from "effect";
import { layerJsonlStore, SessionStore } from "@palimpsest/session";
import { encodeSessionId, repairFile } from "@palimpsest/session/jsonl";
import { migrateFile } from "@palimpsest/session/migrations";
import { heldUnder, largeLog } from "./held.ts";
import { thenFails } from "../_helpers/then.ts";

const fileOf = (root: string, id: string) =>
  path.join(root, `${Result.getOrThrow(encodeSessionId(id))}.jsonl`);

const interrupted = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) &&
  (Cause.hasInterrupts(exit.cause) ||
    Cause.pretty(exit.cause).includes("TimeoutError"));

Deno.test("an open for write interrupted by a timeout on a large log releases its lock", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "interrupt-open-"));
  fs.writeFileSync(fileOf(root, "big"), largeLog("big", 3, 200_000));
  const layer = layerJsonlStore({ root });
  const timedOut = await Effect.runPromise(
    Effect.exit(Effect.scoped(Effect.gen(function* () {
      const store = yield* SessionStore;
      return yield* Effect.timeout(
        store.open("big", { mode: "write" }),
        "5 millis",
      );
    }))).pipe(Effect.provide(layer)),
  );
  assert.ok(Exit.isFailure(timedOut), "the open finished within 5 ms");
  assert.deepEqual(heldUnder(root), []);
  const events = await Effect.runPromise(
    Effect.scoped(Effect.gen(function* () {
      const store = yield* SessionStore;
      const writer = yield* store.open("big", { mode: "write" });
      return writer.report.events;
    })).pipe(Effect.provide(layer)),
  );
  assert.equal(events, 200_000);
  assert.deepEqual(heldUnder(root), []);
  fs.rmSync(root, { recursive: true });
});

Deno.test("a failed open for write releases its lock at once, inside a longer scope", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "interrupt-open-"));
  fs.writeFileSync(fileOf(root, "old"), largeLog("old", 2, 10));
  const layer = layerJsonlStore({ root });
  const inside = await Effect.runPromise(
    Effect.scoped(Effect.gen(function* () {
      const store = yield* SessionStore;
      const refused = yield* Effect.flip(store.open("old", { mode: "write" }));
      // The scope is still open: nothing of the failed open may be held.
      return { refused, held: heldUnder(root) };
    })).pipe(Effect.provide(layer)),
  );
  thenFails(inside.refused, "FormatTooOld");
  assert.deepEqual(inside.held, []);
  fs.rmSync(root, { recursive: true });
});

/**
 * Runs `operation` cut by a 5 ms timeout and checks nothing is held under
 * `root` (then runs `afterCut`); then runs it whole and checks again.
 * Returns what the whole run gave.
 */
const cutThenWhole = async <A, E>(
  root: string,
  what: string,
  operation: () => Effect.Effect<A, E>,
  afterCut: () => void = () => {},
): Promise<A> => {
  const exit = await Effect.runPromise(
    Effect.exit(Effect.timeout(operation(), "5 millis")),
  );
  assert.ok(interrupted(exit), `the ${what} finished within 5 ms`);
  assert.deepEqual(heldUnder(root), []);
  afterCut();
  const done = await Effect.runPromise(operation());
  assert.deepEqual(heldUnder(root), []);
  return done;
};

Deno.test("migrateFile interrupted by a timeout leaves no temp file and no target", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "interrupt-migrate-"));
  const source = path.join(root, "s.jsonl");
  fs.writeFileSync(source, largeLog("s", 2, 200_000));
  const summary = await cutThenWhole(
    root,
    "migration",
    () => migrateFile(source),
    () => assert.deepEqual(fs.readdirSync(root), ["s.jsonl"]),
  );
  assert.equal(summary.eventsRead, 200_000);
  fs.rmSync(root, { recursive: true });
});

Deno.test("the command line's repair interrupted by a timeout releases its lock", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "interrupt-repair-"));
  // Not a store name (`.` is encoded), so the file adapter runs.
  const file = path.join(root, "s.v3.jsonl");
  fs.writeFileSync(file, largeLog("s", 3, 200_000));
  const done = await cutThenWhole(root, "repair", () => repairFile(file));
  // Every turn of the log was started and never ended: each is closed.
  assert.equal(done.closers.length, 200_000);
  fs.rmSync(root, { recursive: true });
});
