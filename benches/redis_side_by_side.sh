# Shared by benches/redis_vs_redis_benchmark.sh and benches/redis_codec_vs_redis_crate.sh (sourced,
# not run): a redis-server of their own, requests sized per point, runner's side of each point,
# and the loop that runs both sides in alternating rounds and prints median ratios.
#
# Requests per point are sized for runs of ~2-4 s on a 2-core VM (shorter runs swing by ±30%):
# 40,000 at one unpipelined client, 400,000 for the other unpipelined points, 2,000,000 with
# pipelines; SCALE multiplies them.

SCALE=${SCALE:-1}
# runner's warmup (of its iterations), set by the caller to match the other tool's.
WARMUP=${WARMUP:-0}
ROUNDS=${ROUNDS:-3}
RUNNER=./target/release/runner
HOME_DIR=$(mktemp -d)
# A server still on the port (a previous run shutting down) would make this one fail to bind,
# and redis-benchmark spins on a refused connection instead of exiting: wait, then check.
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 || break; sleep 0.2; done
if redis-cli -p "$PORT" ping >/dev/null 2>&1; then echo "port $PORT is taken by another server; set PORT" >&2; exit 1; fi
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --maxclients 4096 --daemonize yes --pidfile "$HOME_DIR/redis.pid" >/dev/null
stop_server() {
  local pid; pid=$(cat "$HOME_DIR/redis.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
}
trap 'stop_server; rm -rf "$HOME_DIR"' EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$PORT" ping >/dev/null || { echo "redis-server did not start on port $PORT" >&2; exit 1; }
ulimit -n 4096 2>/dev/null || true

requests_for() { # clients pipeline
  if [ "$2" -gt 1 ]; then echo $(( 2000000 * SCALE )); elif [ "$1" -eq 1 ]; then echo $(( 40000 * SCALE )); else echo $(( 400000 * SCALE )); fi
}

runner_point() { # test clients pipeline requests -> "rps p50 p99"
  "$RUNNER" race --track redis-kv --backend redis --target-hosts "127.0.0.1:$PORT" --results-dir "$HOME_DIR" \
    --quiet --include-tasks "$1" --report-format json --track-params "requests=$(( $4 / $3 )),clients=[$2],pipeline=$3,warmup=$WARMUP" 2>/dev/null |
    python3 -c 'import json,sys; t=[t for t in json.load(sys.stdin)["race"]["tasks"] if t["task"]==sys.argv[1]][0]["trials"][0]; print(t["requests_per_second"], t["latency_ms"]["p50"], t["latency_ms"]["p99"])' "$1"
}

# side_by_side NAME: runs runner_point and other_point (defined by the caller, same arguments
# and output) for GET and SET at 1, 50 and 1,000 clients, -P 1 and 16.
side_by_side() {
  printf '%-4s %7s %3s | %10s %10s %6s | %8s %8s %6s | %8s %8s %6s\n' test clients P runner "$1" ratio "run p50" "p50" ratio "run p99" "p99" ratio
  for test in set get; do
    for c in 1 50 1000; do
      for p in 1 16; do
        n=$(requests_for "$c" "$p")
        rows=()
        for r in $(seq "$ROUNDS"); do
          if (( r % 2 )); then a=$(runner_point "$test" "$c" "$p" "$n"); b=$(other_point "$test" "$c" "$p" "$n");
          else b=$(other_point "$test" "$c" "$p" "$n"); a=$(runner_point "$test" "$c" "$p" "$n"); fi
          rows+=("$a $b")
        done
        printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
test, c, p = sys.argv[1:4]
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
med = [statistics.median(r[i] for r in rows) for i in range(6)]
q = lambda a, b: a / b if b else float("nan")
print(f"{test:<4} {c:>7} {p:>3} | {med[0]:>10.0f} {med[3]:>10.0f} {q(med[0], med[3]):>6.2f} | {med[1]:>8.3f} {med[4]:>8.3f} {q(med[1], med[4]):>6.2f} | {med[2]:>8.3f} {med[5]:>8.3f} {q(med[2], med[5]):>6.2f}")
' "$test" "$c" "$p"
      done
    done
  done
}
