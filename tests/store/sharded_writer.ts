/**
 * `deno run -A sharded_writer.ts "URL URL ..." MODE ID [N]`: the
 * conformance suite's other process over the sharded PostgreSQL store of
 * those servers (named `s0`, `s1`, ... in order; see `runWriterProcess` in
 * `@palimpsest/session/testing`).
 *
 * @module
 */
import { layerShardedPostgresStore } from "@palimpsest/session/postgres";
import { runWriterProcess } from "@palimpsest/session/testing";

const [urls = "", ...args] = Deno.args;
const servers = urls.split(" ").map((url, i) => ({ name: `s${i}`, url }));
await runWriterProcess(layerShardedPostgresStore({ servers }), args);
// The pools' idle connections would keep the process alive.
Deno.exit(0);
