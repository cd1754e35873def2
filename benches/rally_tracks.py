#!/usr/bin/env python3
"""The real Rally tracks and OSB workloads in ../shared/rally-tracks, raced as a new user would:
corpora generated from each track's mappings (its tools/make_corpus.py), then the default
challenge and up to two others, each in --test-mode with --on-unsupported skip, on the embedded
engine and through `runner serve` (the elasticsearch backend). Prints one row per track ×
challenge × backend: the exit code, the tasks that ran with no error, those skipped (each with
its reason, from the race's deviations), and those that failed (with their first error).
OSB workloads are raced from a copy beside the repository's common_operations folder (where it is
beside them), else beside benches/fixtures/osb-common-operations, a stand-in.

    python3 benches/rally_tracks.py [--shared ../shared/rally-tracks] [--others 2]
        [--only geonames,nested] [--timeout 300]
"""
import argparse, json, os, re, shutil, subprocess, sys, tempfile, time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "runner")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from http_side_by_side import free_port, wait_for  # noqa: E402


def python_with_jinja2():
    try:
        import jinja2  # noqa: F401
        return sys.executable
    except ImportError:
        venv = os.path.join(tempfile.gettempdir(), "rally-tracks-venv")
        py = os.path.join(venv, "bin", "python")
        if not os.path.exists(py):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
            subprocess.run([py, "-m", "pip", "install", "-q", "jinja2"], check=True)
        return py


def tracks(shared, only):
    for family in ("elastic", "opensearch"):
        base = os.path.join(shared, family)
        for name in sorted(os.listdir(base)):
            d = os.path.join(base, name)
            if only and name not in only:
                continue
            if os.path.exists(os.path.join(d, "track.json")) or os.path.exists(os.path.join(d, "workload.json")):
                yield family, name, d
            # elastic/logs and the like hold their tracks one level down.
            elif os.path.isdir(d):
                for sub in sorted(os.listdir(d)):
                    sd = os.path.join(d, sub)
                    if os.path.exists(os.path.join(sd, "track.json")):
                        yield family, f"{name}/{sub}", sd


def beside_common_operations(d, scratch):
    """A copy of OSB workload `d` at scratch/<name>, with scratch/common_operations: the
    workloads repository's own where it is beside the workload, else runner's stand-in."""
    common = os.path.join(scratch, "common_operations")
    if not os.path.exists(common):
        real = os.path.join(os.path.dirname(os.path.normpath(d)), "common_operations")
        source = real if os.path.isdir(real) else os.path.join(ROOT, "benches", "fixtures", "osb-common-operations")
        shutil.copytree(source, common)
    copy = os.path.join(scratch, os.path.basename(d))
    if not os.path.exists(copy):
        shutil.copytree(d, copy)
    # Workloads import their siblings (neural_search imports nyc_taxis): the others beside it.
    parent = os.path.dirname(os.path.normpath(d))
    for sibling in os.listdir(parent):
        there, here = os.path.join(parent, sibling), os.path.join(scratch, sibling)
        if os.path.isdir(there) and not os.path.exists(here):
            os.symlink(os.path.realpath(there), here)
    return copy


