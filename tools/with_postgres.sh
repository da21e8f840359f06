#!/usr/bin/env bash
# Runs a command with PALIMPSEST_PG_URL naming a PostgreSQL server, for the
# PostgreSQL store's tests and benchmark (PALIMPSEST_PG_VIA chooses how it
# is reached: directly, through PgBouncer, or as a distributed engine). When the variable is already set,
# the command runs against that server. Otherwise a throwaway cluster is
# created with Debian's pg_virtualenv (installing the postgresql package
# with apt-get when it is missing and we are root) and dropped afterwards.
#
#   bash tools/with_postgres.sh deno task test
set -euo pipefail
if [ -n "${PALIMPSEST_PG_URL:-}" ]; then exec "$@"; fi
if ! command -v pg_virtualenv >/dev/null 2>&1 ||
  ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing postgresql with apt-get" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "pg_virtualenv not found: install Debian's postgresql package, or set PALIMPSEST_PG_URL" >&2
    exit 2
  fi
fi
# -t keeps the cluster in a temp folder even as root; 20+ writer processes
# and their pools need more than the default 100 connections.
# PALIMPSEST_PG_VIA=pgbouncer puts Debian's PgBouncer in transaction mode
# in front of it, and =distributed takes away what distributed engines
# lack (tools/pg_mode.sh).
# PALIMPSEST_PG_PORT fixes the cluster's port: clusters that start at the
# same moment would otherwise pick the same free port.
port=()
if [ -n "${PALIMPSEST_PG_PORT:-}" ]; then port=(-c "-p ${PALIMPSEST_PG_PORT}"); fi
exec pg_virtualenv -t -o max_connections=400 "${port[@]}" \
  bash "$(dirname "$0")/pg_mode.sh" "$@"
