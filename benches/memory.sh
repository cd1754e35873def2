#!/usr/bin/env bash
# The runner's own peak memory (issue #6): examples/bounded-memory against `runner serve --stub`
# (another process, so the runner's RSS is the client's alone), read from /usr/bin/time -v.
#   index-500k / index-5m: 0.5M and 5M generated documents at bulk size 50,000, 4 clients
#   steady-60s / steady-600s: search at 10,000 ops/s, 4 clients, for 1 and 10 minutes
# Peak RSS that does not grow from 0.5M to 5M documents, or from 1 to 10 minutes, is bounded.
#   bash benches/memory.sh [out-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/memory}
mkdir -p "$out"
cargo build --release -q
bin=$PWD/target/release/runner
export RUNNER_HOME=$out/home
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
$bin serve --port "$port" --stub 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -s "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done
track=(--track-path examples/bounded-memory --backend elasticsearch --target-hosts "http://127.0.0.1:$port" --quiet)
run() { # name, then race arguments
  local name=$1; shift
  /usr/bin/time -v -o "$out/$name.time" $bin race "${track[@]}" "$@" > "$out/$name.md"
  local rss wall
  rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$out/$name.time")
  wall=$(awk -F': ' '/Elapsed \(wall/ {print $2}' "$out/$name.time")
  printf '%-12s peak RSS %7.1f MB  wall %s\n' "$name" "$(echo "$rss / 1024" | bc -l)" "$wall" | tee -a "$out/summary.txt"
}
: > "$out/summary.txt"
run index-500k --track-params documents:500000
run index-5m
run steady-60s --challenge steady --track-params period:60s
run steady-600s --challenge steady
grep -h -A8 '^## Throughput' "$out"/*.md | grep -E '^\| (bulk|search)' | tee -a "$out/summary.txt"
