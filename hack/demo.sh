#!/usr/bin/env bash
# make demo: the product brief's scenario in a simulated fleet (virtual time),
# then a live fleet on loopback: two modelsim servers (sim-0, sim-1), kvpick,
# and gatewaysim playing the gateway, once with round-robin and once with kv
# routing, ending with a verdict line. Everything lands in out/demo/, with
# out/demo/index.html showing the tables and figures together.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
OUT=${OUT:-out/demo}
REQUESTS=${REQUESTS:-30}
rm -rf "$OUT/routebench"  # figures from an earlier run must not show on this run's page
mkdir -p "$OUT"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

echo "== 1/2  The brief's scenario on a simulated fleet (routebench, virtual time) =="
echo "   (calibrating the load, then 10 policies x 2 runs: about a minute on 2 cores, quiet until the first table)"
"$BIN/routebench" -scenario brief -out "$OUT/routebench" -html "$OUT/index.html"

echo
echo "== 2/2  A live fleet on loopback: modelsim sim-0 and sim-1, kvpick, gatewaysim as the gateway =="
# wait_line FILE PATTERN: wait up to 20s for a log line, print its first match.
wait_line() {
  for _ in $(seq 200); do
    if grep -q "$2" "$1" 2>/dev/null; then grep -m1 -o "$2" "$1"; return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1" >&2; cat "$1" >&2; return 1
}
eps="$OUT/endpoints.yaml"
echo "endpoints:" > "$eps"
sims=()
for i in 0 1; do
  "$BIN/modelsim" --port 0 --model demo-model --seed "$i" > "$OUT/modelsim-$i.log" 2>&1 &
  pids+=($!)
  sims+=($!)
  addr=$(wait_line "$OUT/modelsim-$i.log" 'listening on 127.0.0.1:[0-9]*' | sed 's/listening on //')
  echo "  - {name: sim-$i, address: 127.0.0.1, port: ${addr##*:}, models: [demo-model]}" >> "$eps"
  echo "sim-$i: modelsim on $addr"
done

live="$OUT/live.txt"
{
  echo "$REQUESTS requests per mode through gatewaysim: 80% share a 6,000-token prefix (shared-prefix),"
  echo "20% are unrelated 12,000-token documents; 4 in flight at once."
} | tee "$live"
prev=""
for mode in round-robin kv; do
  log="$OUT/kvpick-$mode.log"
  # The sims publish no KV events: the predicted path (--router-mode kv alone means events, as in Dynamo).
  "$BIN/kvpick" --endpoints-file "$eps" --router-mode "$mode" --no-router-kv-events --grpc-addr 127.0.0.1:0 \
    --metrics-addr 127.0.0.1:0 --plaintext > "$log" 2>&1 &
  kp=$!
  pids+=($kp)
  grpc=$(wait_line "$log" '"kvpick serving ext_proc","addr":"[0-9.:]*"' | sed 's/.*"addr":"//; s/"$//')
  metrics=$(wait_line "$log" '"serving metrics","addr":"[0-9.:]*"' | sed 's/.*"addr":"//; s/"$//')
  {
    echo
    echo "-- kvpick --router-mode $mode (ext_proc $grpc, metrics http://$metrics/metrics)"
    "$BIN/gatewaysim" --picker "$grpc" --plaintext --requests "$REQUESTS" --concurrency 4 --quiet \
      --endpoints-file "$eps" --label "$mode" --summary-out "$OUT/live-$mode.json" ${prev:+--baseline "$prev"}
  } 2>&1 | tee -a "$live"
  prev="$OUT/live-$mode.json"
  kill "$kp"; wait "$kp" 2>/dev/null || true
  kill -HUP "${sims[@]}"  # modelsim clears its prefix cache on SIGHUP: the next mode starts cold
done
"$BIN/routebench" -html-only -out "$OUT/routebench" -html "$OUT/index.html" -live "$live"
echo
echo "Tables and figures: $OUT/index.html; logs and raw results in $OUT/"
