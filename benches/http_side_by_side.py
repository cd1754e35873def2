#!/usr/bin/env python3
"""runner's elasticsearch backend side by side with wrk and with esrally, against nginx as a
neutral stub that answers fixed JSON (so what is measured is the client and the loopback).

  [ESRALLY=venv/bin/esrally] python3 benches/http_side_by_side.py [--rounds 3] [--seconds 6]
      [--part wrk|rally|bulk-indexer|all] [--runner BIN]

esrally 2.13 from PyPI: python3 -m venv venv && venv/bin/pip install esrally==2.13.0

- nginx (Debian) answers `/`, `_search`, `_bulk` (5,000 items), `_nodes/*`, `_cluster/*`,
  `_stats` and index admin, with X-Elastic-Product; one process pinned to core 1.
- Every client is pinned to core 0 (`taskset -c 0`) and runs in its own cpuacct cgroup: its CPU
  seconds (all threads and processes) are read from the kernel, not from the tool.
- wrk part: search and bulk (5,000 geonames documents a request), 1 and 64 connections, runner
  against `wrk -t1` (and with `--hyper`, hyper's client connection API in a bare loop,
  benches/hyper-conn-client). Whole-process CPU over whole-run requests for each.
- esrally part: the same Rally track.json for both (delete/create index, bulk 5,000 a request,
  then match_phrase searches), 1 and 8 clients. Both tools have a fixed start-up cost (esrally's
  is tens of seconds of Python), so CPU per operation is marginal: each tool runs the track
  three times, (bulk B, search S), (B, S + dS) and (B + dB, S), and the CPU difference is
  divided by the operations added.
- bulk-indexer part: the bulk-indexer track against `runner serve --stub` (one item per action,
  so every document is accounted for), runner on one core: docs/s per core.
- Tools alternate round by round; tables give medians over rounds and the ratios.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERY = {"query": {"match_phrase": {"name": "Sankt Georgen"}}}
BULK_SIZE = 5000
CORPUS_DOCS = 200_000  # 40 bulks of 5,000: every bulk is full, as the stub's reply says

ROOT_JSON = (
    '{"name":"stub","cluster_name":"stub","cluster_uuid":"stub","version":{"number":"8.15.0",'
    '"build_flavor":"default","build_type":"tar","build_hash":"stub","build_snapshot":false,'
    '"lucene_version":"9.11.1"},"tagline":"You Know, for Search"}'
)
SEARCH_JSON = (
    '{"took":1,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},'
    '"hits":{"total":{"value":1,"relation":"eq"},"max_score":1.0,"hits":[]}}'
)
NGINX_CONF = """
worker_processes 1;
daemon off;
master_process off;
error_log stderr error;
pid {work}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 1000000000;
  keepalive_timeout 75s;
  client_max_body_size 512m;
  client_body_temp_path {work}/body;
  proxy_temp_path {work}/proxy; fastcgi_temp_path {work}/fcgi;
  uwsgi_temp_path {work}/uwsgi; scgi_temp_path {work}/scgi;
  default_type application/json;
  server {{
    listen 127.0.0.1:{port};
    add_header X-Elastic-Product Elasticsearch always;
    location = / {{ return 200 '{root}'; }}
    location ~ /_search$ {{ return 200 '{search}'; }}
    # The static module refuses POST; an error page turns the request into a GET of the file.
    location ~ /_bulk$ {{ error_page 405 =200 /bulk.json; return 405; }}
    location = /bulk.json {{ internal; root {work}; }}
    location ~ ^/_cluster/health {{ return 200 '{{"cluster_name":"stub","status":"green","timed_out":false,"number_of_nodes":1}}'; }}
    location ~ ^/_cluster/settings {{ return 200 '{{"persistent":{{}},"transient":{{}}}}'; }}
    location ~ ^/_nodes {{ return 200 '{{"_nodes":{{"total":1,"successful":1,"failed":0}},"cluster_name":"stub","nodes":{{}}}}'; }}
    location ~ /_stats {{ return 200 '{{"_shards":{{"total":1,"successful":1,"failed":0}},"_all":{{"primaries":{{}},"total":{{}}}},"indices":{{}}}}'; }}
    location / {{ return 200 '{{"acknowledged":true,"shards_acknowledged":true}}'; }}
  }}
}}
"""

RALLY_TRACK = """{
  "version": 2,
  "description": "geonames: bulk 5,000 a request, then match_phrase searches (runner and esrally alike)",
  "indices": [{"name": "geonames", "body": "index.json"}],
  "corpora": [{"name": "geonames-bench", "documents": [
    {"source-file": "documents.json", "document-count": %d, "uncompressed-bytes": %d, "target-index": "geonames"}]}],
  "schedule": [
    {"operation": {"operation-type": "delete-index"}},
    {"operation": {"operation-type": "create-index"}},
    {"name": "bulk", "operation": {"operation-type": "bulk", "bulk-size": %d, "looped": true},
     "clients": {{ clients | default(1) }}, "warmup-iterations": 0, "iterations": {{ bulk_iterations | default(40) }}},
    {"name": "search", "operation": {"operation-type": "search", "index": "geonames", "body": %s},
     "clients": {{ clients | default(1) }}, "warmup-iterations": 0, "iterations": {{ search_iterations | default(20000) }}}
  ]
}
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for(port):
    """Until a server listens on `port` (at most 5 s)."""
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on port {port}")


