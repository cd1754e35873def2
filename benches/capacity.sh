#!/usr/bin/env bash
# Capacity under an SLO, and a ramp, measured (BENCHMARKS.md, "Capacity under a latency goal"):
#   1. a system whose capacity is known exactly: 4 clients sleeping 10 ms serve at most
#      400 ops/s; the search for `latency.p99 < 20ms` with the default probes, ROUNDS times;
#   2. the same search through `runner serve`: geonames' `capacity` challenge (match_phrase
#      "Sankt Georgen") over HTTP, and its curve (SVG);
#   3. a ramp 0 → 2,000 ops/s over 10 s: intended against achieved, second by second.
# Usage: benches/capacity.sh [OUT_DIR]   (RUNNER=path/to/runner, ROUNDS=5)
set -euo pipefail
cd "$(dirname "$0")/.."
R=${RUNNER:-target/release/runner}
OUT=${1:-/tmp/capacity-bench}
ROUNDS=${ROUNDS:-5}
rm -rf "$OUT" && mkdir -p "$OUT/track"
export RUNNER_HOME="$OUT/home"

cat > "$OUT/track/track.yaml" <<'YAML'
name: known-limit
operations: [{name: nap, type: sleep, params: {duration: 10ms}}]
challenges:
  - name: search
    default: true
    schedule:
      - {operation: nap, clients: 4, target-throughput: max, slo: {latency.p99: "< 20ms"}}
  - name: ramp
    schedule:
      - operation: nap
        clients: 40
        target-throughput: {stages: [{duration: 10s, target: 2000}]}
YAML

search_row() { # race id → one markdown row of its search
  python3 - "$RUNNER_HOME" "$1" "$2" <<'PY'
import json, sys, glob
home, race, label = sys.argv[1:4]
r = json.load(open(glob.glob(f"{home}/races/{race}*/race.json")[0]))
for t in r["tasks"]:
    for tr in t["trials"]:
        c = tr.get("capacity")
        if c:
            print(f"| {label} | {c['capacity']:.1f} | {c['achieved']:.1f} | {c['failed_at']:.1f} | "
                  f"{(c['failed_at'] - c['capacity']) / c['failed_at'] * 100:.1f}% | "
                  f"{c['unthrottled']:.1f} | {len(c['probes'])} | "
                  f"{sum(1 for p in c['probes'] if p['phase'] == 'repeat')} | {c['seconds']:.0f} | {c['conclusion']} |")
PY
}

echo "## 1. 4 clients × sleep 10 ms, latency.p99 < 20ms (true capacity 400 ops/s)"
echo
echo "| run | capacity ops/s | achieved | lowest failed | bracket | unthrottled | probes | repeats | seconds | conclusion |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"
for i in $(seq 1 "$ROUNDS"); do
  id=$("$R" race --track-path "$OUT/track" --quiet 2>&1 | sed -n 's/^race \([^ ]*\) stored.*/\1/p')
  search_row "$id" "$i"
done

echo
echo "## 2. through runner serve: geonames capacity (match_phrase, 4 clients, p99 < 20ms)"
PORT=${PORT:-9271}
"$R" serve --port "$PORT" > "$OUT/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/" >/dev/null && break; sleep 0.1; done
id=$("$R" race --track geonames --challenge capacity --backend elasticsearch \
  --target-hosts "http://127.0.0.1:$PORT" --quiet 2>&1 | sed -n 's/^race \([^ ]*\) stored.*/\1/p')
echo
echo "| run | capacity ops/s | achieved | lowest failed | bracket | unthrottled | probes | repeats | seconds | conclusion |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"
search_row "$id" serve
"$R" show "$id" | sed -n '/^## Capacity probes/,/^## Runner/p' | sed '$d'
"$R" plot "$id" --out "$OUT/plot-serve" > /dev/null
echo "curve: $OUT/plot-serve/capacity-search-capacity.svg"
kill $SERVE; trap - EXIT

echo
echo "## 3. ramp 0 → 2,000 ops/s over 10 s (40 clients, sleep 10 ms)"
id=$("$R" race --track-path "$OUT/track" --challenge ramp --quiet 2>&1 | sed -n 's/^race \([^ ]*\) stored.*/\1/p')
"$R" show "$id" | sed -n '/^## Ramp of/,/^## Runner/p' | sed '$d'
