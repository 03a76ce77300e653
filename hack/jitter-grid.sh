#!/usr/bin/env bash
# jitter-grid.sh [SEEDS] [JITTER_SEEDS]: issue 11's grid (hack/grid.sh) over
# SEEDS (default 1-3), replayed once per jitter seed in JITTER_SEEDS (default
# 1-5; "a-b" or a space-separated list) with every arrival moved later by up
# to $JITTER (default 1ms), the prompts unchanged, each replay in $OUT/jN
# (default out/jitter). Then bin/gridtables -table jitter prints kv against
# the best policy on the means over the replays, how far kv's own figures
# moved, and the issue's test on each replay alone. About as long as the
# grid once per jitter seed (some 5 minutes each for seeds 1-3 here).
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${1:-1-3}
JSEEDS=${2:-1-5}
OUT=${OUT:-out/jitter}
BIN=${BIN:-bin}
export BIN JITTER=${JITTER:-1ms}
if [[ $JSEEDS =~ ^([0-9]+)-([0-9]+)$ ]]; then
  JSEEDS=$(seq "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}")
fi
mkdir -p "$OUT"
for j in $JSEEDS; do
  echo "jitter-grid: replay j$j (jitter $JITTER, seeds $SEEDS)"
  OUT="$OUT/j$j" JITTER_SEED=$j ./hack/grid.sh "$SEEDS" > "$OUT/j$j.log" 2>&1 ||
    { tail -20 "$OUT/j$j.log" >&2; exit 1; }
done
"$BIN/gridtables" -dir "$OUT" -table jitter | tee "$OUT/tables.md"
