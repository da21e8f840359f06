/**
 * `deno run -A postgres_writer.ts URL MODE ID [N]`: the conformance suite's
 * other process over the PostgreSQL store at URL (see `runWriterProcess` in `@palimpsest/session/testing`).
 *
 * @module
 */
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { runWriterProcess } from "@palimpsest/session/testing";

const [url = "", ...args] = Deno.args;
await runWriterProcess(layerPostgresStore({ url }), args);
// The pool's idle connections would keep the process alive.
Deno.exit(0);
