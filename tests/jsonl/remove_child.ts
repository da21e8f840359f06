/**
 * A process that removes sessions of a JSONL store one after another, for
 * `remove_kill_test.ts`: `deno run -A remove_child.ts ROOT ID...` prints
 * `ready PID` once the store is open, then `removed ID` after each removal.
 *
 * @module
 */
import { Effect } from "effect";
import { makeJsonlStore } from "@palimpsest/session";

const [root, ...ids] = Deno.args;
if (root === undefined) throw new Error("Usage: remove_child.ts ROOT ID...");
const store = Effect.runSync(makeJsonlStore({ root }));
console.log(`ready ${Deno.pid}`);
for (const id of ids) {
  await Effect.runPromise(store.remove(id));
  console.log(`removed ${id}`);
}
