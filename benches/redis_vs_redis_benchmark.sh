#!/usr/bin/env bash
# Runs runner's redis-kv track and redis-benchmark side by side against the same redis-server,
# for GET and SET at 1, 50 and 1,000 clients, with and without a 16-deep pipeline, and prints
# runner / redis-benchmark ratios of requests/s, p50 and p99 latency.
#
#   cargo build --release && benches/redis_vs_redis_benchmark.sh [REQUESTS]
#
# Needs redis-server and redis-benchmark (Debian: redis-server, redis-tools) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200000}
PORT=${PORT:-6399}
RUNNER=./target/release/runner
HOME_DIR=$(mktemp -d)
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --pidfile "$HOME_DIR/redis.pid" >/dev/null
trap 'kill "$(cat "$HOME_DIR/redis.pid")" 2>/dev/null; rm -rf "$HOME_DIR"' EXIT
sleep 0.5
ulimit -n 4096 2>/dev/null || true
printf '%-4s %7s %3s | %12s %12s %6s | %8s %8s %6s | %8s %8s %6s\n' test clients P "runner rps" "r-b rps" ratio "run p50" "r-b p50" ratio "run p99" "r-b p99" ratio
for test in set get; do
  for c in 1 50 1000; do
    for p in 1 16; do
      ops=$(( N / p ))
      # redis-benchmark first, then runner: same server, same keyspace and value size.
      rb=$(redis-benchmark -p "$PORT" -t "$test" -n "$N" -c "$c" -P "$p" -r 100000 -d 3 --csv | tail -1)
      json=$("$RUNNER" race --track redis-kv --backend redis --target-hosts "127.0.0.1:$PORT" --results-dir "$HOME_DIR" \
        --quiet --include-tasks "$test" --report-format json \
        --track-params "requests=$ops,clients=[$c],pipeline=$p" 2>/dev/null)
      python3 - "$test" "$c" "$p" "$rb" "$json" <<'PY'
import csv, io, json, sys
test, c, p, rb, js = sys.argv[1:6]
row = next(csv.reader(io.StringIO(rb)))
rb_rps, rb_p50, rb_p99 = float(row[1]), float(row[4]), float(row[6])
race = json.loads(js)["race"]
task = next(t for t in race["tasks"] if t["task"] == test)
tr = task["trials"][0]
rps, p50, p99 = tr["requests_per_second"], tr["latency_ms"]["p50"], tr["latency_ms"]["p99"]
ratio = lambda a, b: a / b if b else float("nan")
print(f"{test:<4} {c:>7} {p:>3} | {rps:>12.0f} {rb_rps:>12.0f} {ratio(rps, rb_rps):>6.2f} | {p50:>8.3f} {rb_p50:>8.3f} {ratio(p50, rb_p50):>6.2f} | {p99:>8.3f} {rb_p99:>8.3f} {ratio(p99, rb_p99):>6.2f}")
PY
    done
  done
done
