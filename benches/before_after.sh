#!/usr/bin/env bash
# Two builds of runner, each judged by runner's own `compare` on every backend: client-bench
# (shortened: bulk 5,000 a request, search at 10,000 and 100,000 ops/s, 5 trials each) on the
# embedded engine, through `runner serve` and through `runner serve --stub` (the client alone),
# and GET/SET at 50 clients (5 trials) against redis-server. Two races per build and backend,
# one in each order, so `compare` has 5 trials a point for its Mann-Whitney U test (with 3 its
# p-value cannot go below 0.1, and no difference could be called significant).
#   [ONLY="stub redis"] bash benches/before_after.sh BEFORE_BIN AFTER_BIN
# (ONLY picks some of: embedded serve stub redis.)
# Prints, per backend, the metrics whose verdict is not `no change`: `worse`/`better` where both
# orders agree, `mixed` where they do not.
set -euo pipefail
before=${1:?the build before}
after=${2:?the build after}
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
wait_port() { for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; echo "nothing on port $1" >&2; exit 1; }

client_bench=(--track client-bench --track-params 'search_targets=[10000,100000],search_trials=5,search_warmup=2000,search_iterations=10000,bulk_sizes=[5000],bulk_trials=5')

# Four races against the same target, in both orders (before, after, after, before): on this
# machine the second of two back-to-back races is often the slower one, so one order alone
# mistakes the order for the build. Each order is judged by `runner compare`, and a metric's
# verdict is `worse` (or `better`) only where both orders say so; the rest are listed as
# `mixed` when the two orders disagree beyond the noise.
pair() {
  local name=$1; shift
  local home=$work/$name
  for bin in "$before" "$after" "$after" "$before"; do
    taskset -c 0 "$bin" --results-dir "$home" race "$@" --quiet >/dev/null
  done
  echo "## $name"
  # In the store: latest~3 before, latest~2 after, latest~1 after, latest before.
  "$after" --results-dir "$home" compare latest~3 latest~2 --report-format json > "$work/$name-1.json"
  "$after" --results-dir "$home" compare latest latest~1 --report-format json > "$work/$name-2.json"
  python3 - "$work/$name-1.json" "$work/$name-2.json" <<'PY'
import collections, json, sys
def verdicts(path):
    out = {}
    for t in json.load(open(path))["tasks"]:
        for m in t["metrics"]:
            out[(t["task"], t["sweep"], m["metric"])] = (m["verdict"], m["baseline"], m["contender"])
    return out
first, second = verdicts(sys.argv[1]), verdicts(sys.argv[2])
counts = collections.Counter()
for key in first.keys() & second.keys():
    (v1, b1, c1), (v2, b2, c2) = first[key], second[key]
    judged = {"regression", "improvement"}
    if v1 == v2 and v1 in judged:
        word = "worse" if v1 == "regression" else "better"
    elif v1 in judged or v2 in judged:
        word = "mixed"
    else:
        word = "no change"
    counts[word] += 1
    if word != "no change":
        task, sweep, metric = key
        print(f"| {task} | {sweep} | {metric} | {word} | before→after {b1:.4g}→{c1:.4g} ({v1}); after-first {b2:.4g}→{c2:.4g} ({v2}) |")
print("verdicts:", dict(counts))
PY
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
