"""Rally's runner module as tracks use it (OSB's `worker_coordinator.runner` is the same):
the base classes, the registry (`register_runner`, `runner_for`), `Retry`, and Rally's built-in
runners by name. Those a track builds on or looks up to run (a bulk, settings, a raw request, a
search, the administrative calls) run here with the official client, returning what Rally's
return; the rest answer an import (tracks probe for them to pick a fallback) and, called, say
that runner runs their operation type itself and the stand-in does not."""

import asyncio
import json
import logging

from standin import errors

_RUNNERS = {}


def _type_name(operation_type):
    if hasattr(operation_type, "to_hyphenated_string"):
        return operation_type.to_hyphenated_string()
    return str(operation_type)


def register_runner(operation_type, runner, **kwargs):
    _RUNNERS[_type_name(operation_type)] = runner


def remove_runner(operation_type):
    _RUNNERS.pop(_type_name(operation_type), None)


def runner_for(operation_type):
    try:
        return _RUNNERS[_type_name(operation_type)]
    except KeyError:
        raise errors.RallyError(f"No runner available for operation-type: [{_type_name(operation_type)}]") from None


def mandatory(params, key, op):
    try:
        return params[key]
    except KeyError:
        raise errors.DataError(
            f"Parameter source for operation '{str(op)}' did not provide the mandatory parameter '{key}'. "
            f"Add it to your parameter source and try again."
        ) from None


