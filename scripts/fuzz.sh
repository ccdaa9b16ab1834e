#!/usr/bin/env bash
# Runs every Fuzz* target in the module for a while each. go test -fuzz takes
# one target per run, hence the loop. Crashers land in the package's
# testdata/fuzz/<Target>/ and become regression seeds: commit them.
set -euo pipefail
fuzztime=${1:-20s}
cd "$(dirname "$0")/.."
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "== $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
  done
done
