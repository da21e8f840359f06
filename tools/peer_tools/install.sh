#!/usr/bin/env bash
# Installs the pinned agent tools (package.json and package-lock.json beside
# this script: Claude Code, Codex, pi, Gemini CLI) into a scratch folder outside the
# repository, and prints the folder of their commands. The folder is the
# first argument, else $PALIMPSEST_PEER_TOOLS, else
# ${TMPDIR:-/tmp}/palimpsest-peer-tools; an install whose lock matches is
# kept. tests/import/tools_resume_test.ts and record_gemini.ts run it. A tool's new release is
# checked by bumping its pin here (npm install --package-lock-only).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-${PALIMPSEST_PEER_TOOLS:-${TMPDIR:-/tmp}/palimpsest-peer-tools}}
mkdir -p "$dest"
bin="$dest/node_modules/.bin"
if ! cmp -s "$here/package-lock.json" "$dest/package-lock.json" ||
  [ ! -x "$bin/claude" ] || [ ! -x "$bin/codex" ] || [ ! -x "$bin/pi" ] ||
  [ ! -x "$bin/gemini" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
echo "$bin"
