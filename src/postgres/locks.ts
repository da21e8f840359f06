/**
 * The advisory locks of the PostgreSQL store, as SQL over a session id:
 * the writer's claim (session-level, for the writer's life) and the write
 * lock a `create` holds; and the server process a claim was taken by.
 *
 * @module
 * @internal
 */

/** The SQL behind the claim: a session-level lock on a key of the id. */
export const CLAIM_KEY = "hashtextextended('palimpsest:' || $1, 0)";

/**
 * A transaction-level lock a `create` holds until it ends, so that a check
 * of its outcome can wait for it (an append holds the head row instead).
 */
export const WRITE_KEY = "hashtextextended('palimpsest-write:' || $1, 0)";

/**
 * The `pg_locks` rows (as `l`) of the claim on session `$1` in this
 * database.
 */
export const CLAIM_LOCKS: string = `l.locktype = 'advisory' AND l.granted
  AND l.objsubid = 1
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid::bigint = ((${CLAIM_KEY}) >> 32) & 4294967295
  AND l.objid::bigint = (${CLAIM_KEY}) & 4294967295`;

/**
 * A writer's server process: its `pg_backend_pid()`, and its start time
 * (epoch seconds as text; undefined when the server does not show it),
 * which tells it from a later process given the same pid.
 */
export interface WriterBackend {
  readonly pid: number;
  readonly startedAt: string | undefined;
}
