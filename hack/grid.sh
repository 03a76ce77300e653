#!/usr/bin/env bash
# grid.sh [SEEDS]: issue 11's grid, every routebench workload it names against
# every policy, once per seed (routebench -seeds; default 1-3). Each
# workload's per-seed reports go to $OUT/NAME/seed-N/, and its policies over
# the seeds to $OUT/NAME/SCENARIO-seeds.csv and .md; the summaries are
# printed at the end, and the README's grid tables (bin/gridtables) go to
# $OUT/tables.md. About two minutes per seed on a 2-core machine. With
# JITTER set (a duration), every run moves its arrivals by up to that much
# (routebench -jitter, -jitter-seed $JITTER_SEED): hack/jitter-grid.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${1:-1-3}
BIN=${BIN:-bin}
OUT=${OUT:-out/grid}
mkdir -p "$OUT"
jitter=()
if [ -n "${JITTER:-}" ]; then
  jitter=(-jitter "$JITTER" -jitter-seed "${JITTER_SEED:-1}")
fi
sp=(-scenario shared-prefix -prefixes 150 -prefix-len 6000 -suffix-len 1200)
# name|arguments (brief prints brief and brief-import)
runs=(
  "brief|-scenario brief -rate 4.5"
  "sp15|${sp[*]} -rate 15"
  "sp25|${sp[*]} -rate 25 -requests 4000"
  "multiturn|-scenario multiturn -sessions"
  "burst|-scenario burst"
  "trace|-scenario trace"
  "trace-x1.5|-scenario trace -rate-scale 1.5"
  "mixed|${sp[*]} -rate 10 -requests 3000 -engine-profile config/samples/engine-large.yaml,config/samples/engine-small.yaml"
)
for r in "${runs[@]}"; do
  IFS='|' read -r name args <<< "$r"
  echo "grid: $name, seeds $SEEDS: routebench $args"
  # shellcheck disable=SC2086 # args is a word list on purpose
  "$BIN/routebench" $args -seeds "$SEEDS" "${jitter[@]}" -no-plots -markdown -out "$OUT/$name" > "$OUT/$name.log" 2>&1 ||
    { tail -20 "$OUT/$name.log" >&2; exit 1; }
done
for r in "${runs[@]}"; do
  name=${r%%|*}
  for f in "$OUT/$name"/*-seeds.md; do
    echo
    echo "== $name: $(basename "$f" -seeds.md), seeds $SEEDS (TTFT s; refusals count as inf; near best: within 2 % of the best policy at that seed)"
    cat "$f"
  done
done
"$BIN/gridtables" -dir "$OUT" > "$OUT/tables.md"
echo
"$BIN/gridtables" -dir "$OUT" -table counts
echo "grid: the README's grid tables and every miss: $OUT/tables.md"
