#!/usr/bin/env python3
"""Writes this example's corpus and queries: Gaussian clusters in 16 dimensions, seeded, so
the files are the same on every machine. `python3 generate.py [DOCS] [QUERIES]`."""
import json
import random
import sys

docs = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
queries = int(sys.argv[2]) if len(sys.argv) > 2 else 200
dims, clusters = 16, 20
rng = random.Random(42)
centres = [[rng.gauss(0, 1) for _ in range(dims)] for _ in range(clusters)]


def point():
    c = rng.choice(centres)
    return [round(x + rng.gauss(0, 0.35), 5) for x in c]


with open("vectors.json", "w") as f:
    for i in range(docs):
        # Action lines give each document its id, which a ground-truth file names.
        f.write(json.dumps({"index": {"_id": str(i)}}) + "\n")
        f.write(json.dumps({"v": point(), "tag": "even" if i % 2 == 0 else "odd"}) + "\n")
with open("queries.json", "w") as f:
    for _ in range(queries):
        f.write(json.dumps(point()) + "\n")
