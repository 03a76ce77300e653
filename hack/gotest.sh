#!/usr/bin/env bash
# gotest.sh ARGS...: go test ARGS, output as usual, then one summary line
# ("28 packages passed (4 without tests)" or "1 of 28 packages failed: ..."); exits as go test did.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"${GO:-go}" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -c '^ok[[:space:]]' "$log")
failed=$(grep -oE '^FAIL[[:space:]]+[^[:space:]]+' "$log" | awk '{print $2}' | sort -u)
nfailed=$(printf '%s\n' "$failed" | grep -c . || true)
notests=$(grep -c '^?.*\[no test files\]' "$log")
if [ "$status" -eq 0 ]; then
  echo "$passed packages passed ($notests without tests)"
else
  echo "$nfailed of $((passed + nfailed)) packages failed:" $failed >&2
fi
exit "$status"
