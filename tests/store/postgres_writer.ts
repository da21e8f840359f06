/**
 * `deno run -A postgres_writer.ts URL MODE ID [N]`: the conformance suite's
 * other process over the PostgreSQL store at URL (see `runWriterProcess` in `@palimpsest/session/testing`).
 *
 * @module
 */
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { runWriterProcess } from "@palimpsest/session/testing";

const [url = "", ...args] = Deno.args;
// A short lease: the suite waits for a killed writer's to run out.
await runWriterProcess(layerPostgresStore({ url, lease: "2 seconds" }), args);
// The pool's idle connections would keep the process alive.
Deno.exit(0);
