#!/usr/bin/env bash
# Builds the npm package in node/package/ (see build.mjs). Run after
# `npm ci` in node/.
set -euo pipefail
cd "$(dirname "$0")"
node build.mjs
