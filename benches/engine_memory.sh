#!/usr/bin/env bash
# The embedded engine's memory as the corpus grows (#22): geonames' index-at-scale challenge
# at 1,000,000 and 11,396,503 documents (Rally's size), indices in RAM and on disk
# (--engine-storage). Prints docs/s, peak RSS (VmHWM) and peak anonymous RSS (RssAnon,
# sampled every 0.2 s from /proc: what the process holds that no file backs).
#   bash benches/engine_memory.sh [sizes...]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
bin=$PWD/target/release/runner
sizes=("${@:-1000000 11396503}")
read -r -a sizes <<< "${sizes[*]}"
echo "| storage | documents | docs/s | wall s | peak RSS MB | peak anonymous RSS MB |"
echo "|---|--:|--:|--:|--:|--:|"
for docs in "${sizes[@]}"; do
  for storage in ram disk; do
    home=$(mktemp -d)
    start=$(date +%s.%N)
    "$bin" --results-dir "$home" race --track geonames --challenge index-at-scale --quiet \
      --track-params "documents:$docs,bulk_sizes:5000,bulk_clients:8" \
      --engine-storage "$storage" --report-format json > "$home/report.json" &
    pid=$!
    anon=0; hwm=0
    while kill -0 "$pid" 2>/dev/null; do
      if read -r a h < <(awk '/^RssAnon:/{a=$2} /^VmHWM:/{h=$2} END{print a+0, h+0}' "/proc/$pid/status" 2>/dev/null); then
        (( a > anon )) && anon=$a
        (( h > hwm )) && hwm=$h
      fi
      sleep 0.2
    done
    wait "$pid"
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    rate=$(python3 -c "import json,sys; r=json.load(open('$home/report.json'))['race']; t=[t for t in r['tasks'] if t['task']=='index-append'][0]['trials'][0]; print(round(t['throughput']))")
    printf '| %s | %s | %s | %.0f | %d | %d |\n' "$storage" "$docs" "$rate" "$wall" $((hwm / 1024)) $((anon / 1024))
    rm -rf "$home"
  done
done
