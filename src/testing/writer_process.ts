/**
 * The other process of the store conformance suite: a writer that speaks a
 * line protocol, run against whatever layer its entry file provides. A
 * backend's writer program is a few lines: read where the storage is from
 * its first arguments, then call {@link runWriterProcess} with its layer
 * and the rest.
 *
 * `try ID`: opens ID for writing, prints `opened` or the error tag, exits.
 * `hold ID`: opens ID for writing, prints `opened` (or the tag and exits),
 * then appends one `turn/start` per stdin line, printing `appended SEQ`
 * once the batch is stored, and releases the session when stdin ends.
 * `race ID N`: like `hold`, but once opened waits for a stdin line, then
 * appends N events in batches of 1 to 3 and prints `done`, then waits for
 * stdin to end.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import type * as Layer from "effect/Layer";
import process from "node:process";
import { createInterface } from "node:readline";
import { SessionStore } from "../store/store.ts";

const nextLine = (
  lines: ReturnType<typeof createInterface>,
): Effect.Effect<string | undefined> =>
  Effect.callback<string | undefined>((resume) => {
    const onLine = (line: string) => {
      lines.off("close", onClose);
      resume(Effect.succeed(line));
    };
    const onClose = () => {
      lines.off("line", onLine);
      resume(Effect.succeed(undefined));
    };
    lines.once("line", onLine);
    lines.once("close", onClose);
  });

/**
 * Runs the protocol with `args` (`MODE ID [N]`) against `layer`.
 *
 * @param layer The store layer, over the same storage as the test's.
 * @param args The command line.
 * @returns A promise that settles when the process may exit.
 *
 * @example The writer program of a JSONL store (`my_writer.ts ROOT MODE ID [N]`)
 * ```ts ignore
 * import { layerJsonlStore } from "@palimpsest/session";
 * import { runWriterProcess } from "@palimpsest/session/testing";
 *
 * const [root = ".", ...args] = Deno.args;
 * await runWriterProcess(layerJsonlStore({ root }), args);
 * ```
 */
export function runWriterProcess(
  layer: Layer.Layer<SessionStore, unknown>,
  args: ReadonlyArray<string>,
): Promise<void> {
  const [mode = "try", id = "s", countText = "0"] = args;
  const lines = createInterface({ input: process.stdin });
  const program = Effect.gen(function* () {
    const store = yield* SessionStore;
    const opened = yield* Effect.result(store.open(id, { mode: "write" }));
    if (opened._tag === "Failure") {
      console.log(opened.failure._tag);
      return;
    }
    const handle = opened.success;
    console.log("opened");
    if (mode === "try") return;
    let turn = 1000;
    if (mode === "race") {
      // The appends wait for a line: the test sends it once every racer
      // has answered, so that the winner's writes do not share the machine
      // with the others starting (a writer starved past its lease loses
      // it, rightly, and the race would then have two winners).
      if ((yield* nextLine(lines)) === undefined) return;
      let left = Number(countText);
      while (left > 0) {
        const size = Math.min(left, 1 + (left % 3));
        const batch = Array.from(
          { length: size },
          () => ({ type: "turn/start" as const, data: { turn: turn++ } }),
        );
        yield* store.append(handle, batch);
        left -= size;
      }
      console.log("done");
    }
    for (;;) {
      const line = yield* nextLine(lines);
      if (line === undefined) break;
      const { events } = yield* store.append(handle, [
        { type: "turn/start", data: { turn: turn++ } },
      ]);
      console.log(`appended ${events[0]?.seq}`);
    }
  });
  return Effect.runPromise(
    Effect.scoped(program).pipe(Effect.provide(layer)),
  ).finally(() => lines.close());
}
