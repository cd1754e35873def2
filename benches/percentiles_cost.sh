#!/bin/bash
# Search throughput of `percentiles` on the embedded engine (BENCHMARKS.md, "Percentiles with
# Elasticsearch's t-digest"): the geonames corpus (234,908 places) indexed once, then each
# search unthrottled with one client on one pinned core for a fixed time, in rounds whose
# order alternates; an `avg` over the same values as the floor. Prints one CSV line per round
# and search: ops/s and p50/p99 service time.
# Usage: RUNNER_BIN=target/release/runner bash benches/percentiles_cost.sh [ROUNDS] [SECONDS]
set -eu
rounds=${1:-3}
seconds=${2:-8}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${RUNNER_BIN:-$root/target/release/runner}
. "$root/benches/search_rounds.sh"
geonames_track percentiles-cost
searches=(avg-top percentiles-top percentiles-terms percentiles-terms-terms)
write_track() {
  local order=("$@")
  {
    cat <<'YAML'
name: percentiles-cost
corpora:
  - name: geonames
    from-track: geonames
indices:
  - name: geonames
    body: index.json
operations:
  - {name: avg-top, type: search, params: {body: {size: 0, aggs: {a: {avg: {field: population}}}}}}
  - {name: percentiles-top, type: search, params: {body: {size: 0, aggs: {p: {percentiles: {field: population}}}}}}
  - {name: percentiles-terms, type: search, params: {body: {size: 0, aggs: {c: {terms: {field: country_code}, aggs: {p: {percentiles: {field: population}}}}}}}}
  - {name: percentiles-terms-terms, type: search, params: {body: {size: 0, aggs: {c: {terms: {field: country_code}, aggs: {e: {terms: {field: feature_class}, aggs: {p: {percentiles: {field: population}}}}}}}}}}
YAML
    geonames_schedule
    timed_tasks "${order[@]}"
  } > "$track/track.yaml"
}
search_rounds
