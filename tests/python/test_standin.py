"""runner's stand-ins for esrally and OpenSearch Benchmark (src/python/py): every name the public
Rally and OSB catalogues import resolves, and the parts tracks build on behave as Rally's. Run by
tests/e2e/python.rs as `python3 -m unittest` with the worker's directories on the path."""

import asyncio
import importlib
import json
import os
import tempfile
import unittest

import track_model

# Every `from X import Y` and `X.Y` the public catalogues (elastic/rally-tracks and
# opensearch-benchmark-workloads) make of esrally and osbenchmark, found by a scan of their Python.
CATALOGUE_NAMES = {
    "esrally": ["exceptions", "track"],
    "esrally.exceptions": ["DataError", "InvalidSyntax", "RallyAssertionError", "TrackConfigError", "RallyError"],
    "esrally.driver": ["runner"],
    "esrally.driver.runner": ["BulkIndex", "PutSettings", "Runner", "Retry", "runner_for", "unwrap", "Delegator",
                              "register_runner", "mandatory"],
    "esrally.client.synchronous": ["RallySyncElasticsearch"],
    "esrally.track": ["Challenge", "ComponentTemplate", "DocumentCorpus", "Documents", "Index", "IndexTemplate",
                      "Track", "Task", "Operation", "OperationType", "Parallel", "exceptions", "loader", "track",
                      "params"],
    "esrally.track.track": ["Documents"],
    "esrally.track.loader": ["DocumentSetPreparator", "TrackProcessor", "DefaultTrackPreparator"],
    "esrally.track.params": ["BulkIndexParamSource", "CreateComponentTemplateParamSource",
                             "CreateComposableTemplateParamSource", "IndexIdConflict", "ParamSource", "Slice"],
    "esrally.utils": ["io", "net", "opts"],
    "esrally.utils.io": ["MmapSource"],
    "esrally.utils.net": ["download", "download_http"],
    "esrally.utils.opts": ["to_dict"],
    "osbenchmark": ["exceptions"],
    "osbenchmark.exceptions": ["DataError", "BenchmarkError", "WorkloadConfigError", "ConfigurationError"],
    "osbenchmark.client": ["RequestContextHolder"],
    "osbenchmark.utils.parse": ["parse_int_parameter", "parse_string_parameter"],
    "osbenchmark.worker_coordinator.runner": ["PutSettings", "Retry", "Runner"],
    "osbenchmark.workload": ["loader", "Workload", "TestProcedure"],
    "osbenchmark.workload.loader": ["Decompressor", "Downloader", "DefaultWorkloadPreparator", "WorkloadProcessor"],
    "osbenchmark.workload.params": ["ParamSource"],
}


def run(coro):
    return asyncio.run(coro)


class CatalogueNames(unittest.TestCase):
    def test_every_name_the_catalogues_import_resolves_to_the_stand_in(self):
        for module, names in CATALOGUE_NAMES.items():
            m = importlib.import_module(module)
            self.assertIn("compat", getattr(m, "__file__", "") or "", f"{module} is not runner's stand-in")
            for name in names:
                if not hasattr(m, name):
                    importlib.import_module(f"{module}.{name}")
                self.assertTrue(hasattr(m, name) or importlib.import_module(f"{module}.{name}"), f"{module}.{name}")

    def test_both_families_share_one_exception_hierarchy(self):
        from esrally import exceptions as rally
        from osbenchmark import exceptions as osb

        self.assertIs(rally.DataError, osb.DataError)
        self.assertIs(rally.TrackConfigError, osb.WorkloadConfigError)
        self.assertTrue(issubclass(osb.ConfigurationError, osb.BenchmarkError))


