#!/usr/bin/env python3
"""A track's own Python (track.py) under runner and under esrally 2.13, side by side against nginx
as a neutral stub (benches/http_side_by_side.py's: fixed JSON answers, pinned to core 1), each
tool pinned to core 0 in its own cpuacct cgroup (CPU seconds from the kernel, Python workers and
esrally's actors included).

  ESRALLY=venv/bin/esrally python3 benches/track_py.py --shared ../shared/rally-tracks
      [--python venv/bin/python] [--rounds 3] [--runner BIN]

Three parts:
- params/s per worker: the param sources of geonames (PureTermsQueryParamSource: 45,587 terms a
  body) and nested (NestedQueryParamSource), in-process in Python (the most any driver gets from
  them) and through runner's worker (drawn, sent as JSON, converted and prepared: the feeder's
  rate, from the race's record).
- CPU per operation, marginal: each tool races a scratch Rally track (the shared track's own
  track.py and data files, copied beside a track.json of search tasks: one fed by the param
  source, one with the same kind of body written out) twice, with N and N + dN iterations, and
  the CPU difference is divided by dN; ops/s from each tool's own report. Tools alternate.
- the worker round trip of a custom runner call: a runner that returns at once, at 1 and 8
  clients; latency minus service time per call (runner's record), medians over rounds.
"""

import argparse
import csv
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_side_by_side import NGINX_CONF, ROOT_JSON, SEARCH_JSON, free_port, measured, wait_for  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TRACK = """{
  "version": 2,
  "indices": [{"name": "%(index)s"}],
  "operations": [
    {"name": "with-source", "operation-type": "search", "param-source": "%(source)s"},
    {"name": "written-out", "operation-type": "search", "index": "%(index)s", "body": %(body)s}
  ],
  "schedule": [
    {"name": "with-source", "operation": "with-source", "clients": 1, "warmup-iterations": 0,
     "iterations": {{ with_iterations | default(100) }}},
    {"name": "written-out", "operation": "written-out", "clients": 1, "warmup-iterations": 0,
     "iterations": {{ written_iterations | default(100) }}}
  ]
}
"""

NOOP_TRACK = """{
  "version": 2,
  "indices": [{"name": "noop"}],
  "operations": [{"name": "noop", "operation-type": "noop-runner"}],
  "schedule": [{"name": "noop", "operation": "noop", "clients": {{ clients | default(1) }},
                "warmup-iterations": 200, "iterations": {{ iterations | default(4000) }}}]
}
"""

NOOP_PY = """
async def noop(es, params):
    return {"weight": 1, "unit": "ops"}


def register(registry):
    registry.register_runner("noop-runner", noop, async_runner=True)
"""


def scratch_track(work, shared, name, source, body, files):
    """A track directory: the shared track's track.py and data files, and a track.json of ours."""
    d = os.path.join(work, f"{name}-bench")
    os.makedirs(d, exist_ok=True)
    for f in ["track.py"] + files:
        shutil.copy(os.path.join(shared, "elastic", name, f), os.path.join(d, f))
    with open(os.path.join(d, "track.json"), "w") as f:
        f.write(TRACK % {"index": name, "source": source, "body": json.dumps(body)})
    return d


def geonames_body(shared):
    with open(os.path.join(shared, "elastic", "geonames", "terms.txt")) as f:
        terms = [line.strip() for line in f] + ["42"]
    return {"query": {"terms": {"name.raw": terms}}}


NESTED_BODY = {"query": {"bool": {"must": [
    {"match": {"tag": "rust"}},
    {"nested": {"path": "answers", "query": {"range": {"answers.date": {"lte": "2016-05-01"}}}}}]}}}


