#!/usr/bin/env bash
# make demo: the product brief's scenario in a simulated fleet (virtual time),
# then a live fleet on loopback: two modelsim servers, kvpick, and gatewaysim
# playing the gateway, once with round-robin and once with kv routing.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
OUT=${OUT:-out/demo}
REQUESTS=${REQUESTS:-30}
mkdir -p "$OUT"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

echo "== 1/2  The brief's scenario on a simulated fleet (routebench, virtual time) =="
"$BIN/routebench" -scenario brief -out "$OUT/routebench"

echo
echo "== 2/2  A live fleet on loopback: 2 modelsim servers, kvpick, gatewaysim as the gateway =="
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
  echo "modelsim $i on $addr"
done

for mode in round-robin kv; do
  log="$OUT/kvpick-$mode.log"
  # The sims publish no KV events: the predicted path (--router-mode kv alone means events, as in Dynamo).
  "$BIN/kvpick" --endpoints-file "$eps" --router-mode "$mode" --no-router-kv-events --grpc-addr 127.0.0.1:0 \
    --metrics-addr 127.0.0.1:0 --plaintext > "$log" 2>&1 &
  kp=$!
  grpc=$(wait_line "$log" '"kvpick serving ext_proc","addr":"[0-9.:]*"' | sed 's/.*"addr":"//; s/"$//')
  metrics=$(wait_line "$log" '"serving metrics","addr":"[0-9.:]*"' | sed 's/.*"addr":"//; s/"$//')
  echo
  echo "-- kvpick --router-mode $mode (ext_proc $grpc, metrics http://$metrics/metrics)"
  "$BIN/gatewaysim" --picker "$grpc" --plaintext --requests "$REQUESTS" --concurrency 4 --quiet
  command -v curl > /dev/null && curl -s "http://$metrics/metrics" | grep -E '^kvpick_(kv_hit_ratio_sum|kv_hit_ratio_count|requests_total)' | sed 's/^/   /' || true
  kill "$kp"; wait "$kp" 2>/dev/null || true
  kill -HUP "${sims[@]}"  # modelsim clears its prefix cache on SIGHUP: the next mode starts cold
done
echo
echo "Logs and results in $OUT/"
