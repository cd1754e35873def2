#!/usr/bin/env python3
"""One race split over N shards on this machine (#26): 2, 8, 32 and 64 runner processes
started with --shard i/N and a loopback rendezvous, each running its slice of one throttled
task at a fixed total target throughput (the driver alone: a 1 ms sleep per operation, so the
number measured is the load drivers' own schedule keeping), then five short tasks in a row to
time the rendezvous at each task boundary. Prints, per N: achieved over target for the long
task (the merged race's throughput, from the union of the shards' windows), the rendezvous's
arrival spread and start delay per boundary (median and max), the merged race's size on disk,
and the time `runner merge` takes to merge it again from the stored shards.

    python3 benches/shards.py [--shards 2,8,32,64] [--target 3200] [--seconds 10] [--rounds 1]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "runner")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_side_by_side import free_port  # noqa: E402

TRACK = """name: shards-sim
operations: [{{name: nap, type: sleep, params: {{duration: 1ms}}}}]
challenges:
  - name: c
    schedule:
      - {{name: steady, operation: nap, clients: {clients}, warmup: 2s, time-period: {seconds}s, target-throughput: {target}}}
      - {{name: b1, operation: nap, clients: {clients}, iterations: {short}}}
      - {{name: b2, operation: nap, clients: {clients}, iterations: {short}}}
      - {{name: b3, operation: nap, clients: {clients}, iterations: {short}}}
      - {{name: b4, operation: nap, clients: {clients}, iterations: {short}}}
      - {{name: b5, operation: nap, clients: {clients}, iterations: {short}}}
"""


def du(path):
    total = 0
    for d, _, files in os.walk(path):
        if os.path.basename(d).startswith("shard-") and d != path:
            continue
        for f in files:
            if os.path.dirname(os.path.join(d, f)) == path:
                total += os.path.getsize(os.path.join(d, f))
    return total


def one(n, target, seconds):
    home = tempfile.mkdtemp(prefix="shards-")
    clients = max(64, n)
    track = os.path.join(home, "track.yaml")
    with open(track, "w") as f:
        f.write(TRACK.format(clients=clients, seconds=seconds, target=target, short=clients * 5))
    port = free_port()
    env = dict(os.environ, RUNNER_HOME=home)
    procs = [
        subprocess.Popen(
            [BIN, "race", "--quiet", "--track-path", track, "--shard", f"{i}/{n}",
             "--coordinator", f"127.0.0.1:{port}", "--report-format", "json"],
            env=env, stdout=subprocess.PIPE if i == 0 else subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        for i in range(n)
    ]
    out, err = procs[0].communicate()
    for p in procs[1:]:
        p.wait()
    if procs[0].returncode != 0:
        sys.exit(f"shard 0 of {n} failed: {err.decode()}")
    race = json.loads(out)["race"]
    steady = next(t for t in race["tasks"] if t["task"] == "steady")["trials"][0]
    barriers = race["shards"]["barriers"]
    boundaries = [b for b in barriers if not b["what"].startswith("steady")]
    rid = race["race_id"]
    rdir = os.path.join(home, "races", rid)
    size = du(rdir)
    t0 = time.perf_counter()
    subprocess.run([BIN, "merge", rid, "--report-format", "json"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    merge_s = time.perf_counter() - t0
    return {
        "n": n,
        "ratio": steady["throughput"] / target,
        "spread_med": statistics.median(b["arrival_spread_ms"] for b in boundaries),
        "spread_max": max(b["arrival_spread_ms"] for b in boundaries),
        "start_med": statistics.median(b["start_after_ms"] for b in boundaries),
        "start_max": max(b["start_after_ms"] for b in boundaries),
        "slack_min": min(b["min_slack_ms"] for b in barriers),
        "size": size,
        "merge_s": merge_s,
        "latency_p99": steady["latency_ms"].get("p99"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", default="2,8,32,64")
    ap.add_argument("--target", type=float, default=3200)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    rows = {}
    for _ in range(a.rounds):
        for n in [int(x) for x in a.shards.split(",")]:
            rows.setdefault(n, []).append(one(n, a.target, a.seconds))
    print(f"one task at {a.target:g} ops/s in total ({a.seconds} s measured), then 5 short tasks; "
          f"medians over {a.rounds} round(s)\n")
    print("| shards | achieved / target | latency p99 ms | arrival spread ms (median, max) "
          "| start after last arrival ms (median, max) | least notice of a start ms "
          "| merged race KB | runner merge s |")
    print("|--:|--:|--:|--:|--:|--:|--:|--:|")
    med = lambda rs, k: statistics.median(r[k] for r in rs)
    for n, rs in rows.items():
        print(f"| {n} | {med(rs, 'ratio'):.4f} | {med(rs, 'latency_p99'):.3f} "
              f"| {med(rs, 'spread_med'):.1f}, {med(rs, 'spread_max'):.1f} "
              f"| {med(rs, 'start_med'):.1f}, {med(rs, 'start_max'):.1f} "
              f"| {min(r['slack_min'] for r in rs):.1f} "
              f"| {med(rs, 'size') / 1024:.0f} | {med(rs, 'merge_s'):.3f} |")


if __name__ == "__main__":
    main()
