import assert from "node:assert/strict";
import { Effect, Redacted } from "effect";
import * as Reactivity from "effect/reactivity/Reactivity";
import { PgClient } from "@effect/sql-pg";
import { makePostgresStore } from "@palimpsest/session/postgres";
import { boundsCases, followVerdict } from "../_helpers/follow_bounds.ts";
import { HEADER } from "../_helpers/amplification_inputs.ts";
import { postgresTest } from "../_helpers/postgres.ts";

/** Stores a session's rows as they are, past the store's own checks. */
const storeRows = (
  url: string,
  id: string,
  lines: ReadonlyArray<string>,
): Promise<void> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(
    PgClient.makeClient({ url: Redacted.make(url) }).pipe(
      Effect.provide(Reactivity.layer),
    ),
    (sql) =>
      Effect.gen(function* () {
        const header = HEADER.replace('"id":"a"', `"id":${JSON.stringify(id)}`);
        yield* sql.unsafe(
          // As a writer would (under a lease, run out already).
          `INSERT INTO palimpsest_sessions (id, version, header, next_seq, bytes, created_at, writer_token, lease_until)
           VALUES ($1, 3, $2, $3, 0, 0, 'by-hand', now() - interval '1 second')`,
          [id, header, lines.length],
        );
        // One row per line, its seq its position (as the store writes them).
        yield* sql.unsafe(
          `INSERT INTO palimpsest_events (session_id, seq, line)
           SELECT $1, i - 1, line FROM unnest($2::text[]) WITH ORDINALITY AS t(line, i)`,
          [id, [...lines]],
        );
      }),
  )));

postgresTest(
  "the PostgreSQL follow refuses each amplification input as the reader does",
  async (url) => {
    const cases = boundsCases();
    const tags = new Set(cases.map((c) => c.reader.innerTag ?? c.reader.tag));
    assert.ok(tags.has("TooManyContainers") && tags.has("InvalidSourceRange"));
    // Given a store whose tables exist (its layer migrates them).
    await Effect.runPromise(Effect.scoped(makePostgresStore({ url })));
    for (const [index, c] of cases.entries()) {
      // Given the input's lines stored as a session's rows.
      const id = `bounds-${index}`;
      await storeRows(url, id, c.lines);
      // When the store follows the session from the start.
      const verdict = await Effect.runPromise(Effect.scoped(Effect.flatMap(
        makePostgresStore({ url, pollInterval: "50 millis" }),
        (store) => followVerdict(store.follow(id), c.lines.length),
      )));
      // Then it stops where the reader stops, for the same reason.
      assert.deepEqual(verdict, c.reader, c.name);
    }
  },
);
