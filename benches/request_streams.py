#!/usr/bin/env python3
"""runner's requests against esrally's, track by track: each races a track in test mode against
its own `runner serve --record`, which writes every request whole (method, path, query, body).
The two streams are then compared run by run (a run: consecutive requests of one method, path
and query, what one task sends), by method, path with index names, query parameters, request
count, and each body's structure (keys and value types), its values too where the track fixes
them (any body but a bulk's documents).

esrally 2.13 races Rally tracks (`--pipeline=benchmark-only --test-mode --offline`), and
OpenSearch Benchmark 2.4 the OSB workloads (`run` with the same flags, each workload copied
beside its repository's common_operations); runner races the same directory with the same
corpora (generated from the track's mappings by the shared tools/make_corpus.py, placed where
esrally and OSB keep corpora; runner finds them there).
Requests neither driver makes for a task (esrally's version check and telemetry, runner's
cluster check and _nodes/stats around trials) are left out on both sides, by path.

    RALLY_PEER=/tmp/venvs/esrally/bin/esrally OSB_PEER=/tmp/venvs/osb/bin/opensearch-benchmark \
        python3 benches/request_streams.py [--shared ../shared/rally-tracks] \
        [--only geonames,nested] [--family elastic|opensearch] [--python PY] [--json FILE]

The peers' paths come from the environment (RALLY_PEER, OSB_PEER), not the command line:
esrally counts any Python whose command line names esrally as a race running, this script's
own too. Never run it while another esrally runs on the machine (CI's tests included). Without
OSB_PEER the OSB workloads are left out.
"""
import argparse, bz2, difflib, gzip, json, os, re, shutil, signal, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_side_by_side import free_port, wait_for  # noqa: E402
from rally_tracks import tracks, python_with_jinja2, challenges, beside_common_operations, make_corpus  # noqa: E402

# Requests that are no task's: each driver's own look at the cluster (runner's check before the
# race and _nodes/stats around each trial; esrally's version check and telemetry), by method,
# path and query. A track's own node-stats or index-stats task asks other paths or queries.
NOT_A_TASK = {
    # runner's
    ("GET", "/", ()),
    ("HEAD", "/", ()),
    ("GET", "/_cluster/health", ()),
    ("GET", "/_nodes/stats/process,jvm,indices", ()),
    # esrally's: its wait for the cluster, and its always-on telemetry before and after the race
    ("GET", "/_cluster/health", (("wait_for_nodes", ">=1"),)),
    ("GET", "/_nodes/_all", ()),
    ("GET", "/_nodes/stats/jvm", ()),
    ("GET", "/_nodes/stats/ingest", ()),
    ("GET", "/_stats/_all", (("level", "shards"),)),
    ("POST", "/.ml-anomalies-*/_search", ()),
    ("GET", "/_cluster/state/master_node", ()),
}

# Differences known and why: (what the comparison says, a path fragment) -> the reason. Each is
# named in the table; none is counted as equal.
KNOWN = [
    ("drawn values differ", "",
     "the track's param source draws these values at random, unseeded: no two races share them, esrally's own neither"),
]


def serve(bin_, home, record):
    port = free_port()
    p = subprocess.Popen([bin_, "serve", "--port", str(port), "--results-dir", home, "--record", record],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port)
    return p, port


