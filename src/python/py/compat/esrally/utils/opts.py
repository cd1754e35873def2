"""esrally.utils.opts: Rally's parsing of `k:v,k2:v2` options, JSON text or a JSON file."""
import json
import os


def csv_to_list(csv):
    if csv is None:
        return None
    if isinstance(csv, list):
        return csv
    if len(csv.strip()) == 0:
        return []
    return [e.strip() for e in csv.split(",")]


def to_bool(v):
    if v in ("True", "true", "Yes", "yes", "t", "y", "1", True):
        return True
    if v in ("False", "false", "No", "no", "f", "n", "0", False):
        return False
    raise ValueError("Could not convert value '%s'" % v)


def to_none(v):
    if v in ("None", "none", "Null", "null", "Nil", "nil", None):
        return None
    raise ValueError("Could not convert value '%s'" % v)


def kv_to_map(kvs):
    def convert(v):
        # A quoted value stays a string; else the first of int, float, bool, None that fits.
        if v.startswith("'"):
            return v[1:-1]
        for parse in (int, float, to_bool, to_none):
            try:
                return parse(v)
            except ValueError:
                pass
        return v

    result = {}
    for kv in kvs:
        k, v = kv.split(":")
        result[k.strip()] = convert(v.strip())
    return result


def to_dict(arg, default_parser=kv_to_map):
    if os.path.splitext(arg)[1] == ".json":
        with open(os.path.normpath(os.path.expanduser(arg)), encoding="utf-8") as f:
            return json.load(f)
    try:
        return json.loads(arg)
    except json.decoder.JSONDecodeError:
        return default_parser(csv_to_list(arg))
