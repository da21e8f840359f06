#!/usr/bin/env bash
# Packs node/package (built by build.sh) with `npm pack`, installs the
# tarball into a scratch Node project in a temp folder (`npm init -y`,
# `npm install TARBALL effect@VERSION`, as a user would) and runs node/test/
# there with node's test runner, so the tests import the package by its name
# from node_modules and run its bin through npx. The PostgreSQL test needs
# PALIMPSEST_PG_URL (run under tools/with_postgres.sh). Arguments are passed
# to `node --test`.
#
# Two effect versions: effect is a peer dependency (the program's own), so
# the tests run on the version deno.json locks, then again on the newest
# release the package's range admits (`npm view`), reinstalled in the same
# scratch project. The second pass leaves out the slow tests that drive
# processes rather than effect (claim: Deno writers; cli and readme: the bin
# through npx) and the Node 22 pass (ai_sdk).
#
# Two Node versions: the package declares Node 20, and `./ai-sdk` needs Node
# 22 (the AI SDK's packages declare it). Every test but the AI SDK's runs on
# the machine's `node` (20 here); the AI SDK test and the entry-point test run
# on Node 22: the machine's `node` when it is 22 or newer, else the `node`
# npm package at NODE22 (its binary comes from the registry as a package),
# installed into the scratch folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/palimpsest-npm-scratch-XXXXXX")
trap 'rm -rf "$scratch"' EXIT

tarball=$(cd "$here/package" && npm pack --pack-destination "$scratch" --silent | tail -n 1)
# The locked version (deno.json pins it exactly) and the package's range.
effect=$(node -p 'require(process.argv[1]).imports.effect.replace(/^npm:effect@/, "")' "$here/../deno.json")
range=$(node -p 'require(process.argv[1]).peerDependencies.effect' "$here/package/package.json")
# npm lists the versions in no set order: the greatest by number.
newest=$(npm view "effect@$range" version --json | node -e '
  const v = [JSON.parse(require("node:fs").readFileSync(0, "utf8"))].flat();
  const key = (s) => s.split(".").map(Number);
  v.sort((a, b) => key(a).reduce((d, n, i) => d || n - key(b)[i], 0));
  console.log(v[v.length - 1]);')
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
NODE22=22.23.3
major=$(node -p 'process.versions.node.split(".")[0]')
first=()
for f in test/*.test.mjs; do
  [ "$f" = test/ai_sdk.test.mjs ] || first+=("$f")
done
echo "node smoke: Node $(node --version), effect $effect: every entry point but ./ai-sdk"
npm ls effect >/dev/null
node --test "$@" "${first[@]}"
if [ "$major" -ge 22 ]; then
  node22=node
else
  echo "node smoke: installing node@$NODE22 from npm for ./ai-sdk"
  mkdir "$scratch/node22"
  npm install --prefix "$scratch/node22" --no-audit --no-fund --loglevel=error \
    --no-save "node@$NODE22" >/dev/null
  node22="$scratch/node22/node_modules/.bin/node"
fi
echo "node smoke: Node $("$node22" --version), effect $effect: ./ai-sdk and every entry point"
"$node22" --test "$@" test/ai_sdk.test.mjs test/entry_points.test.mjs
if [ "$newest" != "$effect" ]; then
  echo "node smoke: effect $newest (the newest release of $range)"
  npm install --no-audit --no-fund --loglevel=error "effect@$newest"
  # One copy of effect, the new one (npm ls fails on a peer out of range).
  [ "$(node -p 'require("effect/package.json").version')" = "$newest" ]
  npm ls effect >/dev/null
  second=()
  for f in "${first[@]}"; do
    case "$f" in
      test/claim.test.mjs | test/cli.test.mjs | test/readme.test.mjs) ;;
      *) second+=("$f") ;;
    esac
  done
  echo "node smoke: Node $(node --version), effect $newest: every entry point but ./ai-sdk"
  node --test "$@" "${second[@]}"
else
  echo "node smoke: effect $effect is the newest release of $range"
fi
