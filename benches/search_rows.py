#!/usr/bin/env python3
"""One CSV line per search task of a race's JSON report: round, task, ops/s (the median of the
task's throughput), p50 and p99 service time in ms, hits. Setup tasks (named in --skip, or
starting with `index-`) are left out. Shared by the search-cost benches.

    python3 benches/search_rows.py REPORT.json ROUND [--skip d,c,r]
"""
import argparse, json

a = argparse.ArgumentParser()
a.add_argument("report")
a.add_argument("round")
a.add_argument("--skip", default="d,c,r,index")
args = a.parse_args()
text = open(args.report).read()
report = json.loads(text[: text.rindex("}") + 1])
skip = set(args.skip.split(","))
for t in report["tasks"]:
    if t["task"] in skip or t["task"].startswith("index-"):
        continue
    s, tp = t["service_time_ms"], t["throughput"]
    ops = tp.get("median", tp.get("mean")) if isinstance(tp, dict) else tp
    print(f'{args.round},{t["task"]},{ops:.1f},{s["p50"]},{s["p99"]},{t.get("hits", "")}')