def place_corpora(py, shared, track_dir, rally_home):
    """The generator's corpora, where esrally and OSB keep them: `.rally/benchmarks/data/<corpus>/`
    and `.benchmark/benchmarks/data/<corpus>/`."""
    made = os.path.join(rally_home, "generated")
    out = make_corpus(py, shared, track_dir, made, os.path.join(rally_home, "render-home"))
    try:
        files = json.loads(out)
    except json.JSONDecodeError:
        return out or "the generator failed"
    for f in files:
        for conf in (".rally", ".benchmark"):
            to = os.path.join(rally_home, conf, "benchmarks", "data", f.get("corpus") or "corpus")
            os.makedirs(to, exist_ok=True)
            shutil.copy(os.path.join(made, f["file"]), os.path.join(to, f["file"]))
        # OSB in offline mode downloads a file's line-offset table unless one is there, newer
        # than the file: the file as OSB decompresses it, and its (empty: under 50,000 lines)
        # table after it.
        osb = os.path.join(rally_home, ".benchmark", "benchmarks", "data", f.get("corpus") or "corpus")
        plain = os.path.join(osb, re.sub(r"\.(bz2|gz)$", "", f["file"]))
        if plain != os.path.join(osb, f["file"]):
            opener = bz2.open if f["file"].endswith(".bz2") else gzip.open
            with opener(os.path.join(osb, f["file"]), "rb") as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst)
        open(plain + ".offset", "w").close()
    return ""


def kill_group_of(home):
    """esrally's actor processes outlive it: every process whose HOME is `home`."""
    wanted = f"HOME={home}".encode()
    for _ in range(40):
        pids = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if wanted in f.read().split(b"\0"):
                        pids.append(int(pid))
            except OSError:
                pass
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.25)


def race_runner(bin_, track_dir, challenge, port, home, rally_home, python, timeout):
    args = [bin_, "race", "--track-path", track_dir, "--test-mode", "--on-unsupported", "skip", "--quiet",
            "--offline", "--target-hosts", f"127.0.0.1:{port}", "--results-dir", home, "--report-format", "json"]
    if challenge:
        args += ["--challenge", challenge]
    if python:
        args += ["--python", python]
    env = dict(os.environ, RALLY_HOME=rally_home)
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", []
    skipped, failed = [], []
    try:
        race = json.loads(out.stdout)["race"]
        skipped = [d for d in race.get("deviations", []) if "skipped" in d]
        for t in race["tasks"]:
            for tr in t["trials"]:
                why = tr.get("failure") or next(iter((tr.get("error_messages") or {}).values()), None)
                if why:
                    failed.append(f"{t['task']}: {why}")
                    break
    except (json.JSONDecodeError, KeyError, TypeError):
        pass
    if out.returncode == 0:
        return 0, skipped
    why = failed[0] if failed else (out.stderr.strip().splitlines() or [""])[-1]
    return f"{out.returncode}: {why[:200]}", skipped


def wait_for_no_esrally(limit=60):
    """esrally (and OSB) refuse to start beside another, and count a killed one until it is
    reaped."""
    end = time.time() + limit
    while time.time() < end:
        busy = False
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/comm") as f:
                    busy = busy or f.read().strip().startswith(("esrally", "opensearch-ben"))
            except OSError:
                pass
        if not busy:
            return
        time.sleep(0.5)


def race_esrally(esrally, track_dir, challenge, port, rally_home, timeout, osb=False):
    """esrally races a Rally track, or (osb) OpenSearch Benchmark an OSB workload."""
    wait_for_no_esrally()
    run, path, pick = ("run", "--workload-path", "--test-procedure") if osb else ("race", "--track-path", "--challenge")
    args = [esrally, run, f"{path}={track_dir}", "--pipeline=benchmark-only", "--test-mode",
            "--offline", "--on-error=continue", f"--target-hosts=127.0.0.1:{port}"]
    if challenge:
        args.append(f"{pick}={challenge}")
    env = dict(os.environ, HOME=rally_home)
    env.pop("RALLY_HOME", None)
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env, start_new_session=True)
        code = out.returncode
        tail = (out.stdout + out.stderr).strip().splitlines()
    except subprocess.TimeoutExpired:
        code, tail = "timeout", []
    kill_group_of(rally_home)
    if code == 0:
        return 0
    # esrally's own words: the last error its log holds, else its console's.
    log = os.path.join(rally_home, ".benchmark", "logs", "benchmark.log") if osb else \
        os.path.join(rally_home, ".rally", "logs", "rally.log")
    lines = open(log, errors="replace").read().splitlines() if os.path.exists(log) else []
    if os.environ.get("REQUEST_STREAMS_DEBUG"):
        print("\n".join(lines[-40:]), file=sys.stderr)
    # Its traceback's last line says why (the ERROR line above it only that the race failed).
    at = max((i for i, l in enumerate(lines) if " ERROR " in l), default=None)
    if at is not None:
        block = [l for l in lines[at + 1:at + 60] if l.strip() and not l.startswith(" ")]
        why = (block[-1] if block else lines[at])
    else:
        why = next((l for l in reversed(tail) if "rror" in l), tail[-1] if tail else "")
    return f"{code}: {why.strip()[-240:]}"


