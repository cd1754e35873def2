"""esrally.client.synchronous: Rally's synchronous client is the official one here."""
try:
    from elasticsearch import Elasticsearch as RallySyncElasticsearch  # noqa: F401
except ImportError as e:  # pragma: no cover - said when used
    _missing = e

    class RallySyncElasticsearch:
        def __init__(self, *args, **kwargs):
            raise ImportError(f"RallySyncElasticsearch needs the elasticsearch client: {_missing}")
