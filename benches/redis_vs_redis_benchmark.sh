#!/usr/bin/env bash
# Runs runner's redis-kv track and redis-benchmark side by side against the same redis-server,
# for GET and SET at 1, 50 and 1,000 clients, with and without a 16-deep pipeline, and prints
# runner / redis-benchmark ratios of requests/s, p50 and p99 latency. Each point runs ROUNDS
# times, alternating which tool goes first; medians are compared (see redis_side_by_side.sh).
#
#   cargo build --release && benches/redis_vs_redis_benchmark.sh [SCALE] [ROUNDS]
#
# RUNNER_WORKER_THREADS is passed through to runner. Needs redis-server and redis-benchmark
# (Debian: redis-server, redis-tools) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-1} ROUNDS=${2:-3} PORT=${PORT:-6399}
WARMUP=0  # redis-benchmark counts every request from its first
source benches/redis_side_by_side.sh
other_point() { # test clients pipeline requests -> "rps p50 p99"
  timeout 300 redis-benchmark -p "$PORT" -t "$1" -n "$4" -c "$2" -P "$3" -r 100000 -d 3 --csv | tail -1 |
    python3 -c 'import csv,sys; r=next(csv.reader(sys.stdin)); print(r[1], r[4], r[6])'
}
side_by_side r-b
