#!/bin/bash
# Search throughput of nested queries and aggregations on the embedded engine (BENCHMARKS.md,
# "nested objects as documents of their own"): 100,000 generated questions with 0 to 6
# answers each (the nested track's mapping: tag, user and date per answer), indexed once per
# round, then each search unthrottled with one client on one pinned core for a fixed time, in
# rounds whose order alternates: a term query on the questions alone, the nested track's
# nested query (a tag and an answer date: a range on one field, read from the documents'
# flattened copy), the same forced through the join (the range inside `bool.must`), the same
# with inner hits, a nested query on two fields of one answer (the join), and the nested
# track's nested date_histogram. Prints one CSV line per
# round and search.
# Usage: RUNNER_BIN=target/release/runner bash benches/nested_cost.sh [ROUNDS] [SECONDS]
set -eu
rounds=${1:-3}
seconds=${2:-6}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${RUNNER_BIN:-$root/target/release/runner}
. "$root/benches/search_rounds.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
track="$work/nested-cost"
mkdir "$track"
python3 - "$track" <<'PY'
import json, random, sys
out = sys.argv[1]
rng = random.Random(11)
tags = [f"t{n}" for n in range(200)]
with open(f"{out}/questions.json", "w") as f:
    for i in range(100_000):
        answers = [
            {"user": f"u{rng.randrange(5_000)}",
             "date": f"20{rng.randrange(8, 16):02d}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T10:00:00Z"}
            for _ in range(rng.randrange(7))
        ]
        f.write(json.dumps({"qid": str(i), "tag": rng.choice(tags), "user": f"u{rng.randrange(5_000)}",
                            "answer_count": len(answers), "answers": answers}) + "\n")
PY
searches=(term nested-range nested-range-joined nested-inner-hits nested-two-fields nested-date-histo)
write_track() {
  local order=("$@")
  {
    cat <<'YAML'
name: nested-cost
corpora:
  - name: questions
    target-index: questions
    documents:
      - {source-file: questions.json, document-count: 100000}
indices:
  - name: questions
    body:
      mappings:
        dynamic: strict
        properties:
          qid: {type: keyword}
          tag: {type: keyword}
          user: {type: keyword}
          answer_count: {type: integer}
          answers: {type: nested, properties: {user: {type: keyword}, date: {type: date}}}
operations:
  - {name: term, type: search, params: {index: questions, body: {query: {term: {tag: t7}}}}}
  - name: nested-range
    type: search
    params: {index: questions, body: {query: {bool: {must: [{match: {tag: t7}}, {nested: {path: answers, query: {range: {answers.date: {lte: "2012-06-01T00:00:00Z"}}}}}]}}}}
  - name: nested-range-joined
    type: search
    params: {index: questions, body: {query: {bool: {must: [{match: {tag: t7}}, {nested: {path: answers, query: {bool: {must: [{range: {answers.date: {lte: "2012-06-01T00:00:00Z"}}}]}}}}]}}}}
  - name: nested-inner-hits
    type: search
    params: {index: questions, body: {size: 10, query: {bool: {must: [{match: {tag: t7}}, {nested: {path: answers, query: {range: {answers.date: {lte: "2012-06-01T00:00:00Z"}}}, inner_hits: {size: 3}}}]}}}}
  - name: nested-two-fields
    type: search
    params: {index: questions, body: {query: {nested: {path: answers, query: {bool: {must: [{term: {answers.user: u42}}, {range: {answers.date: {gte: "2012-01-01T00:00:00Z"}}}]}}}}}}
  - name: nested-date-histo
    type: search
    params: {index: questions, body: {size: 0, aggs: {answers: {nested: {path: answers}, aggs: {date_histo: {date_histogram: {field: answers.date, calendar_interval: month}}}}}}}
challenges:
  - name: c
    schedule:
      - {operation: {name: d, type: delete-index}}
      - {operation: {name: c, type: create-index}}
      - {operation: {name: index-questions, type: bulk, params: {corpus: questions, bulk-size: 5000}}, clients: 2}
      - {operation: {name: r, type: refresh}}
YAML
    timed_tasks "${order[@]}"
  } > "$track/track.yaml"
}
search_rounds