def load(record):
    out = []
    if not os.path.exists(record):
        return out
    with open(record) as f:
        for line in f:
            r = json.loads(line)
            if signature(r) in NOT_A_TASK:
                continue
            # esrally's telemetry asks each node's OS (`/_nodes/<name>/os`).
            if r["method"] == "GET" and re.fullmatch(r"/_nodes/[^/]+/os", r["path"]):
                continue
            # esrally's telemetry reads node stats once before the first task writes anything.
            if not out and signature(r) == ("GET", "/_nodes/stats/_all", ()):
                continue
            # OSB's telemetry: each index's shard stats and its document count, after the race.
            query = dict(tuple(p) for p in r["query"])
            if r["method"] == "GET" and re.fullmatch(r"/[^/_][^/]*/_stats/_all", r["path"]) \
                    and query == {"level": "shards"}:
                continue
            if r["method"] == "GET" and r["path"].startswith("/_cat/indices/") \
                    and query == {"format": "json", "h": "index,docs.count"}:
                continue
            out.append(r)
    # OSB's telemetry reads node stats again after the last task.
    while out and signature(out[-1]) == ("GET", "/_nodes/stats/_all", ()):
        out.pop()
    return out


def signature(r):
    return (r["method"], r["path"], tuple(sorted(tuple(p) for p in r["query"])))


def shape(v):
    """Keys and value types, recursively; a list by the shapes of its items (each once)."""
    if isinstance(v, dict):
        return {k: shape(x) for k, x in sorted(v.items())}
    if isinstance(v, list):
        seen = []
        for x in v:
            s = shape(x)
            if s not in seen:
                seen.append(s)
        return ["list", seen]
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return type(v).__name__


def runs(records):
    """Consecutive requests of one signature, with their bodies."""
    out = []
    for r in records:
        sig = signature(r)
        if out and out[-1][0] == sig:
            out[-1][1].append(r)
        else:
            out.append((sig, [r]))
    return out


def bulk_parts(run):
    """A bulk run's action lines (their shapes and index names), its documents' shapes, and how
    many documents it sent; its documents' values are the corpus's."""
    actions, docs, count = set(), set(), 0
    for r in run[1]:
        body = r["body"] if isinstance(r["body"], list) else []
        for action, doc in zip(body[0::2], body[1::2]):
            verb = next(iter(action), "") if isinstance(action, dict) else ""
            meta = action.get(verb) if isinstance(action, dict) else None
            index = meta.get("_index") if isinstance(meta, dict) else None
            actions.add(json.dumps([verb, sorted(meta) if isinstance(meta, dict) else None, index]))
            docs.add(json.dumps(shape(doc), sort_keys=True))
            count += 1
    return actions, docs, count


def leaves(v, path=""):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, f"{path}/{k}")
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from leaves(x, f"{path}/{i}")
    else:
        yield path, v