class Cgroup:
    """cpuacct and cpuset cgroups (v1) the measured command and everything it starts run in:
    CPU seconds come from the kernel, and no process of the tool can leave the client's core
    (taskset alone is a hint a tool may reset)."""

    ACCT = "/sys/fs/cgroup/cpuacct"
    CPUSET = "/sys/fs/cgroup/cpuset"

    def __init__(self, core):
        name = "runner-bench-" + uuid.uuid4().hex[:8]
        self.acct = os.path.join(self.ACCT, name)
        self.cpuset = os.path.join(self.CPUSET, name)
        os.mkdir(self.acct)
        os.mkdir(self.cpuset)
        for key, value in (("cpuset.cpus", core), ("cpuset.mems", "0")):
            with open(os.path.join(self.cpuset, key), "w") as f:
                f.write(value)

    def join_command(self):
        """A shell prefix that moves the shell into both groups, then execs the command."""
        return ["sh", "-c", 'echo $$ > "$0"; echo $$ > "$1"; shift; exec "$@"',
                os.path.join(self.acct, "cgroup.procs"), os.path.join(self.cpuset, "cgroup.procs")]

    def usage_seconds(self):
        with open(os.path.join(self.acct, "cpuacct.usage")) as f:
            return int(f.read()) / 1e9

    def close(self):
        # Leftovers (esrally's actor system) are stopped before the groups go.
        for _ in range(50):
            with open(os.path.join(self.acct, "cgroup.procs")) as f:
                pids = [int(p) for p in f.read().split()]
            if not pids:
                break
            for p in pids:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        os.rmdir(self.acct)
        os.rmdir(self.cpuset)


def measured(cmd, core="0", env=None, timeout=1800):
    """Runs `cmd` pinned to `core` in its own cgroup: (stdout, CPU seconds, wall seconds)."""
    group = Cgroup(core)
    try:
        wrapper = group.join_command() + ["taskset", "-c", core] + cmd
        start = time.monotonic()
        out = subprocess.run(wrapper, capture_output=True, text=True, env=env, timeout=timeout)
        wall = time.monotonic() - start
        cpu = group.usage_seconds()
    finally:
        group.close()
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out.stdout, cpu, wall


