#!/usr/bin/env python3
"""runner's embedded engine beside hnswlib and faiss-cpu on the same vectors and parameters:
index build docs/s, search QPS at recall 0.90, 0.95 and 0.99, and peak RSS.

    python3 -m venv /tmp/vb && /tmp/vb/bin/pip install numpy hnswlib faiss-cpu scikit-learn
    /tmp/vb/bin/python benches/vectors.py [--sizes digits,200000] [--out DIR]

Datasets: scikit-learn's digits (1,797 x 64; the last 200 rows are the queries) and
Gaussian clusters (N x 128, 1,000 queries drawn the same way), l2 distance, k = 10. The true
neighbours are exact (numpy). Every engine builds an HNSW graph with M = 16 and
ef_construction = 100 on 2 threads, then answers the queries one at a time on one thread at
ef = num_candidates in EFS; recall@10 is measured the same way for all (runner measures it on
every answer itself, against the same ground-truth file). runner's graph is built per
segment; the index is force-merged to one segment first, so all three search one graph.
runner's QPS is a whole search request (query parsing, the graph, fetching the ids) through
its embedded backend with one client; the libraries' are bare calls from Python.
"""
import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

M, EF_CONSTRUCTION, K = 16, 100, 10
EFS = [10, 16, 24, 32, 48, 64, 96, 128, 256]
TARGETS = [0.90, 0.95, 0.99]
ROOT = pathlib.Path(__file__).resolve().parent.parent
RUNNER = ROOT / "target" / "release" / "runner"


def dataset(name):
    if name == "digits":
        from sklearn.datasets import load_digits

        x = load_digits().data.astype(np.float32)
        # Pixels are integers 0-16, so distances tie often; a tie at the k-th place makes any
        # id-based recall depend on each engine's tie order. A seeded jitter far below one
        # pixel level breaks the ties; every engine sees the same vectors.
        x += np.random.default_rng(7).uniform(-0.01, 0.01, x.shape).astype(np.float32)
        return "digits (1,797 x 64, jittered)", x[:-200], x[-200:]
    n = int(name)
    rng = np.random.default_rng(42)
    centres = rng.normal(0, 1, (100, 128)).astype(np.float32)
    pick = rng.integers(0, 100, n + 1000)
    points = centres[pick] + rng.normal(0, 0.3, (n + 1000, 128)).astype(np.float32)
    return f"gaussian clusters ({n:,} x 128)", points[:n], points[n:]


def truth(base, queries):
    out = np.empty((len(queries), K), dtype=np.int64)
    norms = (base * base).sum(1)
    for i in range(0, len(queries), 100):
        q = queries[i : i + 100]
        d = norms[None, :] - 2 * q @ base.T
        out[i : i + 100] = np.argsort(d, axis=1)[:, :K]
    return out


def recall(found, true):
    return float(np.mean([len(set(f[:K]) & set(t)) / K for f, t in zip(found, true)]))


def child_rss_mb():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def run_library(lib, base_file, query_file, truth_file):
    """In a child process, so that its peak RSS is its own."""
    code = f"""
import json, resource, time, numpy as np
base, queries, true = np.load({str(base_file)!r}), np.load({str(query_file)!r}), np.load({str(truth_file)!r})
K, EFS = {K}, {EFS}
if {lib!r} == "hnswlib":
    import hnswlib
    index = hnswlib.Index(space="l2", dim=base.shape[1])
    t = time.perf_counter()
    index.init_index(max_elements=len(base), M={M}, ef_construction={EF_CONSTRUCTION}, random_seed=1)
    index.set_num_threads(2)
    index.add_items(base, np.arange(len(base)))
    build = time.perf_counter() - t
    index.set_num_threads(1)
    def search(ef):
        index.set_ef(ef)
        out = []
        t = time.perf_counter()
        for q in queries:
            out.append(index.knn_query(q, k=K)[0][0])
        return time.perf_counter() - t, out
else:
    import faiss
    faiss.omp_set_num_threads(2)
    index = faiss.IndexHNSWFlat(base.shape[1], {M})
    index.hnsw.efConstruction = {EF_CONSTRUCTION}
    t = time.perf_counter()
    index.add(base)
    build = time.perf_counter() - t
    faiss.omp_set_num_threads(1)
    def search(ef):
        index.hnsw.efSearch = ef
        out = []
        t = time.perf_counter()
        for q in queries:
            out.append(index.search(q[None, :], K)[1][0])
        return time.perf_counter() - t, out
points = []
for ef in EFS:
    search(ef)
    secs, found = search(ef)
    r = float(np.mean([len(set(f) & set(t)) / K for f, t in zip(found, true)]))
    points.append({{"ef": ef, "qps": len(queries) / secs, "recall": r}})
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"build_docs_per_s": len(base) / build, "build_s": build, "points": points, "rss_mb": rss}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


TRACK = """name: vector-bench
corpora:
  - name: v
    target-index: v
    documents: [{{source-file: docs.json, document-count: {n}, includes-action-and-meta-data: true}}]
