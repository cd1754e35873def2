#!/usr/bin/env python3
"""Search throughput of aggregations beside a match_phrase on the embedded engine: geonames'
234,908 real documents (tracks/geonames) with a `modified` date derived from each geonameid,
indexed once per round, then one client, unthrottled, per search:
  - match_phrase "Sankt Georgen" on `name` (the geonames track's search);
  - terms on `country_code` (top 10 buckets), size 0;
  - date_histogram on `modified`, calendar_interval week, size 0;
  - terms on `country_code` with a sum of `population` per bucket, size 0;
  - auto_date_histogram on `modified` (20 buckets), significant_terms on `country_code` for
    places of 100,000 people or more, and a zoom-4 geotile_grid on `location`, size 0.
Prints, per storage (ram, disk), the median over rounds of ops/s and of p50/p99 service time.

    python3 benches/agg_search.py [--rounds 3] [--iterations 2000] [--storage ram,disk]
"""
import argparse, json, os, statistics, subprocess, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "runner")

SEARCHES = {
    "match-phrase": {"query": {"match_phrase": {"name": "Sankt Georgen"}}},
    "terms": {"size": 0, "aggs": {"by": {"terms": {"field": "country_code", "size": 10}}}},
    "date-histogram": {"size": 0, "aggs": {"weeks": {"date_histogram": {"field": "modified", "calendar_interval": "week"}}}},
    "terms-sum": {"size": 0, "aggs": {"by": {"terms": {"field": "country_code", "size": 10}, "aggs": {"pop": {"sum": {"field": "population"}}}}}},
    # Two passes each: the dates' extent, or the foreground's size, then the buckets.
    "auto-date-histogram": {"size": 0, "aggs": {"t": {"auto_date_histogram": {"field": "modified", "buckets": 20}}}},
    "significant-terms": {"size": 0, "query": {"range": {"population": {"gte": 100000}}},
                          "aggs": {"s": {"significant_terms": {"field": "country_code"}}}},
    "geotile-grid": {"size": 0, "aggs": {"g": {"geotile_grid": {"field": "location", "precision": 4}}}},
}


def corpus(dir):
    """geonames with a `modified` date: day (geonameid * 7919) mod 9,000 after 2000-01-01."""
    import datetime
    out = os.path.join(dir, "docs.json")
    src = subprocess.run(["zstdcat", os.path.join(ROOT, "tracks", "geonames", "documents.json.zst")],
                         capture_output=True, check=True).stdout.decode()
    n = 0
    with open(out, "w") as f:
        for line in src.splitlines():
            d = json.loads(line)
            day = datetime.date(2000, 1, 1) + datetime.timedelta(days=(d["geonameid"] * 7919) % 9000)
            d["modified"] = day.isoformat()
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
            n += 1
    return n


def track(dir, n, iterations):
    ops = "\n".join(
        f"  - name: {name}\n    type: search\n    params:\n      index: places\n      body: {json.dumps(body)}"
        for name, body in SEARCHES.items())
    tasks = "\n".join(f"      - {{operation: {name}, warmup: {iterations // 10}, iterations: {iterations}}}"
                      for name in SEARCHES)
    with open(os.path.join(dir, "track.yaml"), "w") as f:
        f.write(f"""name: agg-search
corpora:
  - {{name: places, target-index: places, documents: [{{source-file: docs.json, document-count: {n}}}]}}
indices:
  - name: places
    body:
      mappings:
        properties:
          name: {{type: text}}
          country_code: {{type: keyword}}
          population: {{type: long}}
          modified: {{type: date}}
          location: {{type: geo_point}}
operations:
  - {{name: delete, type: delete-index}}
  - {{name: create, type: create-index}}
  - {{name: index, type: bulk, params: {{bulk-size: 5000}}}}
  - {{name: refresh, type: refresh}}
  - {{name: merge, type: force-merge, params: {{max-num-segments: 1}}}}
{ops}
challenges:
  - name: default
    default: true
    schedule:
      - operation: delete
      - operation: create
      - operation: index
      - operation: refresh
      - operation: merge
{tasks}
""")


def race(dir, home, storage):
    subprocess.run([BIN, "race", "--track-path", dir, "--results-dir", home, "--engine-storage", storage,
                    "--quiet", "--report-format", "json"], check=True, capture_output=True)
    races = sorted(os.listdir(os.path.join(home, "races")))
    with open(os.path.join(home, "races", races[-1], "race.json")) as f:
        r = json.load(f)
    out = {}
    for t in r["tasks"]:
        if t["task"] in SEARCHES:
            tr = t["trials"][0]
            assert tr["errors"] == 0, tr
            out[t["task"]] = (tr["throughput"], tr["service_time_ms"]["p50"], tr["service_time_ms"]["p99"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--storage", default="ram,disk")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="agg-search-")
    n = corpus(work)
    track(work, n, a.iterations)
    storages = a.storage.split(",")
    results = {s: {name: [] for name in SEARCHES} for s in storages}
    for _ in range(a.rounds):
        for s in storages:  # alternating storages within each round
            home = tempfile.mkdtemp(prefix="agg-search-home-")
            for name, v in race(work, home, s).items():
                results[s][name].append(v)
    print(f"{n} documents, one segment, 1 client, {a.iterations} measured searches each, median of {a.rounds} rounds\n")
    print("| storage | search | ops/s | p50 ms | p99 ms |")
    print("|---|---|--:|--:|--:|")
    for s in storages:
        for name in SEARCHES:
            runs = results[s][name]
            med = lambda i: statistics.median(r[i] for r in runs)
            print(f"| {s} | {name} | {med(0):,.0f} | {med(1):.3f} | {med(2):.3f} |")


if __name__ == "__main__":
    main()
