/**
 * A second process for the follow tests: a writer that keeps leaving torn
 * tails and resuming after them, as a crashing and restarting harness does.
 *
 * `deno run -A torn_writer.ts ROOT ID CYCLES SEED`: CYCLES times, writes
 * the start of the next event's line without its end (a torn tail), then
 * opens ID for writing (which cuts that tail) and appends 1 to 3 events in
 * one batch, then releases the session. Prints `done CYCLES` at the end.
 *
 * @module
 */
import { Effect, Result } from "effect";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeJsonlStore, Session } from "@palimpsest/session";
import { encodeSessionId } from "@palimpsest/session/jsonl";
import { mulberry32 } from "./workload.ts";

const [root = ".", id = "s", cyclesText = "10", seedText = "1"] = Deno.args;
const cycles = Number(cyclesText);
const random = mulberry32(Number(seedText));
const file = path.join(
  root,
  `${Result.getOrThrow(encodeSessionId(id))}.jsonl`,
);
const store = Effect.runSync(makeJsonlStore({ root }));

let turn = 0;
for (let cycle = 0; cycle < cycles; cycle++) {
  // A writer dies in the middle of a line: the start of the next event's
  // line, cut inside its time, so the torn bytes could pass for the start
  // of the line written in their place.
  const next = await Effect.runPromise(
    store.withSession(id, (writer) =>
      Effect.sync(() => {
        const seq = Session.nextSeq(writer.session);
        const zeros = "0".repeat(1 + Math.floor(random() * 8));
        fs.appendFileSync(
          file,
          `{"type":"turn/start","seq":${seq},"time":1${zeros}`,
        );
        return seq;
      })),
  );
  await new Promise((resolve) => setTimeout(resolve, random() * 4));
  // The next writer opens the session (cutting the torn tail) and appends.
  const size = 1 + Math.floor(random() * 3);
  const batch = Array.from({ length: size }, () => ({
    type: "turn/start" as const,
    data: { turn: turn++ },
  }));
  const { events } = await Effect.runPromise(
    store.withSession(id, (writer) => store.append(writer, batch)),
  );
  if (events[0]?.seq !== next) throw new Error(`appended at ${events[0]?.seq}`);
}
console.log(`done ${cycles}`);
