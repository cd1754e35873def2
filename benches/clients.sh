#!/usr/bin/env bash
# Ten thousand clients on one machine (#27): the runner's peak RSS and what it achieves at 100
# to 10,000 clients, one throttled operation a second each, on every backend; wrk's peak RSS
# at 1,000 and 4,000 keep-alive connections to the same nginx; and redis-benchmark -c 10000
# beside the runner at 10,000 unthrottled clients. Sizes and ratios go to BENCHMARKS.md.
#   [BACKENDS="redis elasticsearch"] bash benches/clients.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
command -v nginx >/dev/null && command -v wrk >/dev/null || apt-get install -y nginx wrk >/dev/null
cargo build --release -q
bin=$PWD/target/release/runner
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ngx_port=$(free_port); redis_port=$(free_port)
mkdir -p "$work/nginx/logs"
cat > "$work/nginx/nginx.conf" <<NGX
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log;
events { worker_connections 30000; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  server {
    listen 127.0.0.1:$ngx_port backlog=16384;
    add_header x-elastic-product Elasticsearch;
    default_type application/json;
    location = / { return 200 '{"version":{"number":"8.15.0"},"tagline":"You Know, for Search"}'; }
    location / { return 200 '{"took":0,"timed_out":false,"hits":{"total":{"value":0,"relation":"eq"},"hits":[]}}'; }
  }
}
NGX
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf"
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --maxclients 20000 --daemonize yes --pidfile "$work/redis.pid" >/dev/null
trap 'kill $(cat "$work/nginx/nginx.pid") 2>/dev/null; kill $(cat "$work/redis.pid") 2>/dev/null; rm -rf "$work"' EXIT
sleep 0.5
echo "open files: soft $(ulimit -Sn), hard $(ulimit -Hn) (each network client needs a socket, and a throttled one a timerfd)"

race() { # backend op clients extra-args... -> "peak_kb | achieved | target | latency p99 ms"
  local backend=$1 op=$2 n=$3; shift 3
  cat > "$work/track.yaml" <<YAML
name: clients
indices: [{name: i}]
operations: [$op]
challenges: [{name: c, schedule: [{name: a, operation: o, clients: $n, warmup: 2s, time-period: ${secs}s, target-throughput: $n}]}]
YAML
  rm -rf "$work/home"
  /usr/bin/time -f "%M" -o "$work/rss" "$bin" --results-dir "$work/home" race --track-path "$work" --quiet --backend "$backend" "$@" >/dev/null 2>"$work/err" || { cat "$work/err"; return; }
  python3 - "$work" "$n" <<'PY'
import json, glob, sys
work, n = sys.argv[1], int(sys.argv[2])
race = json.load(open(glob.glob(work + "/home/races/*/race.json")[0]))
t = race["tasks"][0]["trials"][0]
rss = int(open(work + "/rss").read().split()[-1]) // 1024
print(f"| {n} | {rss} MB | {t['throughput']:.0f} / {n} = {t['throughput']/n:.4f} | {t['service_time_ms']['p99']:.3f} | {t['latency_ms']['p99']:.3f} | {t['errors']} |")
PY
  grep -h "warning" "$work/err" | sed 's/^/    /' || true
}

for backend in ${BACKENDS:-embedded redis elasticsearch}; do
  echo; echo "### $backend"; echo
  echo "| clients | peak RSS | achieved / target ops/s | service p99 ms | latency p99 ms | errors |"
  echo "|--:|--:|--:|--:|--:|--:|"
  for n in 100 1000 4000 10000; do
    case $backend in
      embedded) race embedded "{name: o, type: sleep, params: {duration: 1ms}}" "$n" ;;
      redis) race redis "{name: o, type: get, params: {keyspace: 1000}}" "$n" --target-hosts "127.0.0.1:$redis_port" ;;
      elasticsearch) race elasticsearch "{name: o, type: search, params: {index: i}}" "$n" --target-hosts "http://127.0.0.1:$ngx_port" ;;
    esac
  done
done

echo; echo "### wrk against the same nginx"; echo
for c in 1000 4000; do
  /usr/bin/time -f "%M" -o "$work/wrss" wrk -t2 -c "$c" -d"${secs}s" "http://127.0.0.1:$ngx_port/i/_search" > "$work/wrk.out" 2>&1 || true
  echo "wrk -t2 -c $c: peak RSS $(( $(tail -1 "$work/wrss") / 1024 )) MB, $(awk '/Requests\/sec/ {print $2}' "$work/wrk.out") req/s"
done

echo; echo "### 10,000 unthrottled GET clients: redis-benchmark beside the runner"; echo
redis-benchmark -p "$redis_port" -c 10000 -n 500000 -t get -q --precision 3 2>&1 | tail -2 || true
redis-benchmark -p "$redis_port" -c 10000 -n 500000 -t get --csv 2>/dev/null | tail -1 || true
cat > "$work/track.yaml" <<YAML
name: clients
operations: [{name: o, type: get, params: {keyspace: 1000}}]
challenges: [{name: c, schedule: [{name: a, operation: o, clients: 10000, warmup: 2s, time-period: ${secs}s}]}]
YAML
rm -rf "$work/home"
"$bin" --results-dir "$work/home" race --track-path "$work" --quiet --backend redis --target-hosts "127.0.0.1:$redis_port" 2>/dev/null | grep -A4 "^## Latency" | grep "^| a " | sed 's/^/runner latency (ms): /'
"$bin" --results-dir "$work/home" race --track-path "$work" --quiet --backend redis --target-hosts "127.0.0.1:$redis_port" 2>/dev/null | grep -A4 "^## Throughput" | grep "^| a " | sed 's/^/runner throughput: /'
