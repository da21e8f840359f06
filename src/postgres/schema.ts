/**
 * The PostgreSQL schema of the session store, created and upgraded by
 * `effect/sql`'s `Migrator` (its own bookkeeping table is
 * `palimpsest_migrations`).
 *
 * - `palimpsest_sessions`: one head row per session. `header` is the
 *   header line exactly as the JSONL codec writes it (without `\n`);
 *   `next_seq` is the seq the next event takes, moved only by an append
 *   transaction that holds the row lock; `bytes` is the size the session
 *   has as a JSONL file, kept so `stat` reads one row. `writer_token`,
 *   `lease_until` and `writer` are the writer's lease (`lease.ts`).
 * - `palimpsest_events`: one row per event, keyed by `(session_id, seq)`;
 *   `line` is the event's canonical JSONL line (without `\n`), so a
 *   session holds the same bytes in either store. Seqs come from the head
 *   row, never from a database sequence (a rolled-back transaction would
 *   leave a gap).
 * - `palimpsest_checkpoints`: at most one row per session, its newest
 *   checkpoint (`src/log/checkpoint.ts`'s text) and the seq it covers up
 *   to; replaced in one statement (an upsert), so a reader sees the old
 *   checkpoint or the new one. Derived data: deleting rows costs the next
 *   open a whole replay and loses nothing; it goes with its session.
 * - The catalogue's columns of the head row (`title`, `tags`, `labels`,
 *   `cwd`, `metadata`, `first_text`) and their indexes: `catalogue.ts`.
 *
 * Migrations are append-only: a released one is never edited; a change is
 * a new entry in {@link storeMigrations}.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Migrator from "effect/sql/Migrator";
import { SqlClient } from "effect/sql/SqlClient";
import type { SqlError } from "effect/sql/SqlError";
import { FIRST_TEXT_CHARS } from "../store/catalogue.ts";

/** The table `Migrator` records applied migrations in. */
export const MIGRATIONS_TABLE = "palimpsest_migrations";

/** The session head rows. */
export const SESSIONS_TABLE = "palimpsest_sessions";

/** The event rows. */
export const EVENTS_TABLE = "palimpsest_events";

/** The checkpoint rows, one per session at most. */
export const CHECKPOINTS_TABLE = "palimpsest_checkpoints";

/** The trigger (and its function) that refuses writes without a lease. */
export const LEASE_GUARD = "palimpsest_require_lease";

/** The `NOTIFY` channel an append signals, with the session id as payload. */
export const EVENTS_CHANNEL = "palimpsest_events";

const createTables: Effect.Effect<void, SqlError, SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient;
    yield* sql.unsafe(`CREATE TABLE ${SESSIONS_TABLE} (
  id text PRIMARY KEY,
  version integer NOT NULL,
  header text NOT NULL,
  next_seq bigint NOT NULL DEFAULT 0 CHECK (next_seq >= 0),
  bytes bigint NOT NULL CHECK (bytes >= 0),
  created_at bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
)`);
    yield* sql.unsafe(`CREATE TABLE ${EVENTS_TABLE} (
  session_id text NOT NULL REFERENCES ${SESSIONS_TABLE} (id) ON DELETE CASCADE,
  seq bigint NOT NULL CHECK (seq >= 0),
  line text NOT NULL,
  PRIMARY KEY (session_id, seq)
)`);
  },
);

// A new table beside the others: a database of an earlier release gains
// it on its next start, and nothing that release stored changes.
const createCheckpoints: Effect.Effect<void, SqlError, SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient;
    yield* sql.unsafe(`CREATE TABLE IF NOT EXISTS ${CHECKPOINTS_TABLE} (
  session_id text PRIMARY KEY REFERENCES ${SESSIONS_TABLE} (id) ON DELETE CASCADE,
  seq bigint NOT NULL CHECK (seq >= 0),
  body text NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now()
)`);
  },
);

/**
 * Writer leases: the claim moves from a session-level advisory lock (which
 * neither a transaction pooler nor a distributed engine keeps) into the
 * head row. `writer_token` is the fencing token of the writer that holds
 * the session, `lease_until` when its lease runs out (server time), and
 * `writer` who it is, for `SessionLocked`. The trigger refuses a write
 * that moves the head without renewing a lease: a writer of a release
 * before leases (which knows nothing of the token) can still read a
 * migrated database, but every write of its is refused with SQL state
 * `55000` and a message that says so, so that it never writes beside a
 * leased writer.
 */
