/**
 * `deno run -A postgres_writer.ts URL MODE ID [N]`: the conformance suite's
 * other process over the PostgreSQL store at URL (see `writer_process.ts`).
 *
 * @module
 */
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { runWriterProcess } from "./writer_process.ts";

const [url = "", ...args] = Deno.args;
await runWriterProcess(layerPostgresStore({ url }), args);
// The pool's idle connections would keep the process alive.
Deno.exit(0);