def prepare(work, port):
    docs = os.path.join(work, "track", "documents.json")
    os.makedirs(os.path.dirname(docs))
    zst = os.path.join(REPO, "tracks", "geonames", "documents.json.zst")
    with open(docs, "wb") as out:
        dec = subprocess.Popen(["zstd", "-dc", zst], stdout=subprocess.PIPE)
        for i, line in enumerate(dec.stdout):
            if i == CORPUS_DOCS:
                break
            out.write(line)
        dec.kill()
        dec.wait()
    shutil.copy(os.path.join(REPO, "tracks", "geonames", "index.json"), os.path.join(work, "track"))
    with open(os.path.join(work, "track", "track.json"), "w") as f:
        f.write(RALLY_TRACK % (CORPUS_DOCS, os.path.getsize(docs), BULK_SIZE, json.dumps(QUERY)))
    item = ('{"index":{"_index":"geonames","_id":"1","_version":1,"result":"created",'
            '"_shards":{"total":1,"successful":1,"failed":0},"_seq_no":0,"_primary_term":1,"status":201}}')
    with open(os.path.join(work, "bulk.json"), "w") as f:
        f.write('{"took":5,"errors":false,"items":[' + ",".join([item] * BULK_SIZE) + "]}")
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write(NGINX_CONF.format(work=work, port=port, root=ROOT_JSON, search=SEARCH_JSON))
    # wrk: the same requests (the bulk body is the first 5,000 documents with action lines).
    with open(docs, "rb") as src, open(os.path.join(work, "bulk.ndjson"), "wb") as out:
        for i, line in enumerate(src):
            if i == BULK_SIZE:
                break
            out.write(b'{"index":{}}\n' + line)
    with open(os.path.join(work, "search.json"), "w") as f:
        f.write(json.dumps(QUERY, separators=(",", ":")))
    with open(os.path.join(work, "search.lua"), "w") as f:
        f.write('wrk.method = "POST"\nwrk.body = \'%s\'\nwrk.headers["Content-Type"] = "application/json"\n'
                % json.dumps(QUERY, separators=(",", ":")))
    with open(os.path.join(work, "bulk.lua"), "w") as f:
        f.write('local f = io.open("%s/bulk.ndjson", "rb"); wrk.body = f:read("*all"); f:close()\n'
                'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/x-ndjson"\n' % work)


def runner_yaml(work, kind, clients, seconds):
    """A track of one task for the wrk part: search, or looped bulk over the corpus."""
    path = os.path.join(work, f"yaml-{kind}-{clients}")
    os.makedirs(path, exist_ok=True)
    if not os.path.exists(os.path.join(path, "documents.json")):
        # A hard link: runner refuses a symlink that leads out of the track directory.
        os.link(os.path.join(work, "track", "documents.json"), os.path.join(path, "documents.json"))
    task = {"name": kind, "operation": kind, "clients": clients, "warmup": "1s", "time-period": f"{seconds}s"}
    track = {
        "name": "side-by-side",
        "indices": [{"name": "geonames"}],
        "corpora": [{"name": "g", "target-index": "geonames",
                     "documents": [{"source-file": "documents.json", "document-count": CORPUS_DOCS}]}],
        "operations": [
            {"name": "search", "type": "search", "params": {"body": QUERY}},
            {"name": "bulk", "type": "bulk", "params": {"bulk-size": BULK_SIZE, "looped": True}},
        ],
        "challenges": [{"name": "c", "schedule": [task]}],
    }
    with open(os.path.join(path, "track.yaml"), "w") as f:
        json.dump(track, f)  # JSON is YAML
    return path


def run_runner(args, work, port, track_args):
    report = os.path.join(work, "race.json")
    cmd = [args.runner, "--results-dir", os.path.join(work, "home"), "race", *track_args,
           "--backend", "elasticsearch", "--target-hosts", f"http://127.0.0.1:{port}",
           "--quiet", "--report-format", "json", "--report-file", report]
    _, cpu, wall = measured(cmd)
    with open(report) as f:
        race = json.load(f)
    race = race.get("race", race)
    return {t["task"]: t["trials"][0] for t in race["tasks"]}, cpu, wall


