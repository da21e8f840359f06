/**
 * A writer process for the PostgreSQL store's claim tests.
 *
 * `deno run -A _writer.ts URL ID EVENTS` opens ID for writing and prints
 * the error tag and exits when that fails. Otherwise it appends EVENTS
 * `turn/start` events one batch at a time, prints `wrote N` (the next seq),
 * and holds the claim until stdin ends (or the process is killed).
 *
 * @module
 */
import { Effect } from "effect";
import process from "node:process";
import { SessionStore } from "@palimpsest/session";
import { layerPostgresStore } from "../../src/postgres/store.ts";

const [url = "", id = "s", count = "0"] = Deno.args;

const stdinEnded = new Promise<void>((resolve) => {
  process.stdin.on("data", () => {});
  process.stdin.on("end", () => resolve());
  process.stdin.on("close", () => resolve());
});

const program = Effect.gen(function* () {
  const store = yield* SessionStore;
  const opened = yield* Effect.result(store.open(id, { mode: "write" }));
  if (opened._tag === "Failure") {
    console.log(opened.failure._tag);
    return;
  }
  const handle = opened.success;
  let next = handle.session.surface.nextSeq;
  for (let i = 0; i < Number(count); i++) {
    const session = yield* store.append(handle, [
      { type: "turn/start", data: { turn: next } },
    ]);
    next = session.surface.nextSeq;
  }
  console.log(`wrote ${next}`);
  yield* Effect.promise(() => stdinEnded);
  yield* store.close(handle);
});

await Effect.runPromise(
  program.pipe(Effect.provide(layerPostgresStore({ url }))),
);
process.exit(0);
