#!/usr/bin/env bash
# The two report-reproducing Elasticsearch tracks at full size, each through the embedded
# backend (in process), through `runner serve` (the same engine over HTTP, elasticsearch
# backend) and, for bulk-indexer, through `runner serve --stub` (the client alone: the
# benchmark's mock-server mode). Runs one after another on an otherwise idle machine and
# keeps every summary under $out; BENCHMARKS.md quotes them side by side.
#   bash benches/report_tracks.sh [out-dir] [bulk-indexer|client-bench|all]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/report-tracks}
which=${2:-all}
mkdir -p "$out"
cargo build --release -q
bin=$PWD/target/release/runner
export RUNNER_HOME=$out/home
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
server=
stop() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; server=; }
trap stop EXIT
start() {
  $bin serve --port "$port" "$@" 2>/dev/null &
  server=$!
  for _ in $(seq 100); do curl -s "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done
}
race() { # name, then race arguments
  local name=$1; shift
  # A summary already there (from an earlier, interrupted run of this script) is kept.
  if grep -q "Maximum resident" "$out/$name.time" 2>/dev/null; then echo "== $name: kept"; return; fi
  echo "== $name: runner race $*" | tee "$out/$name.md"
  /usr/bin/time -v -o "$out/$name.time" $bin race "$@" --quiet >> "$out/$name.md"
  grep -E "Maximum resident|Elapsed" "$out/$name.time" | tee -a "$out/$name.md"
}
http=(--backend elasticsearch --target-hosts "http://127.0.0.1:$port")
if [ "$which" = all ] || [ "$which" = bulk-indexer ]; then
  for dataset in small httplog; do
    p=(--track bulk-indexer --track-params "dataset:$dataset")
    race "bulk-indexer-$dataset-embedded" "${p[@]}"
    start; race "bulk-indexer-$dataset-serve" "${p[@]}" "${http[@]}"; stop
    start --stub; race "bulk-indexer-$dataset-stub" "${p[@]}" "${http[@]}"; stop
  done
fi
if [ "$which" = all ] || [ "$which" = client-bench ]; then
  race client-bench-embedded --track client-bench
  start; race client-bench-serve --track client-bench "${http[@]}"; stop
fi
echo "summaries in $out"