def wrk_part(args, work, port):
    rows = []
    for kind in ("search", "bulk"):
        for conns in (1, 64):
            track = runner_yaml(work, kind, conns, args.seconds)
            per = {"wrk": [], "runner": []}
            if args.hyper:
                per["hyper"] = []
            tools = list(per)
            for r in range(args.rounds):
                # Rotated each round, so that no tool always runs first.
                order = tools[r % len(tools):] + tools[:r % len(tools)]
                for tool in order:
                    if tool == "hyper":
                        body, ctype = ((os.path.join(work, "search.json"), "application/json") if kind == "search"
                                       else (os.path.join(work, "bulk.ndjson"), "application/x-ndjson"))
                        out, cpu, _ = measured([args.hyper, f"127.0.0.1:{port}", f"/geonames/_{kind}", ctype, body,
                                                str(conns), str(args.seconds)])
                        requests, rps = int(out.split()[0]), float(out.split()[1])
                    elif tool == "wrk":
                        out, cpu, _ = measured(["wrk", "-t1", f"-c{conns}", f"-d{args.seconds}s", "-s",
                                                os.path.join(work, f"{kind}.lua"),
                                                f"http://127.0.0.1:{port}/geonames/_{kind}"])
                        requests = int(next(l for l in out.splitlines() if "requests in" in l).split()[0])
                        rps = float(next(l for l in out.splitlines() if l.startswith("Requests/sec")).split()[1])
                    else:
                        trials, cpu, _ = run_runner(args, work, port, ["--track-path", track])
                        t = trials[kind]
                        requests = t["requests"] + t["warmup_operations"]
                        rps = t["requests_per_second"]
                    docs = BULK_SIZE if kind == "bulk" else 1
                    per[tool].append((rps * docs, cpu / (requests * docs)))
                    print(f"  {kind} c={conns} round {r} {tool}: {rps * docs:,.0f}/s, "
                          f"{cpu / (requests * docs) * 1e6:.3f} us CPU each", file=sys.stderr)
            rows.append((kind, conns, per))
    unit = {"search": "req", "bulk": "doc"}
    hyper = " | hyper conn /s | hyper µs CPU" if args.hyper else ""
    print(f"\n| operation | connections | wrk /s | runner /s | runner/wrk | wrk µs CPU | runner µs CPU | runner/wrk{hyper} |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|" + ("--:|--:|" if args.hyper else ""))
    for kind, conns, per in rows:
        med = {t: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v) * 1e6) for t, v in per.items()}
        (w_rate, w_cpu), (r_rate, r_cpu) = med["wrk"], med["runner"]
        extra = f" | {med['hyper'][0]:,.0f} | {med['hyper'][1]:.3f}" if "hyper" in med else ""
        print(f"| {kind} ({unit[kind]}) | {conns} | {w_rate:,.0f} | {r_rate:,.0f} | {r_rate / w_rate:.2f} "
              f"| {w_cpu:.3f} | {r_cpu:.3f} | {r_cpu / w_cpu:.2f}{extra} |")


def esrally_run(args, work, port, params):
    cmd = [args.esrally, "race", f"--track-path={work}/track", "--pipeline=benchmark-only", "--offline",
           f"--target-hosts=127.0.0.1:{port}", f"--track-params={params}", "--report-format=csv",
           f"--report-file={work}/esrally.csv", "--on-error=abort"]
    if os.path.exists(f"{work}/esrally.csv"):
        os.remove(f"{work}/esrally.csv")
    # A HOME of its own per run, never --kill-running-processes (it kills every esrally on the
    # machine, a CI's included).
    home = tempfile.mkdtemp(prefix="esrally-home-", dir=work)
    _, cpu, wall = measured(cmd, env=dict(os.environ, HOME=home))
    shutil.rmtree(home, ignore_errors=True)
    rates = {}
    with open(f"{work}/esrally.csv") as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) == 4 and parts[0] == "Mean Throughput":
                rates[parts[1]] = float(parts[2])
    return rates, cpu


