#!/bin/bash
# The driver's CPU for live progress and the dashboard (BENCHMARKS.md, "Live progress and the
# dashboard"): a `sleep 0s` task on one pinned core, alternating rounds of three variants:
#   base  BASE_BIN, a build without live counters (e.g. commit 1eb5389)
#   after RUNNER_BIN, this build
#   dash  RUNNER_BIN with --dashboard and a browser's event stream (curl -N /events) attached
# Usage: BASE_BIN=/tmp/runner-base RUNNER_BIN=target/release/runner bash benches/live_cost.sh [ROUNDS]
set -u
rounds=${1:-5}
track=$(mktemp -d)
cat > "$track/track.yaml" <<'YAML'
name: ksb
operations: [{name: nap, type: sleep, params: {duration: 0s}}]
challenges:
  - name: c
    schedule:
      - {name: nap, operation: nap, warmup: 500000, iterations: 10000000}
YAML
echo "round,variant,user_s,sys_s,ops,throughput"
for round in $(seq "$rounds"); do
  for variant in base after dash; do
    home=$(mktemp -d)
    bin=$RUNNER_BIN; [ "$variant" = base ] && bin=$BASE_BIN
    extra=()
    if [ "$variant" = dash ]; then
      extra=(--dashboard 127.0.0.1:18999 --dashboard-keep 1s)
      (for _ in $(seq 100); do curl -sN http://127.0.0.1:18999/events > /dev/null 2>&1 && break; sleep 0.05; done) &
    fi
    /usr/bin/time -o "$home/time" -f "%U %S" taskset -c 1 "$bin" --results-dir "$home" race \
      --track-path "$track" -q --report-format json "${extra[@]}" > "$home/report.json" 2>/dev/null
    read -r user sys < "$home/time"
    read -r throughput ops < <(python3 -c "import json,sys; t=[x for x in json.load(open(sys.argv[1]))['tasks'] if x['task']=='nap'][0]; print(t['throughput']['median'], t['operations'])" "$home/report.json")
    echo "$round,$variant,$user,$sys,$ops,$throughput"
    wait
    rm -rf "$home"
  done
done
rm -rf "$track"
