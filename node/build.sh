#!/usr/bin/env bash
# Builds dist/ (ES modules + .d.ts) from a copy of the Deno sources, so that
# "effect" resolves from node/node_modules. Run after `npm ci` in node/.
set -euo pipefail
cd "$(dirname "$0")"
rm -rf build dist
mkdir -p build/src
cp ../mod.ts build/src/mod.ts
cp -R ../src build/src/src
cp -R ../migrations build/src/migrations
# The view imports the library by its package name (@palimpsest/session),
# which this copy does not resolve; Node users reach it through JSR.
rm -rf build/src/src/view
# The AI SDK entry point needs the AI SDK packages, which this build does not
# install; Node users reach it through JSR.
rm -rf build/src/src/ai_sdk
./node_modules/.bin/tsc -p tsconfig.json
echo "node build: $(find dist -name '*.js' | wc -l) modules in node/dist"
