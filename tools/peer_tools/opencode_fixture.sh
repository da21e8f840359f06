#!/usr/bin/env bash
# Writes the opencode database fixture afresh with the pinned opencode
# (writers/package.json here): one short session driven against a loopback model
# server in a private home (tests/_helpers/opencode_writer.ts), copied to
# tests/fixtures/import/opencode/read-tool.db with what `opencode export`
# prints for it beside it (read-tool.export.json). After bumping opencode's
# pin, run this, then the opencode tests; review the diff of
# read-tool.expected.json if the messages changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
deno run -A tests/_helpers/opencode_writer.ts tests/fixtures/import/opencode "$@"
# The database and the export of the same session import alike.
deno test -A tests/import/fixtures_test.ts tests/import/opencode_database_test.ts