def esrally_part(args, work, port):
    b0, s0 = 4, 2000
    rows = []
    for clients in (1, 8):
        db, ds = max(1, 80 // clients), 40000 // clients
        runs = {"base": (b0, s0), "search": (b0, s0 + ds), "bulk": (b0 + db, s0)}
        per = {"esrally": [], "runner": []}
        for r in range(args.rounds):
            order = ("esrally", "runner") if r % 2 == 0 else ("runner", "esrally")
            for tool in order:
                cpu, rate = {}, {}
                for name, (b, s) in runs.items():
                    params = f"clients:{clients},bulk_iterations:{b},search_iterations:{s}"
                    if tool == "esrally":
                        rates, cpu[name] = esrally_run(args, work, port, params)
                        rate[name] = rates
                    else:
                        trials, cpu[name], _ = run_runner(
                            args, work, port, ["--track-path", f"{work}/track", "--track-params", params])
                        rate[name] = {k: v["throughput"] for k, v in trials.items()}
                search_cpu = (cpu["search"] - cpu["base"]) / (ds * clients)
                bulk_cpu = (cpu["bulk"] - cpu["base"]) / (db * clients * BULK_SIZE)
                per[tool].append((rate["search"]["search"], search_cpu, rate["bulk"]["bulk"], bulk_cpu))
                print(f"  esrally part c={clients} round {r} {tool}: search {rate['search']['search']:,.0f} ops/s "
                      f"{search_cpu * 1e6:.2f} us/op; bulk {rate['bulk']['bulk']:,.0f} docs/s "
                      f"{bulk_cpu * 1e6:.3f} us/doc", file=sys.stderr)
        rows.append((clients, per))
    print("\n| clients | measure | esrally | runner | ratio |")
    print("|--:|---|--:|--:|--:|")
    for clients, per in rows:
        med = {t: [statistics.median(x[i] for x in per[t]) for i in range(4)] for t in per}
        e, n = med["esrally"], med["runner"]
        print(f"| {clients} | search ops/s | {e[0]:,.0f} | {n[0]:,.0f} | runner {n[0] / e[0]:.1f}× |")
        print(f"| {clients} | search µs CPU/op | {e[1] * 1e6:.1f} | {n[1] * 1e6:.2f} | esrally {e[1] / n[1]:.1f}× |")
        print(f"| {clients} | bulk docs/s | {e[2]:,.0f} | {n[2]:,.0f} | runner {n[2] / e[2]:.1f}× |")
        print(f"| {clients} | bulk µs CPU/doc | {e[3] * 1e6:.3f} | {n[3] * 1e6:.3f} | esrally {e[3] / n[3]:.1f}× |")


def bulk_indexer_part(args, work):
    """The bulk-indexer track (1M generated small documents, 4 workers, 3 MB requests) against
    `runner serve --stub` on core 1, which answers one item per action: docs/s on one core."""
    port = free_port()
    stub = subprocess.Popen(["taskset", "-c", "1", args.runner, "serve", "--stub", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(port)
        rates, cpus = [], []
        for r in range(args.rounds):
            trials, cpu, _ = run_runner(args, work, port, ["--track", "bulk-indexer", "--track-params",
                                                           "count:1000000,runs:5,warmup_runs:1"])
            race = json.load(open(os.path.join(work, "race.json")))
            race = race.get("race", race)
            task = next(t for t in race["tasks"] if t["task"] == "index-small")
            per_trial = [t["throughput"] for t in task["trials"]]
            docs = 6 * 1_000_000  # a warmup run and 5 runs, each the whole corpus
            rates.append(statistics.median(per_trial))
            cpus.append(cpu / docs)
            print(f"  bulk-indexer round {r}: {rates[-1]:,.0f} docs/s (median of 5 runs), "
                  f"{cpus[-1] * 1e6:.3f} us CPU/doc (whole process)", file=sys.stderr)
    finally:
        stub.terminate()
        stub.wait()
    rate = statistics.median(rates)
    print("\n| bulk-indexer on one core (runner serve --stub on the other) | median |")
    print("|---|--:|")
    print(f"| docs/s | {rate:,.0f} |")
    print(f"| µs CPU per doc (whole process) | {statistics.median(cpus) * 1e6:.3f} |")
    print(f"| against the go-elasticsearch BulkIndexer's 1.23M docs/s on 8 vCPUs (154k per core) | {rate / 153_750:.1f}× per core |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=int, default=6)
    p.add_argument("--part", choices=["wrk", "rally", "bulk-indexer", "all"], default="all")
    p.add_argument("--runner", default=None)
    p.add_argument("--hyper", action="store_true",
                   help="also hyper's client connection API (benches/hyper-conn-client) in the wrk part")
    args = p.parse_args()
    # From the environment, not the command line.
    args.esrally = os.environ.get("ESRALLY") or shutil.which("esrally") or "esrally"
    if args.runner is None:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=REPO, check=True)
        args.runner = os.path.join(REPO, "target", "release", "runner")
    if args.hyper:
        crate = os.path.join(REPO, "benches", "hyper-conn-client")
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=crate, check=True)
        args.hyper = os.path.join(crate, "target", "release", "hyper-conn-client")
    if os.cpu_count() < 2:
        sys.exit("needs two cores: the stub on one, the client on the other")
    work = tempfile.mkdtemp(prefix="side-by-side-")
    port = free_port()
    prepare(work, port)
    nginx = subprocess.Popen(["taskset", "-c", "1", "nginx", "-c", f"{work}/nginx.conf", "-p", work],
                             stderr=subprocess.DEVNULL)
    try:
        wait_for(port)
        if args.part in ("wrk", "all"):
            wrk_part(args, work, port)
        if args.part in ("rally", "all"):
            esrally_part(args, work, port)
        if args.part in ("bulk-indexer", "all"):
            bulk_indexer_part(args, work)
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
