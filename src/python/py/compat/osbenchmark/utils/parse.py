"""osbenchmark.utils.parse: OSB's typed reading of a runner's params."""
from standin.errors import ConfigurationError


def _parse(key, params, default, kind, name, present=lambda params, key: key in params):
    if not present(params, key):
        if default is not None:
            return default
        raise ConfigurationError("Value cannot be None for param {}".format(key))
    value = params[key]
    # OSB's checks are by type; a bool is no int here.
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    raise ConfigurationError("Value must be a {} for param {}".format(name, key))


def parse_string_parameter(key, params, default=None):
    # OSB: an empty string counts as missing.
    return _parse(key, params, default, str, "string", lambda p, k: k in p and bool(p[k]))


def parse_int_parameter(key, params, default=None):
    return _parse(key, params, default, int, "int")


def parse_float_parameter(key, params, default=None):
    return _parse(key, params, default, float, "float")


def parse_bool_parameter(key, params, default=None):
    return _parse(key, params, default, bool, "bool")
