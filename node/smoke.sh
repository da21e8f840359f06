#!/usr/bin/env bash
# Packs node/package (built by build.sh) with `npm pack`, installs the
# tarball into a scratch Node project in a temp folder (`npm init -y`,
# `npm install TARBALL effect@VERSION`, as a user would) and runs node/test/
# there with node's test runner, so the tests import the package by its name
# from node_modules and run its bin through npx. The PostgreSQL test needs
# PALIMPSEST_PG_URL (run under tools/with_postgres.sh). Arguments are passed
# to `node --test`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/palimpsest-npm-scratch-XXXXXX")
trap 'rm -rf "$scratch"' EXIT

tarball=$(cd "$here/package" && npm pack --pack-destination "$scratch" --silent | tail -n 1)
effect=$(node -p 'require(process.argv[1]).dependencies.effect' "$here/package/package.json")
echo "node smoke: packed $tarball; installing it into a scratch project"
mkdir "$scratch/app"
cd "$scratch/app"
npm init -y >/dev/null
npm pkg set type=module
npm install --no-audit --no-fund --loglevel=error "$scratch/$tarball" "effect@$effect"
cp -R "$here/test" test
export PALIMPSEST_TSC="$here/node_modules/.bin/tsc"
# The claim test runs Deno writers from the repository's tests/.
export PALIMPSEST_REPO="$(cd "$here/.." && pwd)"
# The tests' temporary folders go inside the scratch folder, removed at exit.
mkdir "$scratch/tmp"
export TMPDIR="$scratch/tmp"
node --test "$@" test/