def in_process_rate(python, track_dir, cls, seconds=3.0):
    """params() calls per second of the source, in one Python process."""
    code = f"""
import importlib.util, sys, time
sys.path.insert(0, {os.path.dirname(track_dir)!r})
spec = importlib.util.spec_from_file_location("bench.track", {os.path.join(track_dir, "track.py")!r})
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
src = m.{cls}(None, {{}}).partition(0, 1)
n, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < {seconds}:
    src.params(); n += 1
print(n / (time.perf_counter() - t0))
"""
    out = subprocess.run(["taskset", "-c", "0", python, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def runner_race(args, work, port, track_dir, params):
    report = os.path.join(work, "race.json")
    cmd = [args.runner, "--results-dir", os.path.join(work, "home"), "race", "--track-path", track_dir,
           "--track-params", params, "--backend", "elasticsearch", "--target-hosts", f"http://127.0.0.1:{port}",
           "--quiet", "--report-format", "json", "--report-file", report]
    if args.python:
        cmd += ["--python", args.python]
    _, cpu, _ = measured(cmd)
    with open(report) as f:
        race = json.load(f)
    race = race.get("race", race)
    return {t["task"]: t["trials"][0] for t in race["tasks"]}, cpu


def esrally_race(args, work, port, track_dir, params):
    wait_for_no_rally()
    # Each run has its own HOME: esrally keeps its state there, and never kills other runs.
    home = tempfile.mkdtemp(prefix="esrally-home-", dir=work)
    report = os.path.join(home, "report.csv")
    cmd = [args.esrally, "race", f"--track-path={track_dir}", "--pipeline=benchmark-only", "--offline",
           f"--target-hosts=127.0.0.1:{port}", f"--track-params={params}", "--report-format=csv",
           f"--report-file={report}", "--on-error=abort"]
    env = dict(os.environ, HOME=home)
    _, cpu, _ = measured(cmd, env=env)
    rates = {}
    with open(report) as f:
        for row in csv.reader(f):
            if len(row) == 4 and row[0] == "Mean Throughput":
                rates[row[1]] = float(row[2])
    shutil.rmtree(home, ignore_errors=True)
    return rates, cpu


def wait_for_no_rally():
    """esrally refuses to start while another Rally process lives (its actor system lingers a
    moment after a race): wait, rather than --kill-running-processes, which kills any."""
    for _ in range(300):
        # By name too: a killed actor not yet reaped has no command line, only its name.
        named = subprocess.run(["pgrep", "-x", "esrally"], capture_output=True).returncode == 0
        running = subprocess.run(["pgrep", "-f", "python.*bin/esrally"], capture_output=True).returncode == 0
        if not named and not running:
            return
        time.sleep(0.1)


def unnamed_python(args):
    """esrally takes any Python process whose command line says `esrally` for another Rally
    (this bench's, given esrally's venv as --python): the venv is reached through a link
    whose path does not say it, and the bench started again with it."""
    if "esrally" not in args.python:
        return
    venv = os.path.dirname(os.path.dirname(os.path.abspath(args.python)))
    link = os.path.join(tempfile.mkdtemp(prefix="track-py-venv-"), "venv")
    os.symlink(venv, link)
    argv = [a.replace(args.python, os.path.join(link, "bin", os.path.basename(args.python))) for a in sys.argv]
    os.execv(sys.executable, [sys.executable] + argv)


def cpu_part(args, work, port, tracks):
    """Marginal CPU per operation of each task, and its ops/s, per tool (medians over rounds)."""
    n, dn = args.iterations, args.iterations
    rows = []
    for name, d in tracks:
        per = {("runner", "with-source"): [], ("runner", "written-out"): [],
               ("esrally", "with-source"): [], ("esrally", "written-out"): []}
        for r in range(args.rounds):
            for tool in (("esrally", "runner") if r % 2 == 0 else ("runner", "esrally")):
                race = esrally_race if tool == "esrally" else runner_race
                base_p = f"with_iterations:{n},written_iterations:{n}"
                out0, cpu0 = race(args, work, port, d, base_p)
                out1, cpu1 = race(args, work, port, d, f"with_iterations:{n + dn},written_iterations:{n}")
                out2, cpu2 = race(args, work, port, d, f"with_iterations:{n},written_iterations:{n + dn}")
                for task, cpu_plus, out in (("with-source", cpu1, out1), ("written-out", cpu2, out2)):
                    rate = out[task] if tool == "esrally" else out[task]["throughput"]
                    per[(tool, task)].append(((cpu_plus - cpu0) / dn, rate))
                    print(f"  {name} round {r} {tool} {task}: {(cpu_plus - cpu0) / dn * 1e6:,.0f} us CPU/op, "
                          f"{rate:,.1f} ops/s", file=sys.stderr)
        rows.append((name, per))
    print("\n| track | task | tool | µs CPU per op (marginal, median) | ops/s on one core (median) |")
    print("|---|---|---|--:|--:|")
    for name, per in rows:
        for (tool, task), v in per.items():
            print(f"| {name} | {task} | {tool} | {statistics.median(x[0] for x in v) * 1e6:,.0f} "
                  f"| {statistics.median(x[1] for x in v):,.1f} |")


def params_part(args, work, port, tracks, python):
    print("\n| source | in-process params/s (one Python) | through runner's worker params/s (feeder) |")
    print("|---|--:|--:|")
    for (name, d), cls in zip(tracks, ("PureTermsQueryParamSource", "NestedQueryParamSource")):
        inproc = [in_process_rate(python, d, cls) for _ in range(args.rounds)]
        fed = []
        for _ in range(args.rounds):
            out, _ = runner_race(args, work, port, d, f"with_iterations:{args.iterations},written_iterations:1")
            fed.append(out["with-source"]["driver"]["param_source"]["draws_per_second"])
        print(f"| {name} `{cls}` | {statistics.median(inproc):,.0f} | {statistics.median(fed):,.0f} |")


def round_trip_part(args, work, port):
    d = os.path.join(work, "noop-bench")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "track.json"), "w") as f:
        f.write(NOOP_TRACK)
    with open(os.path.join(d, "track.py"), "w") as f:
        f.write(NOOP_PY)
    print("\n| clients | round trip per call, µs (latency − service, p50) | mean | calls/s |")
    print("|--:|--:|--:|--:|")
    for clients in (1, 8):
        p50s, means, rates = [], [], []
        for _ in range(args.rounds):
            out, _ = runner_race(args, work, port, d, f"clients:{clients},iterations:4000")
            t = out["noop"]
            p50s.append((t["latency_ms"]["p50"] - t["service_time_ms"]["p50"]) * 1000)
            means.append((t["latency_ms"]["mean"] - t["service_time_ms"]["mean"]) * 1000)
            rates.append(t["throughput"])
        print(f"| {clients} | {statistics.median(p50s):,.0f} | {statistics.median(means):,.0f} "
              f"| {statistics.median(rates):,.0f} |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shared", default=os.path.join(REPO, "..", "shared", "rally-tracks"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--runner", default=None)
    p.add_argument("--python", default="", help="the Python for track.py (runner's --python); with elasticsearch[async]")
    p.add_argument("--part", choices=["params", "cpu", "round-trip", "all"], default="all")
    p.add_argument("--only", default="", help="one track of the cpu part: geonames or nested")
    args = p.parse_args()
    args.esrally = os.environ.get("ESRALLY") or shutil.which("esrally") or "esrally"
    unnamed_python(args)
    if args.runner is None:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=REPO, check=True)
        args.runner = os.path.join(REPO, "target", "release", "runner")
    python = args.python or sys.executable
    work = tempfile.mkdtemp(prefix="track-py-")
    port = free_port()
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write(NGINX_CONF.format(work=work, port=port, root=ROOT_JSON, search=SEARCH_JSON))
    with open(os.path.join(work, "bulk.json"), "w") as f:
        f.write('{"took":1,"errors":false,"items":[]}')
    nginx = subprocess.Popen(["taskset", "-c", "1", "nginx", "-c", f"{work}/nginx.conf", "-p", work],
                             stderr=subprocess.DEVNULL)
    try:
        wait_for(port)
        random.seed(1)
        tracks = [
            ("geonames", scratch_track(work, args.shared, "geonames", "pure-terms-query-source",
                                       geonames_body(args.shared), ["terms.txt"])),
            ("nested", scratch_track(work, args.shared, "nested", "nested-query-source", NESTED_BODY,
                                     ["queries.csv"])),
        ]
        if args.part in ("params", "all"):
            params_part(args, work, port, tracks, python)
        if args.part in ("round-trip", "all"):
            round_trip_part(args, work, port)
        if args.part in ("cpu", "all"):
            cpu_part(args, work, port, [t for t in tracks if args.only in ("", t[0])])
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
