#!/bin/bash
# Search throughput of scripted queries beside a match_phrase on the embedded engine
# (BENCHMARKS.md, "Scripts"): the geonames corpus (234,908 places) indexed once, then each
# search unthrottled with one client on one pinned core for a fixed time, in rounds whose
# order alternates. Prints one CSV line per round and search: ops/s and p50/p99 service time.
# Usage: RUNNER_BIN=target/release/runner bash benches/script_cost.sh [ROUNDS] [SECONDS]
set -eu
rounds=${1:-3}
seconds=${2:-8}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${RUNNER_BIN:-$root/target/release/runner}
. "$root/benches/search_rounds.sh"
geonames_track script-cost
searches=(match-phrase script-score-painless field-value-factor script-score-expression decay-geo-gauss script-filter)
write_track() {
  local order=("$@")
  {
    cat <<'YAML'
name: script-cost
corpora:
  - name: geonames
    from-track: geonames
indices:
  - name: geonames
    body: index.json
operations:
  - {name: match-phrase, type: search, params: {body: {query: {match_phrase: {name: Sankt Georgen}}}}}
  - name: script-score-painless
    type: search
    params: {body: {query: {script_score: {query: {match_all: {}}, script: {source: "Math.log10(doc['population'].value * 1.2 + 2)"}}}}}
  - name: field-value-factor
    type: search
    params: {body: {query: {function_score: {query: {match_all: {}}, field_value_factor: {field: population, factor: 1.2, modifier: log1p}, boost_mode: replace}}}}
  - name: script-score-expression
    type: search
    params: {body: {query: {script_score: {query: {match_all: {}}, script: {lang: expression, source: "abs(ln(abs(doc['population']) + 1) + doc['location'].lon + doc['location'].lat) * _score"}}}}}
  - name: decay-geo-gauss
    type: search
    params: {body: {query: {script_score: {query: {match_all: {}}, script: {source: "decayGeoGauss(params.origin, params.scale, params.offset, params.decay, doc['location'].value)", params: {origin: "52.37, 4.8951", scale: 500km, offset: 0km, decay: 0.1}}}}}}
  - name: script-filter
    type: search
    params: {body: {query: {bool: {filter: [{script: {script: "doc['population'].value > 100000"}}]}}}}
YAML
    geonames_schedule
    timed_tasks "${order[@]}"
  } > "$track/track.yaml"
}
search_rounds