def make_corpus(py, shared, track_dir, data, home):
    """The shared generator's corpora for a track. Its own renderer is a simplified Jinja2 one;
    where it cannot render a track (github_archive, eventdata), it is given runner's render in a
    scratch copy of the track instead (the mappings it reads are files beside it). Returns the
    generator's list of the files it wrote (its JSON), or an error's last line."""
    tool = os.path.join(shared, "tools", "make_corpus.py")
    out = subprocess.run([py, tool, track_dir, data, "--docs", "1000"], capture_output=True, text=True, timeout=600)
    if out.returncode == 0:
        return out.stdout
    rendered = subprocess.run([BIN, "render-track", "--track-path", track_dir, "--results-dir", home],
                              capture_output=True, text=True, timeout=120)
    if rendered.returncode != 0:
        return (rendered.stderr.strip().splitlines() or ["render failed"])[-1]
    copy = os.path.join(home, "rendered", os.path.basename(track_dir))
    if not os.path.exists(copy):
        shutil.copytree(track_dir, copy)
    main = "workload.json" if os.path.exists(os.path.join(copy, "workload.json")) else "track.json"
    with open(os.path.join(copy, main), "w") as f:
        # Rendered already; the generator renders again, and must not touch mustache bodies.
        f.write("{% raw %}" + rendered.stdout + "{% endraw %}")
    out = subprocess.run([py, tool, copy, data, "--docs", "1000"], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        why = (out.stderr.strip().splitlines() or ['?'])[-1]
        print(f"no corpus for {track_dir}: {why}", file=sys.stderr)
        return why
    return out.stdout


def fit_generated_corpus(track_dir, data, home):
    """What the generator writes that a real corpus never holds, and Elasticsearch refuses:
    a value for a field an index-time `script` computes ("Cannot index data directly into a
    field with a [script] parameter"), removed; and vectors of any length for a `dot_product`
    dense_vector ("can only be used with unit-length vectors"), scaled to unit length."""
    import bz2, gzip, math
    out_dir = tempfile.mkdtemp(prefix="converted-", dir=home)
    shutil.rmtree(out_dir)
    # The track of ours it converts to holds each index body rendered, inline.
    # An empty results directory: the generated corpus files are smaller than the track says.
    subprocess.run([BIN, "convert-rally", "--on-unsupported", "skip", "--out", out_dir,
                    "--results-dir", out_dir + "-home", track_dir],
                   capture_output=True, text=True, timeout=120)
    try:
        import yaml
        with open(os.path.join(out_dir, "track.yaml")) as f:
            indices = (yaml.safe_load(f) or {}).get("indices", [])
    except (OSError, ImportError, ValueError):
        return
    scripted, unit = set(), set()

    def walk(props, prefix):
        for name, d in (props or {}).items():
            if not isinstance(d, dict):
                continue
            if "script" in d:
                scripted.add(prefix + name)
            if d.get("type") == "dense_vector" and d.get("similarity") == "dot_product" \
                    and d.get("element_type", "float") == "float":
                unit.add(prefix + name)
            walk(d.get("properties"), prefix + name + ".")
    for idx in indices:
        walk(((idx.get("body") or {}).get("mappings") or {}).get("properties"), "")
    if not (scripted or unit) or not os.path.isdir(data):
        return

    def parent_of(doc, field):
        *parents, leaf = field.split(".")
        at = doc
        for p in parents:
            at = at.get(p) if isinstance(at, dict) else None
        return at if isinstance(at, dict) else None, leaf
    opener = {".bz2": bz2.open, ".gz": gzip.open}
    for name in os.listdir(data):
        path = os.path.join(data, name)
        ext = os.path.splitext(name)[1]
        if ext not in opener and ext != ".json":
            continue  # a format this fit does not read (zstd, an offset table): left as made
        op = opener.get(ext, open)
        try:
            with op(path, "rt") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError, EOFError):
            continue
        kept = []
        for line in lines:
            try:
                doc = json.loads(line)
            except json.JSONDecodeError:
                kept.append(line)
                continue
            for field in scripted:
                at, leaf = parent_of(doc, field)
                if at is not None:
                    at.pop(leaf, None)
            for field in unit:
                at, leaf = parent_of(doc, field)
                v = at.get(leaf) if at is not None else None
                if isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v):
                    norm = math.sqrt(sum(x * x for x in v)) or 1.0
                    at[leaf] = [x / norm for x in v]
            kept.append(json.dumps(doc))
        with op(path, "wt") as f:
            f.write("\n".join(kept) + "\n")


def challenges(track_dir, home, others):
    out = subprocess.run([BIN, "render-track", "--track-path", track_dir, "--results-dir", home],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1:] or ["render failed"]
    try:
        t = json.loads(out.stdout)
    except json.JSONDecodeError as e:
        return None, [f"render is not JSON: {e}"]
    cs = t.get("challenges") or ([t["challenge"]] if "challenge" in t else [])
    if not cs:
        return [(None, None)], []
    default = next((c for c in cs if c.get("default")), cs[0])
    rest = [c for c in cs if c is not default][:others]
    # Each with its place in the track: the skip notes of a challenge's tasks start with it.
    return [(c.get("name"), cs.index(c)) for c in [default] + rest], []


# Why a task may be left out or fail, as the issue sorts them: it needs Python (a track.py), or
# an engine feature docs/rally.md lists as out of reach (its "Out of reach of the embedded engine",
# one pattern each here). Anything else is runner's to fix.
PYTHON = ("track.py", "param source", "custom runner", "runs no Python")
OUT_OF_REACH = [
    ("ES|QL", r"/_query\b|`esql|ES\|QL"),
    ("scripts", r"script"),
    ("percolator", r"percolat"),
    ("vector tiles", r'Mapbox vector tile|format "mvt\('),
    ("dense_vector and kNN", r"dense_vector|knn"),
    ("H3 cells", r"geohex \(H3\)|H3 cells are not"),
    ("nested aggregations", r"is a `nested`"),
    ("nested inner hits", r"`inner_hits`"),
    ("time_series aggregation", r"`time_series`"),
    ("ML aggregations", r"categorize_text|frequent_item_sets|`sampler`"),
    ("transforms", r"/_transform"),
    ("downsampling", r"_downsample"),
    ("remote clusters", r"remote|/_ccr/"),
    ("EQL", r"/_eql/"),
    ("SQL", r"/_sql\b"),
    ("PPL", r"/_plugins/_ppl"),
    ("search applications and query rules", r"_application/|query type `rule`|`retriever`"),
    ("snapshots", r"/_snapshot"),
    ("KQL", r"`kql`"),
    ("streaming ingestion", r"produce-stream-message"),
    ("a search of several indices", r"reaches \d+ indices|over several indices"),
]


