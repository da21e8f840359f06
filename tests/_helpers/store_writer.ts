/**
 * A second process for the store's lock tests.
 *
 * `deno run -A store_writer.ts ROOT ID try` opens ID for writing, prints
 * `opened` or the error tag, and exits. `... hold` opens it, prints
 * `opened` (or the tag and exits), then appends one turn/start per line
 * read on stdin, printing `appended N`, and closes when stdin ends.
 *
 * @module
 */
import { Effect } from "effect";
import process from "node:process";
import { createInterface } from "node:readline";
import { layerJsonlStore, SessionStore } from "@palimpsest/session";

const [root = ".", id = "s", mode = "try"] = Deno.args;

const program = Effect.gen(function* () {
  const store = yield* SessionStore;
  const opened = yield* Effect.result(store.open(id, { mode: "write" }));
  if (opened._tag === "Failure") {
    console.log(opened.failure._tag);
    return;
  }
  const handle = opened.success;
  console.log("opened");
  if (mode === "hold") {
    const lines = createInterface({ input: process.stdin });
    let turn = 1000;
    for (;;) {
      const next = yield* Effect.promise(() =>
        new Promise<string | undefined>((resolve) => {
          lines.once("line", resolve);
          lines.once("close", () => resolve(undefined));
        })
      );
      if (next === undefined) break;
      const { session } = yield* store.append(handle, [
        { type: "turn/start", data: { turn: turn++ } },
      ]);
      console.log(`appended ${session.surface.nextSeq}`);
    }
  }
  yield* store.close(handle);
});

await Effect.runPromise(
  Effect.scoped(program).pipe(Effect.provide(layerJsonlStore({ root }))),
);
