#!/usr/bin/env python3
"""Change points found by `runner trend` beside Apache Otava's, on the same series.

Races a small track N times per series (the machine's own noise: the throughput of 3,000
match_all searches on the embedded engine over 2,000 generated documents), then, in a copy of the store, scales the
throughput of every race from SHIFT_AT on down by 10%, 20% and 50% (a regression at a known
race); the unshifted series count false positives. Each series goes to `runner trend` (stored
races) and, as CSV, to `otava analyze` (the `apache-otava` package, in a venv: OTAVA=path).

Usage: python3 benches/trend_vs_otava.py [--races 30] [--series 3] [--shift-at 20]
"""

import argparse
import copy
import csv
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.environ.get("RUNNER", os.path.join(ROOT, "target/release/runner"))
OTAVA = os.environ.get("OTAVA", "/tmp/otava/bin/otava")

TRACK = """name: noisy
corpora: [{name: docs, target-index: docs, documents: [{generate: small, document-count: 2000}]}]
indices: [{name: docs}]
operations:
  - {name: create, type: create-index}
  - {name: index, type: bulk, params: {bulk-size: 500}}
  - {name: refresh, type: refresh}
  - {name: search, type: search, params: {index: docs, body: {query: {match_all: {}}}}}
challenges:
  - name: c
    schedule:
      - {operation: create}
      - {operation: index}
      - {operation: refresh}
      - {operation: search, warmup: 500, iterations: 3000}
"""


def race_series(home, track_dir, n):
    env = dict(os.environ, RUNNER_HOME=home)
    for _ in range(n):
        subprocess.run([RUNNER, "race", "--track-path", track_dir, "--quiet"], env=env,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    races = []
    for path in sorted(glob.glob(os.path.join(home, "races", "*", "race.json"))):
        races.append((path, json.load(open(path))))
    return races


def shifted_store(home, races, shift, at, out):
    """A copy of the store with throughput scaled by (1 - shift) from race `at` on."""
    shutil.copytree(home, out)
    values = []
    for i, (path, race) in enumerate(races):
        r = copy.deepcopy(race)
        factor = 1.0 - shift if i >= at else 1.0
        for t in r["tasks"]:
            for tr in t["trials"]:
                tr["throughput"] *= factor
        values.append(next(t for t in r["tasks"] if t["task"] == "search")["trials"][0]["throughput"])
        dst = path.replace(home, out, 1)
        json.dump(r, open(dst, "w"))
    return values


def runner_changes(home):
    env = dict(os.environ, RUNNER_HOME=home)
    out = subprocess.run([RUNNER, "trend", "--metric", "throughput", "--report-format", "json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    t = json.loads(out)
    return [c["index"] for s in t["series"] if s["task"] == "search" for c in s["changes"]]


def otava_changes(values, work):
    data = os.path.join(work, "series.csv")
    with open(data, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time", "throughput"])
        for i, v in enumerate(values):
            w.writerow([f"2026-01-01 00:{i // 60:02d}:{i % 60:02d} +0000", v])
    conf = os.path.join(work, "otava.yaml")
    with open(conf, "w") as f:
        f.write(f"tests:\n  series:\n    type: csv\n    file: {data}\n    time_column: time\n"
                f"    metrics: [throughput]\n    csv_options:\n      delimiter: ','\n      quote_char: '\"'\n")
    out = subprocess.run([OTAVA, "analyze", "--config-file", conf, "series", "--output", "json"],
                         check=True, capture_output=True, text=True, cwd=work).stdout
    result = json.loads(out[out.index("{"):])
    found = [c["index"] for cp in result.get("series", []) for c in cp.get("changes", [])]
    return sorted(set(found))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--races", type=int, default=30)
    ap.add_argument("--series", type=int, default=3)
    ap.add_argument("--shift-at", type=int, default=20)
    args = ap.parse_args()
    print(f"| series | noise (CV) | shift at race {args.shift_at + 1} | runner flags (race #) | Otava flags (race #) |")
    print("|---|--:|---|---|---|")
    fp = {"runner": 0, "otava": 0}
    for k in range(args.series):
        work = tempfile.mkdtemp(prefix="trend-otava-")
        track = os.path.join(work, "track")
        os.makedirs(track)
        open(os.path.join(track, "track.yaml"), "w").write(TRACK)
        home = os.path.join(work, "home")
        races = race_series(home, track, args.races)
        for shift in (0.0, 0.1, 0.2, 0.5):
            out = os.path.join(work, f"shift-{shift}")
            values = shifted_store(home, races, shift, args.shift_at, out)
            r = runner_changes(out)
            o = otava_changes(values, work)
            if shift == 0.0:
                fp["runner"] += len(r)
                fp["otava"] += len(o)
            else:
                fp["runner"] += len([i for i in r if i != args.shift_at])
                fp["otava"] += len([i for i in o if i != args.shift_at])
            show = lambda xs: ", ".join(str(i + 1) for i in xs) or "none"
            label = "none" if shift == 0.0 else f"-{shift:.0%}"
            base = values[: args.shift_at]
            mean = sum(base) / len(base)
            cv = (sum((v - mean) ** 2 for v in base) / (len(base) - 1)) ** 0.5 / mean
            print(f"| {k + 1} | {cv:.1%} | {label} | {show(r)} | {show(o)} |")
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nflags away from the shift (false positives) over {args.series} series × 4: "
          f"runner {fp['runner']}, Otava {fp['otava']}")


if __name__ == "__main__":
    sys.exit(main())