indices:
  - name: v
    body:
      settings: {{number_of_shards: 1}}
      mappings:
        properties:
          v: {{type: dense_vector, dims: {dims}, similarity: l2_norm, index_options: {{type: hnsw, m: {m}, ef_construction: {efc}}}}}
operations:
  - {{name: delete, type: delete-index}}
  - {{name: create, type: create-index}}
  - {{name: index, type: bulk, params: {{bulk-size: 1000}}}}
  - {{name: refresh, type: refresh}}
  - {{name: merge, type: force-merge, params: {{max-num-segments: 1}}}}
  - name: knn
    type: vector-search
    params: {{field: v, queries: queries.json, k: {k}, ground-truth: truth.json}}
challenges:
  - name: default
    default: true
    schedule:
      - operation: delete
      - operation: create
      - operation: index
      - operation: refresh
      - operation: merge
      - operation: refresh
      - {{operation: knn, clients: 1, warmup: {q}, iterations: {q}, params: {{num-candidates: {efs}}}}}
"""


def run_runner(base, queries, true, work):
    d = pathlib.Path(work)
    with open(d / "docs.json", "w") as f:
        for i, v in enumerate(base):
            f.write('{"index":{"_id":"%d"}}\n' % i)
            f.write(json.dumps({"v": [round(float(x), 6) for x in v]}) + "\n")
    with open(d / "queries.json", "w") as f:
        for q in queries:
            f.write(json.dumps([round(float(x), 6) for x in q]) + "\n")
    with open(d / "truth.json", "w") as f:
        for t in true:
            f.write(json.dumps([str(int(i)) for i in t]) + "\n")
    (d / "track.yaml").write_text(
        TRACK.format(n=len(base), dims=base.shape[1], m=M, efc=EF_CONSTRUCTION, k=K, q=len(queries), efs=EFS)
    )
    home = d / "home"
    env = dict(os.environ, RUNNER_HOME=str(home))
    before = child_rss_mb()
    subprocess.run([str(RUNNER), "race", "--track-path", str(d), "--quiet"], env=env, check=True, stdout=subprocess.DEVNULL)
    rss = max(child_rss_mb(), before)
    race_dir = next((home / "races").iterdir())
    race = json.loads((race_dir / "race.json").read_text())
    by = {}
    for t in race["tasks"]:
        by.setdefault(t["task"], []).append(t)
    build = sum(tr["wall_seconds"] for name in ("index", "refresh", "merge") for t in by[name] for tr in t["trials"])
    points = []
    for t in by["knn"]:
        tr = t["trials"][0]
        points.append({"ef": t["sweep"]["num-candidates"], "qps": tr["throughput"], "recall": tr["recall"]["mean"]})
    return {"build_docs_per_s": len(base) / build, "build_s": build, "points": points, "rss_mb": rss}


def qps_at(points, target):
    ok = [p["qps"] for p in points if p["recall"] >= target]
    return max(ok) if ok else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="digits,200000")
    args = ap.parse_args()
    for name in args.sizes.split(","):
        label, base, queries = dataset(name)
        true = truth(base, queries)
        with tempfile.TemporaryDirectory() as work:
            files = [pathlib.Path(work) / f for f in ("base.npy", "queries.npy", "truth.npy")]
            for f, a in zip(files, (base, queries, true)):
                np.save(f, a)
            results = {lib: run_library(lib, *files) for lib in ("hnswlib", "faiss")}
            results["runner"] = run_runner(base, queries, true, work)
        print(f"\n### {label}, {len(queries)} queries, k = {K}, M = {M}, ef_construction = {EF_CONSTRUCTION}\n")
        print("| engine | build docs/s | build s | QPS @ recall 0.90 | @ 0.95 | @ 0.99 | peak RSS MB |")
        print("|---|--:|--:|--:|--:|--:|--:|")
        for lib, r in results.items():
            cells = [f"{qps_at(r['points'], t):,.0f}" if qps_at(r["points"], t) else "not reached" for t in TARGETS]
            print(f"| {lib} | {r['build_docs_per_s']:,.0f} | {r['build_s']:.1f} | {' | '.join(cells)} | {r['rss_mb']:,.0f} |")
        print("\nrecall / QPS by ef (num_candidates):\n")
        print("| ef | " + " | ".join(f"{lib} recall | {lib} QPS" for lib in results) + " |")
        print("|--:|" + "--:|--:|" * len(results))
        for i, ef in enumerate(EFS):
            cells = []
            for r in results.values():
                p = r["points"][i]
                cells += [f"{p['recall']:.3f}", f"{p['qps']:,.0f}"]
            print(f"| {ef} | " + " | ".join(cells) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