class Runner:
    """Base class for all operations against Elasticsearch."""

    def __init__(self, *args, config=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.logger = logging.getLogger(__name__)
        self.serverless_mode = False
        self.serverless_operator = False

    async def __aenter__(self):
        return self

    async def __call__(self, es, params):
        raise NotImplementedError("abstract operation")

    async def __aexit__(self, exc_type, exc_val, exc_tb):
        return False

    def _default_kw_params(self, params):
        kw_dict = {
            "body": "body",
            "headers": "headers",
            "index": "index",
            "opaque_id": "opaque-id",
            "params": "request-params",
            "request_timeout": "request-timeout",
        }
        full_result = {k: params.get(v) for (k, v) in kw_dict.items()}
        return {k: v for k, v in full_result.items() if v is not None}

    @staticmethod
    def _transport_request_params(params):
        request_params = dict(params.get("request-params") or {})
        request_timeout = params.get("request-timeout")
        if request_timeout is not None:
            request_params["request_timeout"] = request_timeout
        headers = dict(params.get("headers") or {})
        opaque_id = params.get("opaque-id")
        if opaque_id is not None:
            headers["x-opaque-id"] = opaque_id
        return request_params, headers

    def __repr__(self):
        return type(self).__name__.lower()


class Delegator:
    def __init__(self, delegate, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.delegate = delegate


def unwrap(runner):
    delegate = getattr(runner, "delegate", None)
    if delegate:
        return unwrap(delegate)
    return runner


def _is_timeout_or_unreachable(e):
    name = type(e).__name__
    return "Timeout" in name or name == "ConnectionError" or isinstance(e, (TimeoutError, OSError))


class Retry(Runner, Delegator):
    """Rally's retrying wrapper: `retries` (0), `retry-until-success` (False),
    `retry-wait-period` (0.5 s), `retry-on-timeout` (True), `retry-on-error` (False)."""

    def __init__(self, delegate, retry_until_success=False):
        super().__init__(delegate=delegate)
        self.retry_until_success = retry_until_success

    async def __aenter__(self):
        await self.delegate.__aenter__()
        return self

    async def __call__(self, es, params):
        until_success = params.get("retry-until-success", self.retry_until_success)
        attempts = None if until_success else params.get("retries", 0) + 1
        on_error = True if until_success else params.get("retry-on-error", False)
        wait = params.get("retry-wait-period", 0.5)
        on_timeout = params.get("retry-on-timeout", True)
        attempt = 0
        while True:
            attempt += 1
            last = attempts is not None and attempt >= attempts
            try:
                value = await self.delegate(es, params)
            except Exception as e:
                status = getattr(e, "status_code", None) or getattr(getattr(e, "meta", None), "status", None)
                # Rally retries timeouts and unreachable nodes (and a 408), never a 400.
                if last or not on_timeout or status == 400:
                    raise
                if status is not None and status != 408 and not _is_timeout_or_unreachable(e):
                    raise
                await asyncio.sleep(wait)
                continue
            if last or not on_error or not isinstance(value, dict) or value.get("success", True):
                return value
            await asyncio.sleep(wait)

    async def __aexit__(self, exc_type, exc_val, exc_tb):
        return await self.delegate.__aexit__(exc_type, exc_val, exc_tb)

    def __repr__(self):
        return "retryable %s" % repr(self.delegate)


def _body_of(response):
    body = getattr(response, "body", response)
    if isinstance(body, (bytes, bytearray)):
        return json.loads(body) if body else {}
    return body


class BulkIndex(Runner):
    """Rally's bulk: `body` (the request's lines, a string or a list), `bulk-size`, `unit`,
    `action-metadata-present`, `index`; optional `pipeline`, `timeout`, `refresh`. Returns
    Rally's simple stats: weight, unit, success, success-count, error-count, took."""

    async def __call__(self, es, params):
        kwargs = self._default_kw_params(params)
        bulk_params = {k: params[k] for k in ("timeout", "pipeline") if k in params}
        if "refresh" in params:
            if params["refresh"] not in ("wait_for", "true", "false"):
                raise errors.RallyAssertionError(
                    f"Unsupported bulk refresh value: {params['refresh']}. Use one of [wait_for, true, false]."
                )
            bulk_params["refresh"] = params["refresh"]
        with_meta = mandatory(params, "action-metadata-present", self)
        bulk_size = mandatory(params, "bulk-size", self)
        unit = mandatory(params, "unit", self)
        if with_meta:
            kwargs.pop("index", None)
        body = kwargs.get("body")
        if isinstance(body, list):
            kwargs["body"] = "".join(line if line.endswith("\n") else line + "\n" for line in body)
        # URL parameters as keyword arguments: both official clients (elasticsearch-py and
        # opensearch-py) take them so.
        kwargs.update(kwargs.pop("params", None) or {})
        kwargs.update(bulk_params)
        response = _body_of(await es.bulk(**kwargs))
        errors_seen = 0
        if response.get("errors"):
            for item in response.get("items", []):
                data = next(iter(item.values()))
                if data.get("status", 200) > 299 or data.get("_shards", {}).get("failed", 0) > 0:
                    errors_seen += 1
        meta = {
            "index": params.get("index"),
            "weight": bulk_size,
            "unit": unit,
            "took": response.get("took"),
            "success": errors_seen == 0,
            "success-count": bulk_size - errors_seen,
            "error-count": errors_seen,
        }
        if errors_seen:
            meta["error-type"] = "bulk"
        return meta

    def __repr__(self):
        return "bulk-index"


class PutSettings(Runner):
    """Rally's put-settings: `body`, the cluster's persistent or transient settings."""

    async def __call__(self, es, params):
        await es.cluster.put_settings(body=mandatory(params, "body", repr(self)))
        return {"weight": 1, "unit": "ops", "success": True}

    def __repr__(self):
        return "put-settings"


class RawRequest(Runner):
    """Rally's raw-request: `path`, `method` (GET), `body`, `request-params`, `headers`."""

    async def __call__(self, es, params):
        request_params, headers = self._transport_request_params(params)
        path = mandatory(params, "path", self)
        if not path.startswith("/"):
            raise errors.RallyAssertionError(f"RawRequest [{path}] failed. Path parameter must begin with a '/'.")
        headers.setdefault("content-type", "application/json")
        headers.setdefault("accept", "application/json")
        await es.perform_request(
            method=params.get("method", "GET"), path=path, headers=headers, body=params.get("body"),
            params=request_params,
        )
        return {"weight": 1, "unit": "ops", "success": True}

    def __repr__(self):
        return "raw-request"


class Query(Runner):
    """Rally's search (one request): `index`, `body`, `request-params`, `cache`,
    `detailed-results`; its hits and whether they were counted exactly."""

    async def __call__(self, es, params):
        request_params, headers = self._transport_request_params(params)
        if "cache" in params:
            request_params["request_cache"] = str(params["cache"]).lower()
        index = params.get("index", "_all")
        response = _body_of(await es.perform_request(
            method="POST", path=f"/{index}/_search", headers=dict(headers, **{"content-type": "application/json"}),
            body=params.get("body"), params=request_params,
        ))
        hits = response.get("hits", {}).get("total", {})
        if isinstance(hits, int):
            hits = {"value": hits, "relation": "eq"}
        return {
            "weight": 1,
            "unit": "ops",
            "success": True,
            "hits": hits.get("value", 0),
            "hits_relation": hits.get("relation", "eq"),
            "timed_out": response.get("timed_out", False),
            "took": response.get("took"),
        }

    def __repr__(self):
        return "query"


def _simple(name, call):
    """A runner of one client call, `call(es, params)`, returning Rally's one operation."""

    class Simple(Runner):
        async def __call__(self, es, params):
            await call(es, params)
            return {"weight": 1, "unit": "ops", "success": True}

        def __repr__(self):
            return name

    Simple.__name__ = Simple.__qualname__ = "".join(p.capitalize() for p in name.split("-"))
    return Simple


def _index(params):
    return params.get("index", "_all")


Refresh = _simple("refresh", lambda es, p: es.indices.refresh(index=_index(p)))
ForceMerge = _simple("force-merge", lambda es, p: es.indices.forcemerge(
    index=_index(p), **({"max_num_segments": p["max-num-segments"]} if "max-num-segments" in p else {})))
ClusterHealth = _simple("cluster-health", lambda es, p: es.cluster.health(
    index=p.get("index"), **(p.get("request-params") or {})))
CreateIndex = _simple("create-index", lambda es, p: es.indices.create(index=mandatory(p, "index", "create-index"), body=p.get("body")))
DeleteIndex = _simple("delete-index", lambda es, p: es.indices.delete(
    index=mandatory(p, "index", "delete-index"), ignore_unavailable=True))
IndicesStats = _simple("index-stats", lambda es, p: es.indices.stats(index=_index(p)))
NodeStats = _simple("node-stats", lambda es, p: es.nodes.stats())
PutPipeline = _simple("put-pipeline", lambda es, p: es.ingest.put_pipeline(
    id=mandatory(p, "id", "put-pipeline"), body=mandatory(p, "body", "put-pipeline")))


class Sleep(Runner):
    async def __call__(self, es, params):
        await asyncio.sleep(mandatory(params, "duration", "sleep"))
        return {"weight": 1, "unit": "ops", "success": True}

    def __repr__(self):
        return "sleep"


def _named_only(class_name):
    """One of Rally's (or OSB's) runners that the stand-in names but does not run."""

    class NamedOnly(Runner):
        async def __call__(self, es, params):
            raise errors.RallyError(
                f"runner's stand-in for esrally has Rally's `{class_name}` by name only (runner runs its operation "
                f"type itself); a track's runner that calls it needs esrally installed (pip install esrally==2.13.0)"
            )

        def __repr__(self):
            return class_name

    NamedOnly.__name__ = NamedOnly.__qualname__ = class_name
    return NamedOnly


# Rally's built-in runners that only answer a probe here (esrally's register_default_runners
# and OSB's). Tracks import them to learn which Rally they run on.
NAMED_ONLY = [
    "Composite", "SubmitAsyncSearch", "GetAsyncSearch", "DeleteAsyncSearch", "OpenPointInTime",
    "ClosePointInTime", "Sql", "FieldCaps", "Esql", "EsqlProfile", "CreateSnapshot", "RestoreSnapshot",
    "Downsample", "CreateComponentTemplate", "DeleteComponentTemplate", "CreateComposableTemplate",
    "DeleteComposableTemplate", "CreateDataStream", "DeleteDataStream", "CreateIndexTemplate",
    "DeleteIndexTemplate", "ShrinkIndex", "CreateMlDatafeed", "DeleteMlDatafeed", "StartMlDatafeed",
    "StopMlDatafeed", "CreateMlJob", "DeleteMlJob", "OpenMlJob", "CloseMlJob", "DeleteSnapshotRepository",
    "CreateSnapshotRepository", "WaitForSnapshotCreate", "WaitForCurrentSnapshotsCreate", "IndicesRecovery",
    "CreateTransform", "StartTransform", "WaitForTransform", "DeleteTransform", "TransformStats",
    "CreateIlmPolicy", "DeleteIlmPolicy", "RunUntil", "EnrichPolicy",
    # OSB's own.
    "BulkVectorDataSet", "CreatePointInTime", "DeletePointInTime", "ListAllPointInTime",
    "ProduceStreamMessage", "ProtoBulkIndex", "ProtoQuery", "ProtoKNNQuery", "ProtoBulkVectorDataSet",
    "DeletePipeline", "CreateSearchPipeline", "DeleteMlModel", "RegisterMlModel", "DeployMlModel",
    "TrainKnnModel", "DeleteKnnModel", "CreateMlConnector", "DeleteMlConnector", "RegisterRemoteMlModel",
]
for _name in NAMED_ONLY:
    globals()[_name] = _named_only(_name)


def register_default_runners(config=None):
    """The stand-in's runners by operation type, as Rally's registry holds them (the ones it
    runs; a track's own registration replaces any)."""
    defaults = {
        "bulk": BulkIndex(),
        "put-settings": Retry(PutSettings()),
        "raw-request": RawRequest(),
        "search": Query(),
        "refresh": Retry(Refresh()),
        "force-merge": ForceMerge(),
        "cluster-health": Retry(ClusterHealth()),
        "create-index": Retry(CreateIndex()),
        "delete-index": Retry(DeleteIndex()),
        "index-stats": Retry(IndicesStats()),
        "node-stats": NodeStats(),
        "put-pipeline": Retry(PutPipeline()),
        "sleep": Sleep(),
    }
    for kind, runner in defaults.items():
        _RUNNERS.setdefault(kind, runner)
