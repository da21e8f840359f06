/**
 * The writer the crash tests kill: `deno run -A crash_writer.ts ROOT ID
 * SEED` creates session ID under ROOT and appends the standard workload,
 * one harness-sized batch at a time, printing `ok N` (N = the next seq)
 * after each append resolves, until it is killed or has written 400 turns.
 * Some tool results are large, so a kill can land in the middle of a write.
 * A kill rarely tears a line (the kernel finishes a write to the page
 * cache), so some seeds also simulate a power-loss tear: after a number of
 * batches the writer appends half a line behind the store's back, prints
 * `tear`, and waits to be killed.
 *
 * @module
 */
import { Effect, Result } from "effect";
import * as fs from "node:fs";
import * as path from "node:path";
import { layerJsonlStore, SessionStore } from "@palimpsest/session";
import { encodeSessionId } from "@palimpsest/session/jsonl";
import { mulberry32 } from "./workload.ts";
import { turnBatches } from "./build.ts";

const [root = ".", id = "crash", seedText = "1"] = Deno.args;
const random = mulberry32(Number(seedText));
const file = path.join(
  root,
  `${Result.getOrThrow(encodeSessionId(id))}.jsonl`,
);

const program = Effect.gen(function* () {
  const store = yield* SessionStore;
  const handle = yield* store.create({ id, createdAt: 0, isSeeded: false });
  const tearAt = random() < 0.2 ? 1 + Math.floor(random() * 30) : -1;
  let batches = 0;
  for (let turn = 0; turn < 400; turn++) {
    const big = random() < 0.2;
    const text = big
      ? "r".repeat(64 * 1024 + Math.floor(random() * 512 * 1024))
      : "small";
    for (const batch of turnBatches(turn, text)) {
      const { session } = yield* store.append(handle, batch);
      console.log(`ok ${session.surface.nextSeq}`);
      if (++batches === tearAt) {
        fs.appendFileSync(file, '{"type":"user/message","seq":');
        console.log("tear");
        // A timer keeps the process alive (a bare never would let it exit).
        yield* Effect.sleep("1 hour");
      }
    }
  }
  yield* store.close(handle);
});

await Effect.runPromise(
  Effect.scoped(program).pipe(Effect.provide(layerJsonlStore({ root }))),
);