class Model(unittest.TestCase):
    SPEC = {
        "indices": [{"name": "docs"}],
        "corpora": [
            {"name": "c", "documents": [
                {"source-file": "a.json.bz2", "document-count": 10},
                {"source-file": "b.json", "document-count": 4, "includes-action-and-meta-data": True},
            ]},
        ],
        "operations": [{"name": "q", "operation-type": "search", "param-source": "src", "size": 3}],
        "challenges": [
            {"name": "one", "default": True, "schedule": [
                {"operation": "q", "clients": 2, "target-throughput": "10 ops/s"},
                {"operation": "force-merge"},
                {"operation": {"operation-type": "refresh"}},
                {"parallel": {"clients": 4, "completed-by": "q2", "tasks": [
                    {"name": "q2", "operation": "q"},
                    {"operation": {"name": "bulk", "operation-type": "bulk"}, "tags": "ingest"},
                ]}},
            ]},
            {"name": "two", "schedule": []},
        ],
    }

    def build(self, challenge=None):
        req = {"name": "t", "spec": self.SPEC, "challenge": challenge,
               "documents": {"a.json": "/data/a.json", "b.json": "/data/b.json"}}
        return track_model._standalone(req, self.SPEC, "/tracks/t")

    def test_tasks_are_named_after_their_operations_and_keep_rallys_defaults(self):
        t = self.build()
        schedule = t.selected_challenge_or_default.schedule
        self.assertEqual([s.name for s in schedule[:3]], ["q", "force-merge", "refresh"])
        q = schedule[0]
        self.assertEqual((q.clients, q.operation.type, q.operation.param_source), (2, "search", "src"))
        self.assertEqual(q.operation.params["size"], 3)
        self.assertEqual(q.target_throughput, track_model.Throughput(10.0, "ops/s"))
        self.assertFalse(schedule[1].operation.include_in_reporting)
        self.assertTrue(q.operation.include_in_reporting)
        par = schedule[3]
        self.assertEqual(par.clients, 4)
        self.assertEqual([(x.name, x.completes_parent, x.clients) for x in par], [("q2", True, 1), ("bulk", False, 1)])
        self.assertEqual(par.tasks[1].tags, ["ingest"])
        self.assertTrue(par.matches(track_model.TaskTagFilter("ingest")))
        self.assertTrue(q.matches(track_model.TaskOpTypeFilter("search")))

    def test_the_track_answers_rallys_questions(self):
        t = self.build("two")
        self.assertEqual(t.index_names(), ["docs"])
        self.assertEqual(t.data_stream_names(), [])
        self.assertEqual(t.selected_challenge_or_default.name, "two")
        self.assertEqual(t.default_challenge.name, "one")
        self.assertEqual(t.find_challenge_or_default("").name, "one")
        with self.assertRaises(LookupError):
            t.find_challenge("three")
        self.assertEqual(t.number_of_documents, 14)

    def test_corpus_files_go_to_the_only_index_unless_they_hold_their_own_actions(self):
        docs = self.build().corpora[0].documents
        self.assertEqual((docs[0].target_index, docs[0].document_file, docs[0].document_archive),
                         ("docs", "/data/a.json", "a.json.bz2"))
        self.assertTrue(docs[0].has_compressed_corpus())
        self.assertEqual((docs[1].target_index, docs[1].number_of_lines), (None, 8))
        self.assertEqual(self.build().corpora[0].filter(target_indices=["docs"]).documents, [docs[0]])

    def test_operation_types_hyphenate_as_rallys(self):
        ot = track_model.OperationType
        self.assertEqual(ot.WaitForCurrentSnapshotsCreate.to_hyphenated_string(), "wait-for-current-snapshots-create")
        self.assertIs(ot.from_hyphenated_string("create-ilm-policy"), ot.CreateIlmPolicy)
        self.assertTrue(ot.ForceMerge.admin_op)
        self.assertFalse(ot.Search.admin_op)
        with self.assertRaises(KeyError):
            ot.from_hyphenated_string("no-such-thing")


