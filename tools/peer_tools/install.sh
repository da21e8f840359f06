#!/usr/bin/env bash
# Installs a set of pinned agent tools into a scratch folder outside the
# repository and prints the folder of their commands.
#
#   install.sh [DEST]            the export targets (package.json and
#                                package-lock.json beside this script:
#                                Claude Code, Codex, pi), which
#                                tests/import/tools_resume_test.ts runs;
#   install.sh --writers [DEST]  the writers the importers' fixtures are
#                                recorded from (writers/: opencode, Gemini
#                                CLI), which only the recording scripts run
#                                (opencode_fixture.sh, record_gemini.ts).
#
# DEST defaults to $PALIMPSEST_PEER_TOOLS (its writers/ for --writers),
# else ${TMPDIR:-/tmp}/palimpsest-peer-tools(-writers). An install whose
# lock matches the one it was made from is kept. A tool's new release is
# checked by bumping its pin (npm install --package-lock-only in the set's
# folder). `npm ci` is tried first; opencode lists a binary package per
# platform as optional and `npm ci` refuses a lock that lacks any of them
# (a registry mirror may hold only its own), so `npm install --no-save`
# from the lock is the fallback.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pins=$here
suffix=
if [ "${1:-}" = "--writers" ]; then
  shift
  pins=$here/writers
  suffix=-writers
fi
base=${PALIMPSEST_PEER_TOOLS:-${TMPDIR:-/tmp}/palimpsest-peer-tools}
dest=${1:-$base$suffix}
mkdir -p "$dest"
bin="$dest/node_modules/.bin"
if ! cmp -s "$pins/package-lock.json" "$dest/pinned-lock.json" ||
  [ ! -d "$bin" ]; then
  rm -f "$dest/pinned-lock.json"
  cp "$pins/package.json" "$pins/package-lock.json" "$dest/"
  (cd "$dest" && {
    npm ci --no-audit --no-fund --loglevel=error >&2 ||
      npm install --no-save --no-audit --no-fund --loglevel=error >&2
  })
  cp "$pins/package-lock.json" "$dest/pinned-lock.json"
fi
echo "$bin"
