#!/usr/bin/env bash
# The elasticsearch backend's client-only ceiling: `runner serve --stub` answers _search and
# _bulk without work, so what is measured is the client (runner's reqwest loop, or wrk) and
# the loopback. Both drive the same stub with one connection, side by side in one run; the
# ratio runner/wrk is what BENCHMARKS.md records (absolute numbers on this VM are noise).
#   bash benches/es_stub_vs_wrk.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
command -v wrk >/dev/null || apt-get install -y wrk >/dev/null
cargo build --release -q
bin=target/release/runner
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
$bin serve --stub --port "$port" 2>/dev/null &
server=$!
for _ in $(seq 100); do curl -s "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done

# The bulk body: the first 5,000 geonames documents as index actions.
{ zstd -dc tracks/geonames/documents.json.zst || true; } | head -5000 | sed 's/^/{"index":{}}\n/' > "$work/bulk.ndjson"
query='{"query":{"match_phrase":{"name":"Sankt Georgen"}}}'
cat > "$work/search.lua" <<LUA
wrk.method = "POST"
wrk.body = '$query'
wrk.headers["Content-Type"] = "application/json"
LUA
cat > "$work/bulk.lua" <<LUA
local f = io.open("$work/bulk.ndjson", "rb"); wrk.body = f:read("*all"); f:close()
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-ndjson"
LUA

mkdir -p "$work/track"
cp tracks/geonames/documents.json.zst "$work/track/"
cp tracks/geonames/index.json "$work/track/"
cat > "$work/track/track.yaml" <<YAML
name: es-stub-ceiling
corpora:
  - name: geonames
    target-index: geonames
    documents: [{source-file: documents.json.zst, document-count: 234908}]
indices: [{name: geonames, body: index.json}]
operations:
  - {name: delete-index, type: delete-index}
  - {name: create-index, type: create-index}
  - {name: bulk, type: bulk, params: {bulk-size: 5000}}
  - name: search
    type: search
    params: {body: {query: {match_phrase: {name: Sankt Georgen}}}}
challenges:
  - name: ceiling
    schedule:
      - operation: delete-index
      - operation: create-index
      - {name: bulk, operation: bulk, clients: 1, warmup: 10%}
      - {name: search, operation: search, clients: 1, warmup: 2s, time-period: ${secs}s}
YAML

rps() { awk '/Requests\/sec/ {print $2}'; }
wrk_search=$(wrk -t1 -c1 -d"${secs}s" -s "$work/search.lua" "http://127.0.0.1:$port/geonames/_search" | rps)
wrk_bulk=$(wrk -t1 -c1 -d"${secs}s" -s "$work/bulk.lua" "http://127.0.0.1:$port/geonames/_bulk" | rps)
$bin --results-dir "$work/home" race --track-path "$work/track" --backend elasticsearch \
  --target-hosts "http://127.0.0.1:$port" --quiet --report-format json --report-file "$work/race.json" >/dev/null
read -r runner_search runner_bulk < <(python3 - "$work/race.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
tasks = r["race"]["tasks"] if "race" in r else r["tasks"]
by = {t["task"]: t["trials"][0]["throughput"] for t in tasks}
print(by["search"], by["bulk"])
PY
)
python3 - "$wrk_search" "$wrk_bulk" "$runner_search" "$runner_bulk" <<'PY'
import sys
ws, wb, rs, rb = map(float, sys.argv[1:])
wb_docs = wb * 5000
print("| client (1 connection) | search req/s | bulk docs/s (5,000 a request) |")
print("|---|--:|--:|")
print(f"| wrk 4.1 | {ws:,.0f} | {wb_docs:,.0f} |")
print(f"| runner --backend elasticsearch | {rs:,.0f} | {rb:,.0f} |")
print(f"| ratio runner / wrk | {rs/ws:.2f} | {rb/wb_docs:.2f} |")
PY
