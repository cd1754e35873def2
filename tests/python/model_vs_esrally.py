"""runner's stand-in track model (track_model.py) against esrally's own: the same rendered tracks
read by esrally's TrackSpecificationReader and by the stand-in, every attribute a track's
Python reads compared. Run with esrally's venv's Python (tests/e2e/python.rs); exits 1 naming
each difference."""

import sys

import track_model
from esrally.track import loader

SPECS = [
    {
        "indices": [{"name": "docs"}],
        "corpora": [{"name": "c", "documents": [
            {"source-file": "a.json.bz2", "document-count": 10},
            {"source-file": "b.json", "document-count": 4, "includes-action-and-meta-data": True},
            {"source-file": "c.json", "document-count": 2, "target-index": "other"}]}],
        "operations": [{"name": "q", "operation-type": "search", "param-source": "src", "size": 3}],
        "challenges": [
            {"name": "one", "default": True, "schedule": [
                {"operation": "q", "clients": 2, "target-throughput": "10 ops/s", "warmup-iterations": 3,
                 "iterations": 7},
                {"operation": "force-merge"},
                {"operation": {"operation-type": "refresh"}, "target-interval": 2},
                {"operation": {"operation-type": "my-own", "x": 1}, "time-period": 30, "warmup-time-period": 5},
                {"parallel": {"clients": 4, "completed-by": "q2", "tasks": [
                    {"name": "q2", "operation": "q"},
                    {"operation": {"name": "bulk", "operation-type": "bulk"}, "tags": ["ingest", "a"],
                     "meta": {"k": "v"}},
                ]}},
            ]},
            {"name": "two", "schedule": [{"operation": "q"}]},
        ],
    },
    {
        "data-streams": [{"name": "logs-a"}],
        "composable-templates": [],
        "corpora": [{"name": "d", "target-data-stream": "logs-a", "documents": [
            {"source-file": "d.json", "document-count": 5}]}],
        "schedule": [
            {"operation": {"operation-type": "bulk", "bulk-size": 10}, "clients": 3},
            {"parallel": {"completed-by": "any", "tasks": [
                {"name": "x", "operation": {"operation-type": "sleep", "duration": 1}},
                {"name": "y", "operation": {"operation-type": "sleep", "duration": 2}}]}},
        ],
    },
    {"indices": [{"name": "a"}, {"name": "b"}],
     "parameters": {"ratio": 1, "nested": {"a": 1, "b": {"c": 2}}, "keep": "track"},
     "challenges": [{"name": "only", "parameters": {"ratio": 2, "nested": {"b": {"d": 3}}},
                     "schedule": [{"operation": "refresh", "clients": 2}]}]},
    {"challenge": {"name": "single", "schedule": [{"operation": {"operation-type": "search", "index": "a"}}]}},
]


def describe(t):
    out = {
        "index_names": t.index_names(),
        "data_stream_names": t.data_stream_names(),
        "selected": t.selected_challenge_or_default.name,
        "default": t.default_challenge.name if t.default_challenge else None,
        "documents": t.number_of_documents,
        "challenges": [(c.name, c.default, c.selected, c.auto_generated, c.parameters) for c in t.challenges],
    }
    for c in t.challenges:
        out[c.name + "/blocks"] = [(type(i).__name__, getattr(i, "clients", None)) for i in c.schedule]
        for item in c.schedule:
            for task in item:
                o = task.operation
                out[f"{c.name}/{task.name}"] = [
                    task.clients, o.type, o.name, o.param_source, o.params, o.meta_data, o.include_in_reporting,
                    task.completes_parent, task.any_completes_parent, task.tags, task.meta_data,
                    tuple(task.target_throughput) if task.target_throughput else None, task.iterations,
                    task.warmup_iterations, task.time_period, task.warmup_time_period, task.schedule,
                ]
    for corpus in t.corpora:
        for d in corpus.documents:
            out[f"{corpus.name}/{d.document_file}"] = [
                d.target_index, d.target_data_stream, d.document_archive, d.number_of_documents,
                d.includes_action_and_meta_data, d.number_of_lines, d.is_bulk, d.source_format,
            ]
    return out


def main():
    differences = 0
    for i, spec in enumerate(SPECS):
        for challenge in [None] + [c["name"] for c in spec.get("challenges", [])]:
            reader = loader.TrackSpecificationReader(track_params={}, complete_track_params=None,
                                                     selected_challenge=challenge)
            import copy
            rally = describe(reader("t", copy.deepcopy(spec), "/tmp"))
            ours = describe(track_model._standalone({"name": "t", "challenge": challenge}, copy.deepcopy(spec), "/tmp"))
            for key in sorted(set(rally) | set(ours)):
                if rally.get(key) != ours.get(key):
                    differences += 1
                    print(f"spec {i}, challenge {challenge}, {key}:\n  esrally: {rally.get(key)}\n  runner:  {ours.get(key)}")
    print(f"{differences} differences")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
