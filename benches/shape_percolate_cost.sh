#!/bin/bash
# Search throughput of a geo_shape query and a percolate query beside a match_phrase and a
# script_score on the embedded engine (BENCHMARKS.md, "geo_shape and percolate"): geonames
# (234,908 places), 200,000 generated shapes (polygons and lines over Europe, WKT) and
# 100,000 generated percolator queries (match and bool queries over a 2,000-word vocabulary)
# indexed once per round, then each search unthrottled with one client on one pinned core for
# a fixed time, in rounds whose order alternates. Prints one CSV line per round and search.
# Usage: RUNNER_BIN=target/release/runner bash benches/shape_percolate_cost.sh [ROUNDS] [SECONDS]
set -eu
rounds=${1:-3}
seconds=${2:-6}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${RUNNER_BIN:-$root/target/release/runner}
. "$root/benches/search_rounds.sh"
geonames_track shape-percolate
python3 - "$track" <<'PY'
import json, random, sys
out = sys.argv[1]
rng = random.Random(7)
with open(f"{out}/shapes.json", "w") as f:
    for i in range(200_000):
        lon, lat = rng.uniform(-10, 30), rng.uniform(35, 65)
        w, h = rng.uniform(0.001, 0.05), rng.uniform(0.001, 0.05)
        if i % 2:
            shape = f"POLYGON (({lon} {lat}, {lon + w} {lat}, {lon + w} {lat + h}, {lon} {lat + h}, {lon} {lat}))"
        else:
            shape = f"LINESTRING ({lon} {lat}, {lon + w} {lat + h}, {lon + 2 * w} {lat})"
        f.write(json.dumps({"shape": shape}) + "\n")
words = [f"w{n}" for n in range(2_000)] + ["president", "bush", "hurricane", "katrina"]
with open(f"{out}/queries.json", "w") as f:
    for i in range(100_000):
        a, b = rng.choice(words), rng.choice(words)
        if i % 3 == 0:
            q = {"bool": {"must": [{"match": {"body": a}}, {"match": {"body": b}}]}}
        else:
            q = {"match": {"body": f"{a} {b}"}}
        f.write(json.dumps({"query": q}) + "\n")
PY
searches=(match-phrase script-score-painless geo-shape-intersects percolate)
write_track() {
  local order=("$@")
  {
    cat <<'YAML'
name: shape-percolate
corpora:
  - name: geonames
    from-track: geonames
  - name: shapes
    target-index: shapes
    documents:
      - {source-file: shapes.json, document-count: 200000}
  - name: queries
    target-index: queries
    documents:
      - {source-file: queries.json, document-count: 100000}
indices:
  - name: geonames
    body: index.json
  - name: shapes
    body: {mappings: {properties: {shape: {type: geo_shape}}}}
  - name: queries
    body: {mappings: {properties: {body: {type: text}, query: {type: percolator}}}}
operations:
  - {name: match-phrase, type: search, params: {index: geonames, body: {query: {match_phrase: {name: Sankt Georgen}}}}}
  - name: script-score-painless
    type: search
    params: {index: geonames, body: {query: {script_score: {query: {match_all: {}}, script: {source: "Math.log10(doc['population'].value * 1.2 + 2)"}}}}}
  - name: geo-shape-intersects
    type: search
    params: {index: shapes, body: {query: {geo_shape: {shape: {shape: "POLYGON ((12.5706 55.45074, 12.04631 55.70469, 12.06618 55.7991, 12.68098 55.93474, 13.48894 55.88091, 13.60262 55.68478, 13.44479 55.32661, 12.64235 55.32723, 12.5706 55.45074))"}}}}}
  - name: percolate
    type: search
    params: {index: queries, body: {query: {percolate: {field: query, document: {body: "president bush met the hurricane katrina victims"}}}}}
challenges:
  - name: c
    schedule:
      - {operation: {name: d, type: delete-index}}
      - {operation: {name: c, type: create-index}}
      - {operation: {name: index-geonames, type: bulk, params: {corpus: geonames, bulk-size: 5000}}, clients: 2}
      - {operation: {name: index-shapes, type: bulk, params: {corpus: shapes, bulk-size: 5000}}, clients: 2}
      - {operation: {name: index-queries, type: bulk, params: {corpus: queries, bulk-size: 5000}}, clients: 2}
      - {operation: {name: r, type: refresh}}
YAML
    timed_tasks "${order[@]}"
  } > "$track/track.yaml"
}
search_rounds

