"""esrally.driver.runner: the base class custom runners extend, and `unwrap`. Rally's own
runners (BulkIndex and the others) are not here: a track that builds on them needs esrally
installed, and runner says so before the race."""

import logging

_RUNNERS = {}


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


class Delegator:
    def __init__(self, delegate, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.delegate = delegate


def unwrap(runner):
    delegate = getattr(runner, "delegate", None)
    if delegate:
        return unwrap(delegate)
    return runner


def mandatory(params, key, op):
    try:
        return params[key]
    except KeyError:
        from esrally import exceptions

        raise exceptions.DataError(
            f"Parameter source for operation '{str(op)}' did not provide the mandatory parameter '{key}'. "
            f"Add it to your parameter source and try again."
        )


def register_runner(operation_type, runner, **kwargs):
    _RUNNERS[operation_type] = runner


def runner_for(operation_type):
    try:
        return _RUNNERS[operation_type]
    except KeyError:
        from esrally import exceptions

        raise exceptions.RallyError(
            f"No runner available for operation-type: [{operation_type}] (runner's stand-in for esrally holds only "
            f"the track's own runners; install esrally for Rally's)"
        )
