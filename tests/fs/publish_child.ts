/**
 * `deno run -A publish_child.ts OP DIR`: one publish of a new file through
 * `durable_file.ts`, for the tests that kill it half way. It prints
 * `pid N` first, then does OP and prints `done`:
 *
 * - `migrate`: `migrateFile(DIR/s.jsonl)` to `DIR/s.v3.jsonl`;
 * - `import`: `importFile(DIR/c.jsonl, claude-code)` to `DIR/c.v3.jsonl`;
 * - `view`: the page of `DIR/s.jsonl` to `DIR/s.html`;
 * - `create`: session `s` created in the store over `DIR/store`.
 *
 * @module
 */
import { Effect } from "effect";
import * as path from "node:path";
import { makeJsonlStore, Session } from "@palimpsest/session";
import { migrateFile } from "@palimpsest/session/migrations";
import { importFile } from "@palimpsest/session/import";
import { writeSessionHtmlFile } from "@palimpsest/session/view";

const [op = "migrate", dir = "."] = Deno.args;
console.log(`pid ${Deno.pid}`);

const programs: Record<string, Effect.Effect<unknown, unknown>> = {
  migrate: migrateFile(path.join(dir, "s.jsonl")),
  import: importFile(path.join(dir, "c.jsonl"), {
    from: "claude-code",
    out: path.join(dir, "c.v3.jsonl"),
  }),
  view: writeSessionHtmlFile(
    Session.make({ id: "s", createdAt: 0, isSeeded: false }),
    path.join(dir, "s.html"),
  ),
  create: Effect.scoped(Effect.flatMap(
    makeJsonlStore({ root: path.join(dir, "store") }),
    (store) => store.create({ id: "s", createdAt: 0, isSeeded: false }),
  )),
};
const program = programs[op];
if (program === undefined) throw new Error(`unknown op ${op}`);
await Effect.runPromise(program);
console.log("done");
