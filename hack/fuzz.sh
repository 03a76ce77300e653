#!/usr/bin/env bash
# Runs every Go fuzz target in the module for the given time each (default 20s).
set -euo pipefail
t=${1:-20s}
cd "$(dirname "$0")/.."
grep -rl --include='*_test.go' '^func Fuzz' api pkg cmd internal 2>/dev/null | while read -r f; do
  dir=$(dirname "$f")
  for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/func //'); do
    echo "== $dir $fn"
    go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$t" "./$dir"
  done
done
