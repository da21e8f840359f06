#!/usr/bin/env bash
# Fails on any documentation lint error except private-type-ref, which Deno
# reports for every type that comes from an npm package (a known Deno bug).
set -uo pipefail
cd "$(dirname "$0")/.."
# Every entry point the package exports (deno.json "exports").
entries=$(deno eval 'const m = JSON.parse(Deno.readTextFileSync("deno.json")); console.log(Object.values(m.exports).join(" "))') || {
  echo "doc lint: could not read the entry points from deno.json" >&2
  exit 1
}
if [ -z "$entries" ]; then
  echo "doc lint: deno.json exports no entry point" >&2
  exit 1
fi
# shellcheck disable=SC2086
out=$(NO_COLOR=1 deno doc --lint $entries 2>&1)
# deno doc exits non-zero when it finds problems, so its status alone cannot
# say whether it ran: require its summary or a clean run's silence, and no
# failure to start.
if grep -qE 'command not found|^error: (Module not found|Import)' <<<"$out"; then
  echo "$out" >&2
  echo "doc lint: deno doc did not run" >&2
  exit 1
fi
errors=$(grep -E '^(error|warning)\[' <<<"$out" | grep -v 'private-type-ref' || true)
if [ -n "$errors" ]; then
  echo "$out" | grep -v 'private-type-ref' >&2
  echo "doc lint: $(wc -l <<<"$errors") problem(s)" >&2
  exit 1
fi
echo "doc lint: clean: ${entries[*]} (private-type-ref from npm types ignored)"
