#!/usr/bin/env bash
# Runs a command against the throwaway cluster `with_postgres.sh` started,
# as the store will run in production, by PALIMPSEST_PG_VIA:
#
#   direct       (the default) PALIMPSEST_PG_URL names the server itself;
#   pgbouncer    Debian's PgBouncer in transaction mode, stock settings
#                but for its address, its users and its client limit,
#                started beside the server (apt-get installs it when
#                missing and we are root); PALIMPSEST_PG_URL names the
#                pooler and PALIMPSEST_PG_DIRECT_URL the server;
#   distributed  the server with what engines such as CockroachDB and
#                YugabyteDB lack taken away: the advisory-lock functions
#                shadowed by stubs that always grant, and pg_notify
#                shadowed by one that fails as a missing function does.
#
# Called by with_postgres.sh with PG* set by pg_virtualenv.
set -euo pipefail
direct="postgres://${PGUSER}:${PGPASSWORD}@${PGHOST/#localhost/127.0.0.1}:${PGPORT}/${PGDATABASE}"
export PALIMPSEST_PG_URL="$direct" PALIMPSEST_PG_DIRECT_URL="$direct"
via="${PALIMPSEST_PG_VIA:-direct}"

case "$via" in
direct) exec "$@" ;;
distributed)
  # On template1 too, so that every database a test creates has them.
  for db in "$PGDATABASE" template1; do
    psql -q -h "${PGHOST/#localhost/127.0.0.1}" -d "$db" -v ON_ERROR_STOP=1 <<'SQL'
CREATE SCHEMA IF NOT EXISTS distributed_sql;
CREATE OR REPLACE FUNCTION distributed_sql.pg_try_advisory_lock(bigint) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OR REPLACE FUNCTION distributed_sql.pg_advisory_lock(bigint) RETURNS void LANGUAGE sql AS 'SELECT';
CREATE OR REPLACE FUNCTION distributed_sql.pg_advisory_unlock(bigint) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OR REPLACE FUNCTION distributed_sql.pg_advisory_unlock_all() RETURNS void LANGUAGE sql AS 'SELECT';
CREATE OR REPLACE FUNCTION distributed_sql.pg_advisory_xact_lock(bigint) RETURNS void LANGUAGE sql AS 'SELECT';
CREATE OR REPLACE FUNCTION distributed_sql.pg_try_advisory_xact_lock(bigint) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OR REPLACE FUNCTION distributed_sql.pg_notify(text, text) RETURNS void LANGUAGE plpgsql AS
  $$BEGIN RAISE EXCEPTION 'function pg_notify(text, text) does not exist' USING ERRCODE = '42883'; END$$;
SQL
  done
  # Shadowing needs the schema ahead of pg_catalog in every session.
  psql -q -h "${PGHOST/#localhost/127.0.0.1}" -d "$PGDATABASE" -v ON_ERROR_STOP=1 \
    -c "ALTER ROLE \"$PGUSER\" SET search_path = distributed_sql, pg_catalog, public"
  exec "$@"
  ;;
pgbouncer)
  if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "installing pgbouncer with apt-get" >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null
    else
      echo "pgbouncer not found: install Debian's pgbouncer package" >&2
      exit 2
    fi
  fi
  bouncer=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)
  dir=$(mktemp -d)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  printf '"%s" "%s"\n' "$PGUSER" "$PGPASSWORD" >"$dir/users.txt"
  cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=${PGHOST/#localhost/127.0.0.1} port=${PGPORT}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = plain
auth_file = ${dir}/users.txt
pool_mode = transaction
; The suite runs many writer processes at once; the default is 100.
max_client_conn = 2000
logfile = ${dir}/pgbouncer.log
pidfile = ${dir}/pgbouncer.pid
INI
  chmod -R a+rX "$dir"
  if [ "$(id -u)" = 0 ]; then chown -R postgres "$dir"; user=(-u postgres); else user=(); fi
  "$bouncer" -d "${user[@]}" "$dir/pgbouncer.ini"
  for _ in $(seq 50); do
    if python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then break; fi
    sleep 0.1
  done
  export PALIMPSEST_PG_URL="postgres://${PGUSER}:${PGPASSWORD}@127.0.0.1:${port}/${PGDATABASE}"
  status=0
  "$@" || status=$?
  kill "$(cat "$dir/pgbouncer.pid")" 2>/dev/null || true
  rm -rf "$dir"
  exit "$status"
  ;;
*)
  echo "PALIMPSEST_PG_VIA must be direct, pgbouncer or distributed (not $via)" >&2
  exit 2
  ;;
esac
