/**
 * The kill campaign of `remove`: a process removing sessions one after
 * another is killed with SIGKILL at a random point (under `strace`, which
 * stalls every `unlink`, `fsync` and `rename` so that the kill lands
 * between the steps of a removal), then the store is opened again: each
 * session is whole (every event, opened for writing) or gone (not found,
 * not listed, and a new session under its id starts empty), never half;
 * and a session the process said it removed is gone.
 *
 * @module
 */
import { Effect } from "effect";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { SessionStore } from "@palimpsest/session";
import { turnBatches } from "../_helpers/build.ts";
import { tempDir, useStore, withStore } from "../_helpers/store.ts";
import { mulberry32 } from "../_helpers/workload.ts";
import { delaying, spawnLineProcess } from "../_helpers/line_process.ts";

const child = new URL("./remove_child.ts", import.meta.url).pathname;
const IDS = ["r0", "r1", "r2"];
const RUNS = 8;
const hasStrace = (() => {
  try {
    return new Deno.Command("strace", { args: ["-V"] }).outputSync().success;
  } catch {
    return false;
  }
})();

const seed = (root: string) =>
  useStore(root, (store) =>
    Effect.gen(function* () {
      for (const id of IDS) {
        yield* Effect.scoped(Effect.gen(function* () {
          const writer = yield* store.create({
            id,
            createdAt: 0,
            isSeeded: false,
          });
          for (const batch of [...turnBatches(0), ...turnBatches(1)]) {
            yield* store.append(writer, batch);
          }
          yield* store.checkpoint(writer);
        }));
      }
      return yield* Effect.scoped(Effect.gen(function* () {
        const reader = yield* store.open(IDS[0] ?? "");
        return reader.session.surface.nextSeq;
      }));
    }));

Deno.test("remove killed at random points leaves each session whole or gone", async () => {
  const random = mulberry32(37);
  let whole = 0;
  let gone = 0;
  for (let run = 0; run < RUNS; run++) {
    const root = tempDir("remove-kill-");
    const events = await seed(root);
    // A catalogue index built before the removal, so its entries are tested too.
    await withStore(
      root,
      Effect.flatMap(SessionStore, (store) => store.list({})),
    );
    const args = ["run", "-A", child, root, ...IDS];
    const process = hasStrace
      ? spawnLineProcess("strace", [
        "-f",
        "-qq",
        "-o",
        "/dev/null",
        ...delaying("unlink,unlinkat,fsync,fdatasync,rename,renameat", 50_000),
        Deno.execPath(),
        ...args,
      ])
      : spawnLineProcess(Deno.execPath(), args);
    const ready = await process.line();
    const pid = Number(ready?.split(" ")[1]);
    assert.ok(ready?.startsWith("ready ") && pid > 0, ready);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.floor(random() * 600))
    );
    // The removing process itself: killing strace would let it finish.
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // It finished first.
    }
    await process.end();
    const removed: string[] = [];
    for (;;) {
      const line = await process.line();
      if (line === undefined) break;
      if (line.startsWith("removed ")) removed.push(line.slice(8));
    }
    await process.status;
    const outcome = await useStore(root, (store) =>
      Effect.gen(function* () {
        const found: Record<string, number | "gone"> = {};
        for (const id of IDS) {
          found[id] = yield* Effect.scoped(
            store.open(id, { mode: "write" }).pipe(
              Effect.map((h): number | "gone" => h.session.surface.nextSeq),
              Effect.catchTag(
                "SessionNotFound",
                () => Effect.succeed("gone" as const),
              ),
            ),
          );
        }
        const listed = yield* store.list();
        const page = yield* store.list({ limit: 10 });
        // A new session under a gone id starts from nothing.
        const recreated: Record<string, number> = {};
        for (const id of IDS) {
          if (found[id] !== "gone") continue;
          recreated[id] = yield* Effect.scoped(Effect.gen(function* () {
            yield* store.create({ id, createdAt: 1, isSeeded: false });
            return (yield* store.open(id)).session.surface.nextSeq;
          }));
        }
        return {
          found,
          listed,
          page: page.sessions.map((e) => e.id),
          recreated,
        };
      }));
    const present = IDS.filter((id) => outcome.found[id] !== "gone");
    for (const id of IDS) {
      const found = outcome.found[id];
      assert.ok(
        found === "gone" || found === events,
        `${id}: ${found} of ${events} events`,
      );
      if (found === "gone") gone += 1;
      else whole += 1;
    }
    for (const id of removed) {
      assert.equal(outcome.found[id], "gone", `${id} said removed`);
    }
    assert.deepEqual(outcome.listed, present);
    assert.deepEqual([...outcome.page].sort(), [...outcome.listed]);
    for (const count of Object.values(outcome.recreated)) {
      assert.equal(count, 0);
    }
    fs.rmSync(path.join(root), { recursive: true, force: true });
  }
  console.log(
    `remove kill campaign: ${RUNS} runs, ${whole} sessions whole, ${gone} gone`,
  );
  assert.ok(
    gone > 0 && whole > 0,
    "the kills landed before and after removals",
  );
});