def few_leaves_differ(a, b):
    """Bodies alike but for at most 1% of their leaf values: values a track draws at random
    (geonames' terms lists end with a random number), which no two races share."""
    for x, y in zip(a[1], b[1]):
        la, lb = dict(leaves(x["body"])), dict(leaves(y["body"]))
        if la.keys() != lb.keys():
            return False
        differ = sum(1 for k in la if la[k] != lb[k])
        if differ > max(1, len(la) // 100):
            return False
    return True


def values_of(run):
    return sorted({json.dumps(r["body"], sort_keys=True) for r in run[1]})


def compare_run(a, b, drawn=False):
    """'same', or how runner's run `a` differs from esrally's `b` (same signature). `drawn`:
    the values of this run differ between two runs of runner itself (the track draws them at
    random, unseeded), so only their structure is the track's to fix."""
    sig = a[0]
    ra, rb = a[1], b[1]
    bulk = sig[1].endswith("/_bulk")
    if bulk:
        (aa, da, na), (ab, db, nb) = bulk_parts(a), bulk_parts(b)
        if aa != ab:
            return "bulk action lines differ"
        if da != db:
            return "bulk documents' structure differs"
        if na != nb:
            return f"{na} documents, esrally {nb}"
    else:
        sa = [json.dumps(shape(r["body"]), sort_keys=True) for r in ra]
        sb = [json.dumps(shape(r["body"]), sort_keys=True) for r in rb]
        if sorted(set(sa)) != sorted(set(sb)):
            return "body structure differs"
        if not drawn and values_of(a) != values_of(b):
            if len(ra) == len(rb) and few_leaves_differ(a, b):
                return "drawn values differ"
            return "body values differ"
    if len(ra) != len(rb):
        return f"{len(ra)} requests, esrally {len(rb)}"
    return "same"


def drawn_runs(ours, again):
    """The runs (by position) whose bodies differ between two races of runner: values the
    track draws at random on every run."""
    a, b = runs(ours), runs(again)
    if [r[0] for r in a] != [r[0] for r in b]:
        return set()
    return {i for i, (x, y) in enumerate(zip(a, b)) if values_of(x) != values_of(y)}


def compare(ours, theirs, drawn=frozenset(), drawn_theirs=frozenset()):
    """Aligned runs: (what, runner's run or None, esrally's run or None). `drawn`, and
    `drawn_theirs`: the positions of runner's and esrally's runs whose values differ between
    two races of the same driver."""
    a, b = runs(ours), runs(theirs)
    sm = difflib.SequenceMatcher(a=[r[0] for r in a], b=[r[0] for r in b], autojunk=False)
    rows = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            for k, (x, y) in enumerate(zip(a[i1:i2], b[j1:j2])):
                rows.append((compare_run(x, y, i1 + k in drawn or j1 + k in drawn_theirs), x, y))
        else:
            for x in a[i1:i2]:
                rows.append(("runner only", x, None))
            for y in b[j1:j2]:
                rows.append(("esrally only", None, y))
    return rows


def describe(sig):
    method, path, query = sig
    q = "&".join(f"{k}={v}" for k, v in query)
    return f"{method} {path}" + (f"?{q}" if q else "")


def difference(what, x, y):
    described = describe((x or y)[0])
    why = next((r for w, frag, r in KNOWN if w in what and frag in described), "")
    return f"{what}: {described}" + (f" ({why})" if why else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "rally-tracks"))
    ap.add_argument("--only", default="")
    ap.add_argument("--others", type=int, default=0, help="challenges besides the default")
    ap.add_argument("--python", default="", help="the Python that runs a track.py for runner")
    ap.add_argument("--bin", default="")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--json", default="")
    ap.add_argument("--keep", default="", help="keep the recorded streams in this folder")
    ap.add_argument("--family", default="", help="elastic or opensearch only")
    a = ap.parse_args()
    peers = {"elastic": os.environ.get("RALLY_PEER"), "opensearch": os.environ.get("OSB_PEER")}
    if not any(peers.values()):
        sys.exit("set RALLY_PEER to esrally 2.13's executable (a venv's bin/esrally), "
                 "OSB_PEER to OpenSearch Benchmark 2.4's, or both")
    bin_ = a.bin or os.path.join(ROOT, "target", "release", "runner")
    if not a.bin:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    py = python_with_jinja2()
    only = set(x for x in a.only.split(",") if x)
    work = tempfile.mkdtemp(prefix="request-streams-")
    table, totals = [], {"runs": 0, "same": 0}
    for family, name, d in tracks(a.shared, only):
        esrally, osb = peers[family], family == "opensearch"
        if not esrally or (a.family and a.family != family):
            continue
        rally_home = os.path.join(work, f"{family}-{name.replace('/', '-')}")
        os.makedirs(rally_home, exist_ok=True)
        if osb:
            d = beside_common_operations(d, os.path.join(rally_home, "workloads"))
        problem = place_corpora(py, a.shared, d, rally_home)
        names, render_problem = challenges(d, os.path.join(rally_home, "render"), a.others)
        if names is None:
            table.append({"track": f"{family}/{name}", "peer": "osb" if osb else "esrally", "challenge": "-", "error": render_problem[0]})
            continue
        for challenge, _ in names:
            tag = f"{family}-{name.replace('/', '-')}-{challenge or 'default'}"
            rec_ours, rec_theirs = (os.path.join(work, f"{tag}.{who}.jsonl") for who in ("runner", "esrally"))
            rec_again = os.path.join(work, f"{tag}.runner-again.jsonl")
            # runner twice: what differs between its own two races, the track draws at random.
            for n, rec in enumerate((rec_ours, rec_again)):
                s1, p1 = serve(bin_, os.path.join(work, f"{tag}-s1-{n}"), rec)
                try:
                    result = race_runner(bin_, d, challenge, p1, os.path.join(work, f"{tag}-home-{n}"),
                                         rally_home, a.python, a.timeout)
                finally:
                    s1.kill(); s1.wait()
                if n == 0:
                    ours, skipped = result
            s2, p2 = serve(bin_, os.path.join(work, tag + "-s2"), rec_theirs)
            try:
                theirs = race_esrally(esrally, d, challenge, p2, rally_home, a.timeout, osb)
            finally:
                s2.kill(); s2.wait()
            ours_stream, theirs_stream = load(rec_ours), load(rec_theirs)
            drawn = drawn_runs(ours_stream, load(rec_again))
            rows = compare(ours_stream, theirs_stream, drawn)
            if any(r[0] == "body values differ" for r in rows) and theirs == 0:
                # Values runner draws the same each time (its workers seed what a track leaves
                # unseeded) may still be random in Rally: esrally again tells.
                rec_theirs_again = os.path.join(work, f"{tag}.esrally-again.jsonl")
                s3, p3 = serve(bin_, os.path.join(work, tag + "-s3"), rec_theirs_again)
                try:
                    race_esrally(esrally, d, challenge, p3, rally_home, a.timeout, osb)
                finally:
                    s3.kill(); s3.wait()
                rows = compare(ours_stream, theirs_stream, drawn,
                               drawn_runs(theirs_stream, load(rec_theirs_again)))
            same = sum(1 for r in rows if r[0] == "same")
            totals["runs"] += len(rows)
            totals["same"] += same
            table.append({"track": f"{family}/{name}", "peer": "osb" if osb else "esrally", "challenge": challenge or "(default)", "runner": ours,
                          "esrally": theirs, "corpus": problem, "skipped": skipped, "runs": len(rows), "same": same,
                          "differences": [difference(what, x, y) for what, x, y in rows if what != "same"]
                          + [f"runner skipped: {k[:160]}" for k in skipped]})
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
                for f in (rec_ours, rec_theirs):
                    shutil.copy(f, a.keep)
    print("| track | challenge | runner exit | peer exit | runs equal / runs | differences |")
    print("|---|---|---|---|--:|---|")
    for r in table:
        if "error" in r:
            print(f"| {r['track']} | - | render: {r['error'][:80]} | | | |")
            continue
        diffs = "; ".join(r["differences"][:6]) + (f"; and {len(r['differences']) - 6} more" if len(r["differences"]) > 6 else "")
        print(f"| {r['track']} | {r['challenge']} | {r['runner']} | {r['peer']} {r['esrally']} | {r['same']} / {r['runs']} | {diffs.replace('|', '/')} |")
    if totals["runs"]:
        print(f"\nruns equal: {totals['same']} of {totals['runs']} ({100 * totals['same'] / totals['runs']:.0f}%)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(table, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