def classify(note, notes_by_task):
    """out of reach: <what>, python, cascade, or runner (what runner should run). What a param
    source draws is checked as any operation: an engine limit it meets is out of reach."""
    # The lists of what the engine runs, which some notes end with, name no cause.
    note = re.sub(r"\((supported|it runs)[^)]*\)", "", note)
    for label, pattern in OUT_OF_REACH:
        if re.search(pattern, note):
            return f"out of reach: {label}"
    if any(p in note for p in PYTHON):
        return "python"
    m = re.search(r"from the skipped task `([^`]*)`", note)
    if m and m.group(1) in notes_by_task:
        return classify(notes_by_task[m.group(1)], {})
    if "no task that runs before it makes index" in note:
        return "cascade"
    return "runner"


def task_of(note):
    m = re.search(r"task `([^`]*)`", note)
    return m.group(1) if m else ""


def this_challenge(notes, place):
    """The skip notes of the raced challenge's tasks (notes of other challenges' tasks, which
    are left out of the race anyway, are not counted)."""
    out = []
    for n in notes:
        m = re.match(r"/challenges/(\d+)/", n)
        if m and place is not None and int(m.group(1)) != place:
            continue
        out.append(n)
    return out


PYTHON_BIN = ""


def race(track_dir, challenge, home, backend_args, timeout):
    args = [BIN, "race", "--track-path", track_dir, "--test-mode", "--on-unsupported", "skip",
            "--quiet", "--report-format", "json", "--results-dir", home] + backend_args
    if PYTHON_BIN:
        args += ["--python", PYTHON_BIN]
    if challenge:
        args += ["--challenge", challenge]
    t0 = time.time()
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"exit": "timeout", "secs": timeout, "ran": 0, "skipped": [], "failed": [], "error": f"over {timeout} s"}
    secs = time.time() - t0
    row = {"exit": out.returncode, "secs": secs, "ran": 0, "skipped": [], "failed": [], "error": ""}
    try:
        r = json.loads(out.stdout)["race"]
    except (json.JSONDecodeError, KeyError):
        row["error"] = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return row
    row["skipped"] = [d for d in r.get("deviations", []) if "skipped" in d]
    for t in r["tasks"]:
        trials = t["trials"]
        if not trials:
            continue
        errors = sum(tr["errors"] for tr in trials)
        failure = next((tr.get("failure") for tr in trials if tr.get("failure")), None)
        if errors or failure:
            first = failure or next(iter(next((tr["error_messages"] for tr in trials if tr.get("error_messages")), {}).values()), "")
            row["failed"].append(f"{t['task']}: {first}")
        else:
            row["ran"] += 1
    return row


