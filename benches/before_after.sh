#!/usr/bin/env bash
# Two builds of runner, each judged by runner's own `compare` on every backend: client-bench
# (shortened: search at 1,000 to 100,000 ops/s, 3 trials) on the embedded engine, through
# `runner serve` and through `runner serve --stub` (the client alone), and redis-kv against
# redis-server. The builds alternate per backend; one race each, so `compare` has 3 trials a
# point (bulk and search) for its Mann-Whitney U test.
#   bash benches/before_after.sh BEFORE_BIN AFTER_BIN
# Prints each comparison's verdict lines (`worse` is a regression beyond the noise threshold).
set -euo pipefail
before=${1:?the build before}
after=${2:?the build after}
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
wait_port() { for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; echo "nothing on port $1" >&2; exit 1; }

client_bench=(--track client-bench --track-params 'search_targets=[1000,10000,100000],search_trials=3,search_warmup=2000,search_iterations=10000,bulk_sizes=[500,5000]')

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

pair embedded "${client_bench[@]}"

port=$(free_port)
taskset -c 1 "$after" serve --port "$port" >/dev/null 2>&1 & pids+=($!)
wait_port "$port"
pair serve "${client_bench[@]}" --backend elasticsearch --target-hosts "http://127.0.0.1:$port"

stub=$(free_port)
taskset -c 1 "$after" serve --stub --port "$stub" >/dev/null 2>&1 & pids+=($!)
wait_port "$stub"
pair stub "${client_bench[@]}" --backend elasticsearch --target-hosts "http://127.0.0.1:$stub"

redis=$(free_port)
taskset -c 1 redis-server --port "$redis" --bind 127.0.0.1 --save '' --appendonly no >/dev/null & pids+=($!)
wait_port "$redis"
pair redis --track redis-kv --track-params 'clients=[1,50],requests=50000' --backend redis --target-hosts "127.0.0.1:$redis"