class Params(unittest.TestCase):
    def test_slice_hands_out_its_lines_bulk_by_bulk(self):
        from esrally.track.params import Slice
        from esrally.utils.io import MmapSource

        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("".join(f"line {i}\n" for i in range(10)))
        try:
            s = Slice(MmapSource, 2, 5).open(f.name, "rb", 2)
            self.assertEqual([len(b) for b in s], [2, 2, 1])
            s.close()
            s = Slice(MmapSource, 8, 5).open(f.name, "rb", 4)
            self.assertEqual(list(s), [[b"line 8\n", b"line 9\n"]])
        finally:
            os.unlink(f.name)

    def test_the_bulk_source_shares_a_corpus_between_clients(self):
        from esrally.track.params import BulkIndexParamSource

        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("".join(json.dumps({"n": i}) + "\n" for i in range(7)))
        try:
            docs = track_model.Documents("bulk", document_file=f.name, number_of_documents=7, target_index="i")
            t = track_model.Track("t", corpora=[track_model.DocumentCorpus("c", [docs])])
            src = BulkIndexParamSource(t, {"bulk-size": 2})
            first, second = src.partition(0, 2), src.partition(1, 2)
            self.assertEqual((first.size(), second.size()), (2, 2))
            drawn = [first.params(), first.params()]
            self.assertEqual([d["bulk-size"] for d in drawn], [2, 1])
            self.assertTrue(drawn[0]["body"].startswith('{"index": {"_index": "i"}}\n{"n": 0}\n'))
            self.assertEqual(second.params()["body"].splitlines()[1], '{"n": 3}')
            with self.assertRaises(StopIteration):
                first.params()
        finally:
            os.unlink(f.name)

    def test_template_sources_merge_the_operations_settings(self):
        from esrally.track.params import CreateComposableTemplateParamSource

        t = track_model.Track("t", composable_templates=[
            track_model.IndexTemplate("a", "a-*", {"template": {"settings": {"x": 1}}}),
            track_model.IndexTemplate("b", "b-*", {}),
        ])
        src = CreateComposableTemplateParamSource(t, {"template": "a", "settings": {"y": 2}})
        self.assertEqual(src.params()["templates"], [("a", {"template": {"settings": {"x": 1, "y": 2}}})])
        with self.assertRaises(Exception):
            CreateComposableTemplateParamSource(track_model.Track("t"), {"operation-type": "x"})

    def test_options_parse_as_rallys(self):
        from esrally.utils.opts import to_dict

        self.assertEqual(to_dict("a:1,b:'2',c:true,d:x,e:None"), {"a": 1, "b": "2", "c": True, "d": "x", "e": None})
        self.assertEqual(to_dict('{"a": [1]}'), {"a": [1]})

    def test_osbs_typed_params(self):
        from osbenchmark.exceptions import ConfigurationError
        from osbenchmark.utils.parse import parse_int_parameter, parse_string_parameter

        self.assertEqual(parse_int_parameter("k", {"k": 3}), 3)
        self.assertEqual(parse_int_parameter("k", {}, 5), 5)
        with self.assertRaises(ConfigurationError):
            parse_int_parameter("k", {"k": "3"})
        with self.assertRaises(ConfigurationError):
            parse_string_parameter("k", {"k": ""})


class FakeClient:
    """Records calls; answers a bulk with one failed item of the two."""

    def __init__(self, failures=0):
        self.calls = []
        self.failures = failures

    async def bulk(self, **kwargs):
        self.calls.append(("bulk", kwargs))
        return {"took": 3, "errors": True,
                "items": [{"index": {"status": 201}}, {"index": {"status": 429}}]}

    async def perform_request(self, **kwargs):
        self.calls.append(("request", kwargs))
        if self.failures:
            self.failures -= 1
            raise ConnectionError("down")
        return {"hits": {"total": {"value": 5, "relation": "eq"}}}


class Runners(unittest.TestCase):
    def test_bulk_index_sends_the_body_and_counts_failed_items(self):
        from esrally.driver.runner import BulkIndex

        es = FakeClient()
        meta = run(BulkIndex()(es, {"body": ["{\"index\":{}}", "{}", "{\"index\":{}}", "{}"], "bulk-size": 2,
                                    "unit": "docs", "action-metadata-present": True, "index": "i", "pipeline": "p"}))
        self.assertEqual((meta["weight"], meta["success"], meta["error-count"]), (2, False, 1))
        kwargs = es.calls[0][1]
        self.assertNotIn("index", kwargs)
        self.assertEqual(kwargs["pipeline"], "p")
        self.assertNotIn("params", kwargs)
        self.assertEqual(kwargs["body"], "{\"index\":{}}\n{}\n{\"index\":{}}\n{}\n")

    def test_retry_retries_what_rally_retries(self):
        from esrally.driver.runner import Query, Retry

        es = FakeClient(failures=2)
        meta = run(Retry(Query())(es, {"index": "i", "retries": 2, "retry-wait-period": 0}))
        self.assertEqual((meta["hits"], len(es.calls)), (5, 3))
        es = FakeClient(failures=1)
        with self.assertRaises(ConnectionError):
            run(Retry(Query())(es, {"index": "i", "retry-wait-period": 0}))

    def test_registry_and_probes(self):
        from esrally.driver import runner
        from esrally.track import OperationType

        runner.register_default_runners()
        self.assertEqual(repr(runner.unwrap(runner.runner_for(OperationType.PutSettings))), "put-settings")
        with self.assertRaises(Exception) as e:
            run(runner.Composite()(None, {}))
        self.assertIn("by name only", str(e.exception))


if __name__ == "__main__":
    unittest.main()
