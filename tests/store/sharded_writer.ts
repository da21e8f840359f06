/**
 * `deno run -A sharded_writer.ts "URL URL ..." MODE ID [N]`: the
 * conformance suite's other process over the sharded PostgreSQL store of
 * those servers (named `s0`, `s1`, ... in order; see `runWriterProcess` in
 * `@palimpsest/session/testing`).
 *
 * @module
 */
import { Effect, Layer } from "effect";
import { SessionStore } from "@palimpsest/session";
import { makeShardedPostgresStore } from "@palimpsest/session/postgres";
import { runWriterProcess } from "@palimpsest/session/testing";

const [urls = "", ...args] = Deno.args;
// A short lease: the suite waits for a killed writer's to run out.
const servers = urls.split(" ").map((url, i) => ({
  name: `s${i}`,
  url,
  lease: "5 seconds" as const,
}));
// 20 of these start at once, each connecting to every server: on a loaded
// machine a connection can time out before the server answers. Retrying
// the start changes nothing the suite checks (who gets the claim, what is
// stored); a process that never starts fails it.
const store = makeShardedPostgresStore({ servers }).pipe(
  Effect.retry({ times: 3 }),
);
await runWriterProcess(Layer.effect(SessionStore)(store), args);
// The pools' idle connections would keep the process alive.
Deno.exit(0);
