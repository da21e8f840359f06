/**
 * The PostgreSQL catalogue's migration: a database of an earlier release
 * (no catalogue columns, migrations 1 and 2 recorded) gains the columns
 * and indexes on the next start of a store, its sessions' first user texts
 * filled from their events, and they answer queries at once.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import { makePostgresStore } from "@palimpsest/session/postgres";
import { postgresTest, querySql } from "../_helpers/postgres.ts";

const user = (text: string) => ({
  type: "user/message" as const,
  surfaceOp: "append" as const,
  data: {
    id: "u0",
    role: "user" as const,
    content: [{ type: "text" as const, text }],
    source: { kind: "user" as const },
  },
});

postgresTest(
  "a database of an earlier release gains the catalogue columns, its first texts filled",
  async (url) => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      const store = yield* makePostgresStore({ url });
      for (
        const [id, text] of [["a", "why is the parser slow"], [
          "b",
          "deploy fails",
        ]]
      ) {
        const writer = yield* store.create({
          id: id ?? "",
          createdAt: 0,
          isSeeded: false,
        });
        yield* store.append(writer, [user(text ?? "")]);
      }
    })));
    // As an earlier release left it.
    await querySql(
      url,
      `ALTER TABLE palimpsest_sessions DROP COLUMN title, DROP COLUMN tags,
         DROP COLUMN labels, DROP COLUMN cwd, DROP COLUMN metadata, DROP COLUMN first_text`,
    );
    await querySql(
      url,
      "DROP INDEX palimpsest_sessions_updated, palimpsest_sessions_created",
    );
    await querySql(
      url,
      "DELETE FROM palimpsest_migrations WHERE migration_id > 2",
    );
    const page = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      const store = yield* makePostgresStore({ url });
      return yield* store.list({ search: "PARSER" });
    })));
    assert.deepEqual(
      page.sessions.map((entry) => [entry.id, entry.firstText]),
      [
        ["a", "why is the parser slow"],
      ],
    );
    const indexes = await querySql(
      url,
      "SELECT indexname FROM pg_indexes WHERE tablename = 'palimpsest_sessions' ORDER BY indexname",
    );
    assert.deepEqual(indexes.map((row) => row.indexname), [
      "palimpsest_sessions_created",
      "palimpsest_sessions_labels",
      "palimpsest_sessions_pkey",
      "palimpsest_sessions_tags",
      "palimpsest_sessions_updated",
    ]);
  },
);
