# Sourced by the search-cost benches: the rounds they share. Each round writes the track
# with the searches in alternating order (the caller's `write_track ORDER...`), races it with
# one client pinned to core 1, and prints the report's rows (benches/search_rows.py).
# Needs: rounds, searches (array), track (the track directory), work, bin, root.
search_rounds() {
  echo "round,search,ops_per_s,service_p50_ms,service_p99_ms,hits"
  local round order i
  for round in $(seq "$rounds"); do
    order=("${searches[@]}")
    if [ $((round % 2)) -eq 0 ]; then
      order=(); for ((i=${#searches[@]}-1; i>=0; i--)); do order+=("${searches[$i]}"); done
    fi
    write_track "${order[@]}"
    taskset -c 1 "$bin" --results-dir "$work/home-$round" race --track-path "$track" -q \
      --report-format json > "$work/report.json"
    python3 "$root/benches/search_rows.py" "$work/report.json" "$round"
  done
}

# The schedule's timed tasks, one per search in the order given.
timed_tasks() {
  local s
  for s in "$@"; do
    echo "      - {name: $s, operation: $s, clients: 1, warmup: 2s, time-period: ${seconds}s}"
  done
}

# A work directory (removed at exit) with the geonames track linked, and the directory of the
# caller's track NAME holding geonames' index body. Sets work and track.
geonames_track() {
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  ln -s "$root/tracks/geonames" "$work/geonames"
  track="$work/$1"
  mkdir "$track"
  cp "$root/tracks/geonames/index.json" "$track/index.json"
}

# The challenge's head for a track on geonames alone: the index made anew and loaded, then
# refreshed (the caller's timed tasks follow).
geonames_schedule() {
  cat <<'YAML'
challenges:
  - name: c
    schedule:
      - {operation: {name: d, type: delete-index}}
      - {operation: {name: c, type: create-index}}
      - {operation: {name: index, type: bulk, params: {corpus: geonames, bulk-size: 5000}}, clients: 2}
      - {operation: {name: r, type: refresh}}
YAML
}
