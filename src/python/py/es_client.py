"""The client a custom runner is handed, and one runner call as Rally's `execute_single` makes
it: the return value read as Rally reads it, client errors turned into Rally's failed-request
metadata, and the service time taken as Rally takes it."""

import contextlib
import time


def _options(options, kind):
    """Rally's client options as the official client's keyword arguments."""
    opts = dict(options or {})
    out = {}
    user = opts.pop("basic_auth_user", None)
    password = opts.pop("basic_auth_password", None)
    if user is not None:
        out["basic_auth" if kind == "elasticsearch" else "http_auth"] = (user, password or "")
    if "timeout" in opts:
        t = opts.pop("timeout")
        t = None if t is None else float(t)
        out["request_timeout" if kind == "elasticsearch" else "timeout"] = t
    for key in ("verify_certs", "ca_certs", "client_cert", "client_key", "api_key", "headers"):
        if key in opts:
            out[key] = opts.pop(key)
    opts.pop("use_ssl", None)
    # Whatever else Rally passes through to the client.
    for key in ("max_retries", "retry_on_timeout", "http_compress", "ssl_show_warn"):
        if key in opts:
            out[key] = opts.pop(key)
    return out


def create(spec, client_id=0):
    """The async client for `spec` ({"kind", "hosts", "options"}), and a function giving the
    request context Rally's client keeps (None for the official client alone)."""
    kind = spec.get("kind", "elasticsearch")
    hosts = spec.get("hosts") or ["http://127.0.0.1:9200"]
    options = spec.get("options") or {}
    if kind == "elasticsearch":
        try:
            # Where esrally is installed, the very client Rally hands its runners.
            from esrally.client.factory import EsClientFactory

            parsed = []
            for h in hosts:
                scheme, rest = h.split("://", 1) if "://" in h else ("http", h)
                host, _, port = rest.rstrip("/").rpartition(":")
                parsed.append({"host": host, "port": int(port), "use_ssl": scheme == "https"})
            # Rally's client picks its host by its client id (round robin over the hosts).
            client = EsClientFactory(parsed, dict(options)).create_async(client_id=client_id)
            return client, client.new_request_context
        except ImportError:
            pass
        from elasticsearch import AsyncElasticsearch

        return AsyncElasticsearch(hosts=hosts, **_options(options, kind)), None
    from opensearchpy import AsyncOpenSearch

    return AsyncOpenSearch(hosts=hosts, **_options(options, kind)), None


def _meta_of(return_value):
    """Rally's reading of what a runner returns: (weight, unit), a dict, or anything else."""
    if isinstance(return_value, tuple) and len(return_value) == 2:
        return return_value[0], return_value[1], {"success": True}
    if isinstance(return_value, dict):
        meta = dict(return_value)
        weight = meta.pop("weight", 1)
        unit = meta.pop("unit", "ops")
        meta.setdefault("success", True)
        return weight, unit, meta
    return 1, "ops", {"success": True}


def _client_error(e):
    """Rally's metadata for a failed request: a transport error or an API error."""
    name = type(e).__name__
    module = type(e).__module__ or ""
    if not (module.startswith("elasticsearch") or module.startswith("elastic_transport") or module.startswith("opensearchpy")):
        return None
    meta = {"success": False}
    status = getattr(e, "status_code", None)
    if status is None:
        status = getattr(getattr(e, "meta", None), "status", None)
    if "Timeout" in name:
        meta["error-type"] = "transport"
        meta["error-description"] = "network connection timed out"
    elif name in ("ConnectionError", "TransportError", "SerializationError", "SSLError") and not isinstance(status, int):
        meta["error-type"] = "transport"
        meta["error-description"] = str(getattr(e, "message", e))
    else:
        # Rally's description of an API error: the raw body where the runner asked for raw
        # answers, else the error with its info.
        meta["error-type"] = "api"
        body = getattr(e, "body", None)
        if isinstance(body, (bytes, bytearray)):
            message = body.decode("utf-8", "replace") or "None"
        elif hasattr(body, "read"):
            message = body.read().decode("utf-8", "replace") or "None"
        else:
            message = str(getattr(e, "error", e))
            info = getattr(e, "info", None)
            if isinstance(info, (bytes, bytearray)):
                info = info.decode("utf-8", "replace")
            if info:
                message += f" ({info})"
        meta["error-description"] = message
    if isinstance(status, int):
        meta["http-status"] = status
    return meta


async def execute(runner, es, params, request_context):
    """One call: the reply runner records (weight, unit, metadata, service and processing
    time), or a fatal error (a KeyError, as Rally's, or anything else the runner raised)."""
    context = request_context() if request_context else contextlib.nullcontext()
    # Rally hands a multi-cluster runner every cluster's client by name; here there is one.
    inner = runner
    while getattr(inner, "delegate", None) is not None:
        inner = inner.delegate
    if hasattr(inner, "multi_cluster") and not isinstance(es, dict):
        es = {"default": es}
    processing_start = time.perf_counter()
    request_start = request_end = None
    try:
        with context as ctx:
            if hasattr(runner, "__aenter__") and hasattr(runner, "__aexit__"):
                async with runner:
                    value = await runner(es, params)
            else:
                value = await runner(es, params)
            if ctx is not None:
                request_start, request_end = getattr(ctx, "request_start", None), getattr(ctx, "request_end", None)
        weight, unit, meta = _meta_of(value)
    except KeyError as e:
        return {
            "ok": False,
            "fatal": True,
            "error": "Cannot execute [%s]. Provided parameters are: %s. Error: [%s]." % (runner, list(params.keys()), e),
        }
    except Exception as e:
        meta = _client_error(e)
        if meta is None:
            return {"ok": False, "fatal": True, "error": f"runner raised {type(e).__name__}: {e}"}
        weight, unit = 0, "ops"
    processing_end = time.perf_counter()
    processing = processing_end - processing_start
    # Rally's service time runs from the first request the runner sent to the end of the
    # last answer; without Rally's client, around the runner call.
    if isinstance(request_start, float) and isinstance(request_end, float) and request_end >= request_start:
        service = request_end - request_start
    else:
        service = processing
    try:
        weight = float(weight)
    except (TypeError, ValueError):
        return {"ok": False, "fatal": True, "error": f"the runner's weight {weight!r} is not a number"}
    return {"ok": True, "weight": weight, "unit": str(unit), "meta": meta, "service": service, "processing": processing}
