#!/usr/bin/env bash
# readme-tables.sh check|update: regenerate the routebench tables the README
# quotes (between <!-- routebench:ID --> and <!-- /routebench:ID --> lines)
# and fail when the README's copy differs (check), or write them in (update).
# Each table comes from one routebench run below, deterministic for its seed.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
BIN=${BIN:-bin}
OUT=${OUT:-out/readme}
README=${README:-README.md}
mkdir -p "$OUT"
common=(-seed 1 -no-plots -html off -markdown)
# id, then the routebench arguments whose report (the md file named after the scenario) fills block id.
runs=(
  "brief|brief|-scenario brief -policies round-robin,kv,kv+queue,least-loaded,gaie-default,sglang-cache-aware"
  "trace|trace|-scenario trace -endpoints 8 -policies round-robin,kv,gaie-default,sglang-cache-aware"
  "shared-prefix|shared-prefix|-scenario shared-prefix -prefixes 150 -prefix-len 6000 -suffix-len 1200 -rate 15 -policies round-robin,kv,gaie-default,sglang-cache-aware"
)
# block ID FILE: the README lines between the markers of ID.
block() { awk -v id="$1" '$0 == "<!-- /routebench:" id " -->" {f=0} f {print} $0 == "<!-- routebench:" id " -->" {f=1}' "$2"; }
# replace ID TABLE: put TABLE's lines between the markers of ID in the README.
replace() {
  awk -v id="$1" -v table="$2" '
    $0 == "<!-- routebench:" id " -->" {print; while ((getline l < table) > 0) print l; skip=1; next}
    $0 == "<!-- /routebench:" id " -->" {skip=0}
    !skip {print}' "$README" > "$README.tmp" && mv "$README.tmp" "$README"
}
status=0
for r in "${runs[@]}"; do
  IFS='|' read -r id scenario args <<< "$r"
  dir="$OUT/$id"
  echo "readme-tables: routebench $args (tens of seconds)..."
  # shellcheck disable=SC2086 # args is a word list on purpose
  "$BIN/routebench" $args "${common[@]}" -out "$dir" > "$dir.log" 2>&1 || { cat "$dir.log" >&2; exit 1; }
  tables=("$id|$dir/$scenario.md")
  [ "$id" = brief ] && tables+=("brief-import|$dir/brief-import.md")
  for t in "${tables[@]}"; do
    IFS='|' read -r bid file <<< "$t"
    if [ -z "$(block "$bid" "$README")" ] && ! grep -qx "<!-- routebench:$bid -->" "$README"; then
      echo "readme-tables: $README has no <!-- routebench:$bid --> block" >&2; status=1; continue
    fi
    if [ "$mode" = update ]; then
      replace "$bid" "$file"
    elif ! diff -u <(block "$bid" "$README") "$file" > "$OUT/$bid.diff"; then
      echo "readme-tables: the README's $bid table differs from a fresh run (make readme-update writes it):" >&2
      cat "$OUT/$bid.diff" >&2
      status=1
    fi
  done
done
[ "$status" = 0 ] && echo "readme-tables: README tables $( [ "$mode" = update ] && echo written || echo match a fresh run)"
exit "$status"