const addWriterLeases: Effect.Effect<void, SqlError, SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient;
    yield* sql.unsafe(`ALTER TABLE ${SESSIONS_TABLE}
  ADD COLUMN IF NOT EXISTS writer_token text,
  ADD COLUMN IF NOT EXISTS lease_until timestamptz,
  ADD COLUMN IF NOT EXISTS writer text`);
    yield* sql.unsafe(
      `CREATE OR REPLACE FUNCTION ${LEASE_GUARD}() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.writer_token IS NULL OR NEW.lease_until IS NULL OR (
    TG_OP = 'UPDATE' AND NEW.lease_until IS NOT DISTINCT FROM OLD.lease_until
  ) THEN
    RAISE EXCEPTION 'palimpsest: session % is written under a writer lease since this database was migrated; this writer predates leases (upgrade it)', NEW.id
      USING ERRCODE = '55000';
  END IF;
  RETURN NEW;
END $$`,
    );
    yield* sql.unsafe(
      `DROP TRIGGER IF EXISTS ${LEASE_GUARD} ON ${SESSIONS_TABLE}`,
    );
    yield* sql.unsafe(`CREATE TRIGGER ${LEASE_GUARD}
  BEFORE INSERT OR UPDATE OF next_seq ON ${SESSIONS_TABLE}
  FOR EACH ROW
  EXECUTE FUNCTION ${LEASE_GUARD}()`);
  },
);

/**
 * The migration that adds the catalogue's columns and indexes to the head
 * rows, and fills `first_text` from the events a database already holds
 * (no release before it wrote metadata events).
 */
const addCatalogue: Effect.Effect<void, SqlError, SqlClient> = Effect
  .gen(function* () {
    const sql = yield* SqlClient;
    yield* sql.unsafe(`ALTER TABLE ${SESSIONS_TABLE}
  ADD COLUMN IF NOT EXISTS title text,
  ADD COLUMN IF NOT EXISTS tags text[] NOT NULL DEFAULT '{}',
  ADD COLUMN IF NOT EXISTS labels jsonb NOT NULL DEFAULT '{}',
  ADD COLUMN IF NOT EXISTS cwd text,
  ADD COLUMN IF NOT EXISTS metadata jsonb,
  ADD COLUMN IF NOT EXISTS first_text text`);
    yield* sql.unsafe(
      `CREATE INDEX IF NOT EXISTS ${SESSIONS_TABLE}_updated ON ${SESSIONS_TABLE} (updated_at, id)`,
    );
    yield* sql.unsafe(
      `CREATE INDEX IF NOT EXISTS ${SESSIONS_TABLE}_created ON ${SESSIONS_TABLE} (created_at, id)`,
    );
    yield* sql.unsafe(
      `CREATE INDEX IF NOT EXISTS ${SESSIONS_TABLE}_tags ON ${SESSIONS_TABLE} USING gin (tags)`,
    );
    yield* sql.unsafe(
      `CREATE INDEX IF NOT EXISTS ${SESSIONS_TABLE}_labels ON ${SESSIONS_TABLE} USING gin (labels jsonb_path_ops)`,
    );
    yield* sql.unsafe(`UPDATE ${SESSIONS_TABLE} s SET first_text = f.text
FROM (
  SELECT DISTINCT ON (e.session_id) e.session_id, left(x.text, ${FIRST_TEXT_CHARS}) AS text
  FROM ${EVENTS_TABLE} e
  CROSS JOIN LATERAL (
    SELECT string_agg(b->>'text', E'\\n') AS text
    FROM jsonb_array_elements(
      CASE WHEN jsonb_typeof(e.line::jsonb#>'{data,content}') = 'array'
        THEN e.line::jsonb#>'{data,content}' ELSE '[]'::jsonb END) b
    WHERE b->>'type' = 'text'
  ) x
  WHERE e.line LIKE '{"type":"user/message"%'
    AND e.line::jsonb#>>'{data,source,kind}' = 'user'
    AND x.text IS NOT NULL
  ORDER BY e.session_id, e.seq
) f
WHERE f.session_id = s.id`);
  });

/** The store's migrations, by `<id>_<name>`. */
const storeMigrations: Record<
  string,
  Effect.Effect<void, SqlError, SqlClient>
> = {
  "1_create_sessions_and_events": createTables,
  "2_create_checkpoints": createCheckpoints,
  "3_writer_leases": addWriterLeases,
  "4_add_catalogue": addCatalogue,
};

const runMigrator = Migrator.make({});

/**
 * Creates or upgrades the store's tables; safe to run from many processes
 * at once (the migrator locks its table).
 *
 * @returns `Effect<ReadonlyArray<readonly [number, string]>,
 * MigrationError | SqlError, SqlClient>`: the migrations applied now.
 */
export const migrateStore: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError,
  SqlClient
> = runMigrator({
  loader: Migrator.fromRecord(storeMigrations),
  table: MIGRATIONS_TABLE,
});
