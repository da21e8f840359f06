/**
 * The store conformance suite against the PostgreSQL layer, with writers
 * in other processes (`tests/store/postgres_writer.ts`). It runs when
 * `PALIMPSEST_PG_URL` names a server (`bash tools/with_postgres.sh deno
 * task test` starts a throwaway one). Its fault suite, the connection cut
 * at each point of the write protocol through a relay, is
 * `tests/postgres/fault_test.ts`.
 *
 * @module
 */
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { spawnDenoWriter, storeConformance } from "../store/conformance.ts";
import { postgresUrl } from "../_helpers/postgres.ts";

const writer = new URL("../store/postgres_writer.ts", import.meta.url)
  .pathname;

if (postgresUrl !== undefined) {
  const url = postgresUrl;
  storeConformance({
    name: "layerPostgresStore",
    layer: () => layerPostgresStore({ url, pollInterval: "50 millis" }),
    spawnWriter: (args) => spawnDenoWriter(writer, [url], args),
  });
}
