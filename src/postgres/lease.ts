/**
 * The writer's lease, as SQL over the session's head row: one writer per
 * session through a transaction pooler and on engines without session
 * advisory locks. A writer claims the session by setting a fencing token
 * of its own (`writer_token`) and a time its lease runs out
 * (`lease_until`, server time) in one `UPDATE` that only matches a row
 * whose lease is free or has run out; each append renews the lease in the
 * same statement that checks the token under the row lock, so a writer
 * whose lease was taken over can never commit, however late its statement
 * arrives; a heartbeat renews the lease while the writer is idle, and
 * close gives it back.
 *
 * Each statement is one round trip that holds no state across
 * transactions; the parameters are numbered as each statement documents.
 *
 * @module
 * @internal
 */
import { EVENTS_CHANNEL, EVENTS_TABLE, SESSIONS_TABLE } from "./schema.ts";

/** `lease_until` of a lease of `$n` seconds from now, server time. */
const leaseFrom = (n: number): string =>
  `now() + make_interval(secs => $${n}::float8)`;

/**
 * Claims session `$1` for token `$2`, writer `$3`, for `$4` seconds, when
 * its lease is free or has run out; with `takeover`, whatever holds it.
 * Returns the claimed row's `next_seq` (no row: missing or held).
 */
export const claimStatement = (takeover: boolean): string =>
  `UPDATE ${SESSIONS_TABLE}
   SET writer_token = $2, writer = $3, lease_until = ${leaseFrom(4)}
   WHERE id = $1${
    takeover ? "" : " AND (lease_until IS NULL OR lease_until < now())"
  }
   RETURNING next_seq`;

/**
 * Who holds session `$1`, and until when (epoch ms); whether its lease is
 * live.
 */
export const HOLDER_STATEMENT: string = `SELECT writer,
   (extract(epoch FROM lease_until) * 1000)::float8 AS until,
   (lease_until IS NOT NULL AND lease_until >= now()) AS live
 FROM ${SESSIONS_TABLE} WHERE id = $1`;

/** Renews the lease of token `$2` on session `$1` for `$3` seconds. */
export const RENEW_STATEMENT: string = `UPDATE ${SESSIONS_TABLE}
 SET lease_until = ${leaseFrom(3)}
 WHERE id = $1 AND writer_token = $2 RETURNING 1 AS ok`;

/** Gives back the lease of token `$2` on session `$1`. */
export const RELEASE_STATEMENT: string = `UPDATE ${SESSIONS_TABLE}
 SET writer_token = NULL, writer = NULL, lease_until = NULL
 WHERE id = $1 AND writer_token = $2`;

/**
 * Replaces token `$2` of session `$1` by `$3` (under the row lock, so
 * after any write in flight has ended): a late copy of a write sent with
 * the old token can never commit. Returns the head (no row: the lease was
 * taken over, or the session is gone).
 */
export const ROTATE_STATEMENT: string = `UPDATE ${SESSIONS_TABLE}
 SET writer_token = $3 WHERE id = $1 AND writer_token = $2
 RETURNING header, next_seq`;

/** Gives up whatever lease session `$1` has; returns whether one was live. */
export const BREAK_STATEMENT: string = `UPDATE ${SESSIONS_TABLE} s
 SET writer_token = NULL, writer = NULL, lease_until = NULL
 FROM (SELECT id, lease_until FROM ${SESSIONS_TABLE} WHERE id = $1 FOR UPDATE) o
 WHERE s.id = o.id
 RETURNING (o.lease_until IS NOT NULL AND o.lease_until >= now()) AS live`;

/**
 * An append as one statement: moves the head of session `$1` from seq
 * `$2` to `$3` (adding `$4` bytes) only when token `$5` holds its lease,
 * renews the lease for `$6` seconds, keeps `$9` as the session's first
 * user text unless it has one (the catalogue's), and inserts the rows
 * (`$7` seqs, `$8` lines) only when the head moved; with `notify`, signals the
 * followers (delivered at commit). One row (`n` rows inserted) when the
 * append is stored; none when the head or the token did not match.
 */
export const appendStatement = (notify: boolean): string =>
  `WITH h AS (
   UPDATE ${SESSIONS_TABLE}
   SET next_seq = $3, bytes = bytes + $4, updated_at = now(),
     lease_until = ${leaseFrom(6)}, first_text = COALESCE(first_text, $9::text)
   WHERE id = $1 AND next_seq = $2 AND writer_token = $5
   RETURNING id
 ), ins AS (
   INSERT INTO ${EVENTS_TABLE} (session_id, seq, line)
   SELECT h.id, r.seq, r.line FROM h, unnest($7::bigint[], $8::text[]) AS r(seq, line)
   RETURNING 1
 )
 SELECT (SELECT count(*) FROM ins)::int AS n${
    notify ? `, pg_notify('${EVENTS_CHANNEL}', h.id) IS NULL AS notified` : ""
  } FROM h`;

