#!/usr/bin/env bash
# Two builds of runner, each judged by runner's own `compare` on every backend: client-bench
# (shortened: bulk 5,000 a request, search at 10,000 and 100,000 ops/s, 5 trials each) on the
# embedded engine, through `runner serve` and through `runner serve --stub` (the client alone),
# and GET/SET at 50 clients (5 trials) against redis-server. One race per build and backend, so
# `compare` has 5 trials a point for its Mann-Whitney U test (with 3 its p-value cannot go
# below 0.1, and no difference could be called significant).
#   [ONLY="stub redis"] bash benches/before_after.sh BEFORE_BIN AFTER_BIN
# (ONLY picks some of: embedded serve stub redis.)
# Prints each comparison's verdict lines (`worse` is a regression beyond the noise threshold).
set -euo pipefail
before=${1:?the build before}
after=${2:?the build after}
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
wait_port() { for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; echo "nothing on port $1" >&2; exit 1; }

client_bench=(--track client-bench --track-params 'search_targets=[10000,100000],search_trials=5,search_warmup=2000,search_iterations=10000,bulk_sizes=[5000],bulk_trials=5')

# One race with each build against the same target; prints `runner compare` of the two.
pair() {
  local name=$1; shift
  local home=$work/$name
  for bin in "$before" "$after"; do
    taskset -c 0 "$bin" --results-dir "$home" race "$@" --quiet >/dev/null
  done
  echo "## $name"
  "$after" --results-dir "$home" compare latest~1 latest | grep -E '^\|' | grep -ivE 'no change|^\|---' || true
  echo "verdicts: $("$after" --results-dir "$home" compare latest~1 latest --report-format json | python3 -c '
import json, sys, collections
c = collections.Counter()
def walk(v):
    if isinstance(v, dict):
        if "verdict" in v: c[v["verdict"]] += 1
        for x in v.values(): walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
walk(json.load(sys.stdin)); print(dict(c))')"
}

want() { [[ -z "${ONLY:-}" || " $ONLY " == *" $1 "* ]]; }

if want embedded; then pair embedded "${client_bench[@]}"; fi

if want serve; then
  port=$(free_port)
  taskset -c 1 "$after" serve --port "$port" >/dev/null 2>&1 & pids+=($!)
  wait_port "$port"
  pair serve "${client_bench[@]}" --backend elasticsearch --target-hosts "http://127.0.0.1:$port"
fi

if want stub; then
  stub=$(free_port)
  taskset -c 1 "$after" serve --stub --port "$stub" >/dev/null 2>&1 & pids+=($!)
  wait_port "$stub"
  pair stub "${client_bench[@]}" --backend elasticsearch --target-hosts "http://127.0.0.1:$stub"
fi

want redis || exit 0
redis=$(free_port)
taskset -c 1 redis-server --port "$redis" --bind 127.0.0.1 --save '' --appendonly no >/dev/null & pids+=($!)
wait_port "$redis"
mkdir -p "$work/kv"
cat > "$work/kv/track.yaml" <<'YAML'
name: kv-before-after
operations:
  - {name: get, type: get, params: {keyspace: 100000, key-size: 16}}
  - {name: set, type: put, params: {keyspace: 100000, key-size: 16, value-size: 3}}
challenges:
  - name: c
    schedule:
      - {operation: set, clients: 50, iterations: 2000, warmup: 200, trials: 5}
      - {operation: get, clients: 50, iterations: 2000, warmup: 200, trials: 5}
YAML
pair redis --track-path "$work/kv" --backend redis --target-hosts "127.0.0.1:$redis"