def reason(text):
    """A skip or failure reason without the task's name, to count causes."""
    text = re.sub(r"^/challenges/\d+/schedule/\d+: ", "", text)
    text = re.sub(r"^operation `[^`]*` \([^)]*\) of task `[^`]*` cannot run on --backend \w+: ", "", text)
    text = re.sub(r"; it runs on --backend \w+(, --backend \w+)*", "", text)
    text = re.sub(r"; skipped \(--on-unsupported skip\)$", "", text)
    text = re.sub(r"^[\w-]+ \[-\] trial \d+/\d+: ", "", text)
    # The named thing stays (the query type, the aggregation, the operation type); the
    # names of tasks and indices go.
    text = re.sub(r"(task|index|aggregation|field|operation) `[^`]*`", r"\1 `…`", text)
    return text[:150]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "rally-tracks"))
    ap.add_argument("--others", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--bin", default="", help="a runner binary to use (default: build the release one)")
    ap.add_argument("--json", default="", help="also write the rows to this file, as JSON")
    ap.add_argument("--python", default="",
                    help="the Python that runs tracks' track.py (runner's --python; e.g. a venv with esrally and elasticsearch[async])")
    ap.add_argument("--render", action="store_true",
                    help="also compare each track's render with Rally's or OSB's (benches/render_vs_rally.py; venvs from PyPI)")
    a = ap.parse_args()
    global BIN, PYTHON_BIN
    PYTHON_BIN = a.python
    if a.bin:
        BIN = a.bin
    else:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    py = python_with_jinja2()
    home = tempfile.mkdtemp(prefix="rally-tracks-")
    serve = None
    only = set(x for x in a.only.split(",") if x)
    rows, causes = [], Counter()
    renderers = None
    try:
        for family, name, d in tracks(a.shared, only):
            if family == "opensearch":
                # The snapshot lacks OSB's common_operations, which workloads collect.
                d = beside_common_operations(d, home)
            data = os.path.join(home, "data", os.path.basename(d))
            os.makedirs(data, exist_ok=True)
            make_corpus(py, a.shared, d, data, home)
            fit_generated_corpus(d, data, home)
            render = ""
            if a.render:
                if renderers is None:
                    # Imported here: it imports this module's helpers in turn.
                    from render_vs_rally import Renderers
                    renderers = Renderers(os.path.join(home, "render"))
                render = renderers.compare(family, d, "", time.time())[2]
            names, problem = challenges(d, home, a.others)
            if names is None:
                rows.append((f"{family}/{name}", "-", "-", {"exit": "render", "secs": 0, "ran": 0, "skipped": [], "failed": [], "error": problem[0]}))
                causes[reason(problem[0])] += 1
                continue
            # A cluster of its own per track, as Rally's benchmarks assume: a search of every
            # index (`index: None`) meets this track's indices alone.
            if serve is not None:
                serve.kill()
                serve.wait()
            port = free_port()
            serve = subprocess.Popen([BIN, "serve", "--port", str(port), "--results-dir", os.path.join(home, "serve", name.replace("/", "-"))],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for(port)
            for c, place in names:
                skipped_here = {}
                for backend, extra in (("embedded", []), ("serve", ["--backend", "elasticsearch", "--target-hosts", f"http://127.0.0.1:{port}"])):
                    row = race(d, c, home, extra, a.timeout)
                    row["skipped"] = this_challenge(row["skipped"], place)
                    if backend == "embedded":
                        skipped_here = {task_of(n): n for n in row["skipped"]}
                    row["skip_classes"] = Counter(classify(n, skipped_here) for n in row["skipped"])
                    # A failure through serve is out of reach when the engine's own race left
                    # that task out for such a reason; otherwise it should not have failed.
                    row["fail_classes"] = Counter(
                        classify(skipped_here[t], skipped_here) if t in skipped_here else "runner"
                        for t in (f.split(": ", 1)[0] for f in row["failed"]))
                    row["render"] = render
                    rows.append((f"{family}/{name}", c or "(default)", backend, row))
                    # Kept as the run goes: a crash or a kill later loses no row.
                    print(f"{family}/{name} {c or '(default)'} {backend}: exit {row['exit']}, "
                          f"{row['ran']} clean, {len(row['skipped'])} skipped, {len(row['failed'])} failed",
                          file=sys.stderr, flush=True)
                    if a.json:
                        with open(a.json, "w") as f:
                            json.dump([{"track": t, "challenge": ch, "backend": b, **r} for t, ch, b, r in rows], f, indent=1)
                    for s in row["skipped"]:
                        causes["skipped: " + reason(s)] += 1
                    for f in row["failed"]:
                        causes["failed: " + reason(f.split(": ", 1)[-1])] += 1
                    if row["error"]:
                        causes["race error: " + reason(row["error"])] += 1
    finally:
        if serve is not None:
            serve.kill()
    render_col = "| render = Rally's/OSB's " if a.render else ""
    print(f"| track | challenge | backend {render_col}| exit | seconds | tasks run clean | skipped | failed | first problem |")
    print("|---|---|---|" + ("---|" if a.render else "") + "--:|--:|--:|--:|--:|---|")
    for track, c, backend, r in rows:
        first = r["error"] or (r["failed"][0] if r["failed"] else (r["skipped"][0] if r["skipped"] else ""))
        first = first.replace("|", "\\|")[:140]
        render = f"| {r.get('render', '')[:60]} " if a.render else ""
        print(f"| {track} | {c} | {backend} {render}| {r['exit']} | {r['secs']:.1f} | {r['ran']} | {len(r['skipped'])} | {len(r['failed'])} | {first} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump([{"track": t, "challenge": c, "backend": b, **r} for t, c, b, r in rows], f, indent=1)
    print("\n| why, by count | skipped on embedded | failed through serve |\n|---|--:|--:|")
    skip_total, fail_total = Counter(), Counter()
    for _, _, backend, r in rows:
        if backend == "embedded":
            skip_total.update(r.get("skip_classes", {}))
        else:
            fail_total.update(r.get("fail_classes", {}))
    for cls in sorted(set(skip_total) | set(fail_total), key=lambda k: (k == "runner", k)):
        print(f"| {cls.replace('|', '/')} | {skip_total[cls]} | {fail_total[cls]} |")
    print("\n| causes, by count | |\n|--:|---|")
    for cause, n in causes.most_common():
        print(f"| {n} | {cause.replace('|', '/')} |")


if __name__ == "__main__":
    main()
