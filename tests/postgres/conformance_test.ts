/**
 * The store conformance suite against the PostgreSQL layer, with writers
 * in other processes (`tests/store/postgres_writer.ts`). It runs when
 * `PALIMPSEST_PG_URL` names a server (`bash tools/with_postgres.sh deno
 * task test` starts a throwaway one). Its fault suite, the connection cut
 * at each point of the write protocol through a relay, is
 * `tests/postgres/fault_test.ts`. The checkpoint suite reads and replaces
 * the rows of `palimpsest_checkpoints` directly.
 *
 * @module
 */
import { Effect, Layer, Redacted, Result } from "effect";
import * as Reactivity from "effect/reactivity/Reactivity";
import { PgClient } from "@effect/sql-pg";
import type { Session } from "@palimpsest/session";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import {
  checkpointConformance,
  spawnDenoWriter,
  storeConformance,
} from "@palimpsest/session/testing";
import { renderSessionHtml } from "@palimpsest/session/view";
import { databaseUrl, postgresUrl } from "../_helpers/postgres.ts";

const writer = new URL("../store/postgres_writer.ts", import.meta.url)
  .pathname;

if (postgresUrl !== undefined) {
  const url = postgresUrl;
  // The writers' lease is short here, so that a killed writer's session
  // is free again soon (the suite waits that long for it).
  storeConformance({
    name: "layerPostgresStore",
    layer: () =>
      layerPostgresStore({
        url,
        pollInterval: "50 millis",
        lease: "2 seconds",
      }),
    spawnWriter: (args) => spawnDenoWriter(writer, [url], args),
    claimOutlivesWriter: 2000,
  });

  /** Runs raw SQL on the database at `at`. */
  const sql = (at: string, text: string, params: ReadonlyArray<unknown>) =>
    Effect.runPromise(Effect.scoped(Effect.flatMap(
      PgClient.makeClient({ url: Redacted.make(at) }).pipe(
        Effect.provide(Reactivity.layer),
      ),
      (client) => client.unsafe<{ body: string }>(text, [...params]),
    )));
  // Each store the checkpoint suite makes is empty and its own (it stores
  // the same id in two of them): a database each, dropped after the suite.
  const databases: string[] = [];
  // The HTML view, asked of a session opened from a checkpoint as of the whole.
  const readers = {
    view: (session: Session) => Result.getOrThrow(renderSessionHtml(session)),
  };
  checkpointConformance({
    readers,
    name: "layerPostgresStore",
    make: (checkpoints) => {
      const name = `palimpsest_checkpoints_${
        crypto.randomUUID().replaceAll("-", "")
      }`;
      databases.push(name);
      const at = databaseUrl(url, name);
      const created = sql(url, `CREATE DATABASE ${name}`, []);
      return {
        layer: Layer.unwrap(Effect.map(
          Effect.promise(() => created),
          () =>
            layerPostgresStore({
              url: at,
              pollInterval: "50 millis",
              checkpoints,
            }),
        )),
        get: async (id) => {
          await created;
          const rows = await sql(
            at,
            "SELECT body FROM palimpsest_checkpoints WHERE session_id = $1",
            [id],
          );
          return rows[0]?.body;
        },
        set: async (id, text) => {
          await created;
          await sql(
            at,
            `INSERT INTO palimpsest_checkpoints (session_id, seq, body) VALUES ($1, 0, $2)
             ON CONFLICT (session_id) DO UPDATE SET body = EXCLUDED.body`,
            [id, text],
          );
        },
      };
    },
  });
  Deno.test("layerPostgresStore: the checkpoint suite's databases are dropped", async () => {
    for (const name of databases.splice(0)) {
      await sql(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, []);
    }
  });
}
