"""runner's stand-in runners with the official async client against a live `runner serve`
(its port the first argument): the calls a track's runner built on Rally's makes must be ones
the client takes. Run by tests/e2e/python.rs with the clients' venv."""

import asyncio
import sys

from elasticsearch import AsyncElasticsearch
from esrally.driver.runner import BulkIndex, ClusterHealth, DeleteIndex, PutSettings, Query, Retry


async def main(port):
    es = AsyncElasticsearch(f"http://127.0.0.1:{port}")
    try:
        await DeleteIndex()(es, {"index": "standin"})
        bulk = await BulkIndex()(es, {
            "body": '{"index":{"_index":"standin"}}\n{"n":1}\n{"index":{"_index":"standin"}}\n{"n":2}\n',
            "bulk-size": 2, "unit": "docs", "action-metadata-present": True, "refresh": "true",
        })
        assert bulk["success"] and bulk["success-count"] == 2, bulk
        health = await Retry(ClusterHealth())(es, {"request-params": {"wait_for_status": "yellow"}})
        assert health["success"], health
        found = await Query()(es, {"index": "standin", "body": {"query": {"match_all": {}}}, "cache": False})
        assert found["hits"] == 2, found
        await PutSettings()(es, {"body": {"persistent": {"search.max_buckets": 10000}}})
    finally:
        await es.close()
    print("stand-in runners: ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