/**
 * More rows of a batch whose first statement moved the head (the same
 * transaction): inserts `$2` seqs and `$3` lines of session `$1`.
 */
export const MORE_ROWS_STATEMENT: string =
  `INSERT INTO ${EVENTS_TABLE} (session_id, seq, line)
 SELECT $1, r.seq, r.line FROM unnest($2::bigint[], $3::text[]) AS r(seq, line)`;

/**
 * A create as one statement: the head row of session `$1` (version `$2`,
 * header `$3`, next seq `$4`, bytes `$5`, created at `$6`) with the lease
 * of token `$7`, writer `$8`, for `$9` seconds, unless a row with the id
 * exists; the rows (`$10` seqs, `$11` lines) with it. One row when
 * created, none when the id is taken.
 */
export const CREATE_STATEMENT: string = `WITH h AS (
   INSERT INTO ${SESSIONS_TABLE}
     (id, version, header, next_seq, bytes, created_at, writer_token, writer, lease_until)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, ${leaseFrom(9)})
   ON CONFLICT (id) DO NOTHING RETURNING id
 ), ins AS (
   INSERT INTO ${EVENTS_TABLE} (session_id, seq, line)
   SELECT h.id, r.seq, r.line FROM h, unnest($10::bigint[], $11::text[]) AS r(seq, line)
   RETURNING 1
 )
 SELECT (SELECT count(*) FROM ins)::int AS n FROM h`;

/**
 * Why an append matched no row: session `$1`'s head and whether token `$2`
 * holds its lease.
 */
export const MISMATCH_STATEMENT: string =
  `SELECT next_seq, (writer_token IS NOT DISTINCT FROM $2) AS mine
 FROM ${SESSIONS_TABLE} WHERE id = $1`;

/**
 * Waits (up to the transaction's `lock_timeout`) until no write of session
 * `$1` is in flight, and reads its head: for the check of a write left
 * without an answer.
 */
export const SETTLE_HEAD_STATEMENT: string =
  `SELECT header, next_seq, writer_token
 FROM ${SESSIONS_TABLE} WHERE id = $1 FOR UPDATE`;

/**
 * Waits until no create of session `$1` is in flight (an insert of the
 * same key waits for it): a row back means no session was stored (the
 * caller rolls the probe back).
 */
export const PROBE_CREATE_STATEMENT: string = `INSERT INTO ${SESSIONS_TABLE}
 (id, version, header, next_seq, bytes, created_at, writer_token, writer, lease_until)
 VALUES ($1, 0, '', 0, 0, 0, 'probe', 'probe', now())
 ON CONFLICT (id) DO NOTHING RETURNING id`;

/**
 * The server process whose transaction holds session `$1`'s head row (its
 * `xmax` is that transaction), for `resolveAppend`'s `terminateWriter`.
 */
export const HOLDING_PROCESS_STATEMENT: string = `SELECT a.pid
 FROM ${SESSIONS_TABLE} s JOIN pg_stat_activity a ON a.backend_xid = s.xmax
 WHERE s.id = $1 AND s.xmax <> '0'::xid`;

/** Who a writer is, for `SessionLocked`: its process and host. */
export interface WriterName {
  /** The holder's process id, on its machine. */
  readonly pid: number | undefined;
  /** The holder's host name. */
  readonly host: string | undefined;
  /** The holder's program. */
  readonly application: string;
}

/**
 * This process's name as a writer, stored in the head row while it holds
 * a lease.
 */
export const thisWriter = (application: string): string => {
  const pid = typeof Deno === "undefined" ? processId() : Deno.pid;
  let host: string | undefined;
  try {
    // Asked only when granted: a program without --allow-sys is never
    // prompted for it, and its name goes without its host.
    host = typeof Deno !== "undefined" &&
        Deno.permissions.querySync({ name: "sys", kind: "hostname" })
            .state === "granted"
      ? Deno.hostname()
      : undefined;
  } catch {
    host = undefined;
  }
  return JSON.stringify({ pid, host, application });
};

/** The pid of a Node process, without importing `node:process`. */
const processId = (): number | undefined => {
  const proc: unknown = Reflect.get(globalThis, "process");
  if (typeof proc !== "object" || proc === null) return undefined;
  const pid: unknown = Reflect.get(proc, "pid");
  return typeof pid === "number" ? pid : undefined;
};

/** A stored writer name, read back; undefined parts when unreadable. */
export const parseWriter = (text: string | null): WriterName => {
  try {
    const value: unknown = text === null ? undefined : JSON.parse(text);
    if (typeof value !== "object" || value === null) throw value;
    const pid: unknown = Reflect.get(value, "pid");
    const host: unknown = Reflect.get(value, "host");
    const application: unknown = Reflect.get(value, "application");
    return {
      pid: typeof pid === "number" ? pid : undefined,
      host: typeof host === "string" ? host : undefined,
      application: typeof application === "string" ? application : "palimpsest",
    };
  } catch {
    return { pid: undefined, host: undefined, application: "palimpsest" };
  }
};
