"""Rally's params module as tracks use it (OSB's `workload.params` is the same): the base
`ParamSource`, `Slice`, `IndexIdConflict`, and the built-in param sources tracks build on: the
template sources (elastic/logs and its kin subclass them) and the bulk source (a track's source
may draw from it). Others answer an import and, built, say that runner draws them itself."""

import json
import logging
from enum import Enum

from standin import errors


class ParamSource:
    def __init__(self, track, params, **kwargs):
        self.track = track
        self._params = params
        self.kwargs = kwargs

    def partition(self, partition_index, total_partitions):
        return self

    @property
    def infinite(self):
        # Rally's: a source without a size runs forever.
        return self.size() is None

    def size(self):
        return None

    def params(self):
        return self._params

    def _client_params(self):
        return {
            "request-timeout": self._params.get("request-timeout"),
            "headers": self._params.get("headers"),
            "opaque-id": self._params.get("opaque-id"),
        }


class DelegatingParamSource(ParamSource):
    def __init__(self, track, params, delegate, **kwargs):
        super().__init__(track, params, **kwargs)
        self.delegate = delegate

    def params(self):
        return self.delegate(self.track, self._params, **self.kwargs)


class IndexIdConflict(Enum):
    """Rally's id conflicts of a bulk (its `conflicts` param)."""

    NoConflicts = 0
    SequentialConflicts = 1
    RandomConflicts = 2


class Slice:
    """`number_of_lines` lines of a file from line `offset`, handed out `bulk_size` at a time
    (Rally's reader of a client's share of a corpus file)."""

    def __init__(self, source_class, offset, number_of_lines):
        self.source_class = source_class
        self.source = None
        self.offset = offset
        self.number_of_lines = number_of_lines
        self.current_line = 0
        self.bulk_size = None
        self.logger = logging.getLogger(__name__)

    def open(self, file_name, mode, bulk_size):
        self.bulk_size = bulk_size
        self.source = self.source_class(file_name, mode).open()
        for _ in range(self.offset):
            if not self.source.readline():
                break
        return self

    def close(self):
        self.source.close()
        self.source = None

    def __iter__(self):
        return self

    def __next__(self):
        if self.current_line >= self.number_of_lines:
            raise StopIteration()
        lines = self.source.readlines(min(self.bulk_size, self.number_of_lines - self.current_line))
        self.current_line += len(lines)
        if not lines:
            raise StopIteration()
        return lines

    def __str__(self):
        return "%s[%d;%d]" % (self.source, self.offset, self.offset + self.number_of_lines)


class _TemplateSource(ParamSource):
    """Rally's create-(composable|component)-template source: the operation's `template` and
    `body`, else the track's declared templates (those matching `template` when given), with
    the operation's `settings` merged into each template's settings."""

    templates_key = None

    def __init__(self, track, params, **kwargs):
        super().__init__(track, params, **kwargs)
        self.request_params = params.get("request-params", {})
        self.template_definitions = []
        declared = getattr(track, self.templates_key, None) if track is not None else None
        if "template" in params and "body" in params:
            self.template_definitions.append((params["template"], params["body"]))
        elif declared:
            wanted = params.get("template")
            for template in declared:
                if wanted and template.name != wanted:
                    continue
                body = template.content
                settings = params.get("settings")
                if settings and body is not None:
                    target = body.setdefault("template", {}).setdefault("settings", {})
                    target.update(settings)
                self.template_definitions.append((template.name, body))
        else:
            raise errors.InvalidSyntax(
                "Please set the properties 'template' and 'body' for the "
                f"{params.get('operation-type')} operation or declare composable and/or component "
                "templates in the track"
            )

    def params(self):
        return {"templates": self.template_definitions, "request-params": self.request_params}


class CreateComposableTemplateParamSource(_TemplateSource):
    templates_key = "composable_templates"


class CreateComponentTemplateParamSource(_TemplateSource):
    templates_key = "component_templates"


class CreateIndexTemplateParamSource(_TemplateSource):
    templates_key = "templates"


def _bounds(total, client, clients):
    """Client `client`'s share of `total` lines: (offset, count), the remainder to the last."""
    per_client = total // clients
    offset = client * per_client
    count = per_client if client < clients - 1 else total - offset
    return offset, count


class BulkIndexParamSource(ParamSource):
    """Rally's bulk source over the track's corpora: `bulk-size` documents a request, each
    client reading its own share of every file (`corpora`, `indices` and `data-streams` filter
    the files, as in Rally). Ids of its own (`conflicts`) are not drawn here: runner's native
    bulk draws them."""

    def __init__(self, track, params, **kwargs):
        super().__init__(track, params, **kwargs)
        if params.get("conflicts"):
            raise errors.InvalidSyntax(
                "runner's stand-in for esrally draws no id conflicts in Python; let runner run the bulk itself, or install esrally"
            )
        try:
            self.bulk_size = int(params["bulk-size"])
        except KeyError:
            raise errors.InvalidSyntax("Mandatory parameter 'bulk-size' is missing") from None
        except (TypeError, ValueError):
            raise errors.InvalidSyntax("'bulk-size' must be numeric") from None
        if self.bulk_size <= 0:
            raise errors.InvalidSyntax("'bulk-size' must be positive but was %d" % self.bulk_size)
        wanted = params.get("corpora")
        if isinstance(wanted, str):
            wanted = [wanted]
        indices = params.get("indices")
        streams = params.get("data-streams")
        self.files = []
        for corpus in getattr(track, "corpora", []):
            if wanted and corpus.name not in wanted:
                continue
            for d in corpus.documents:
                if indices and d.target_index not in indices:
                    continue
                if streams and d.target_data_stream not in streams:
                    continue
                self.files.append(d)
        if not self.files:
            raise errors.RallyAssertionError("The provided corpus does not contain any documents.")
        self.pipeline = params.get("pipeline")
        self.partition_index = 0
        self.total_partitions = 1
        self._batches = None

    def partition(self, partition_index, total_partitions):
        part = BulkIndexParamSource.__new__(BulkIndexParamSource)
        part.__dict__.update(self.__dict__)
        part.partition_index = partition_index
        part.total_partitions = total_partitions
        part._batches = None
        return part

    def size(self):
        total = 0
        for d in self.files:
            _, count = _bounds(d.number_of_documents or 0, self.partition_index, self.total_partitions)
            total += -(-count // self.bulk_size)
        return total

    def _generate(self):
        for d in self.files:
            per_doc = 2 if d.includes_action_and_meta_data else 1
            offset, count = _bounds(d.number_of_documents or 0, self.partition_index, self.total_partitions)
            with open(d.document_file, "rb") as f:
                for _ in range(offset * per_doc):
                    f.readline()
                left = count
                while left > 0:
                    n = min(self.bulk_size, left)
                    lines = []
                    for _ in range(n * per_doc):
                        line = f.readline()
                        if not line:
                            break
                        lines.append(line.decode("utf-8").rstrip("\n"))
                    if not lines:
                        return
                    if not d.includes_action_and_meta_data:
                        if d.target_data_stream:
                            action = json.dumps({"create": {"_index": d.target_data_stream}})
                        else:
                            action = json.dumps({"index": {"_index": d.target_index}})
                        lines = [x for line in lines for x in (action, line)]
                    left -= n
                    drawn = {
                        "action-metadata-present": True,
                        "body": "\n".join(lines) + "\n",
                        "bulk-size": len(lines) // 2,
                        "unit": "docs",
                        "index": d.target_index or d.target_data_stream,
                    }
                    if self.pipeline:
                        drawn["pipeline"] = self.pipeline
                    yield drawn

    def params(self):
        if self._batches is None:
            self._batches = self._generate()
        try:
            return next(self._batches)
        except StopIteration:
            raise StopIteration() from None


def _named_only(class_name):
    class NamedOnly(ParamSource):
        def __init__(self, track, params, **kwargs):
            raise errors.RallyError(
                f"runner's stand-in for esrally has Rally's `{class_name}` by name only (runner draws its "
                f"operation's params itself); a track's source built on it needs esrally installed "
                f"(pip install esrally==2.13.0)"
            )

    NamedOnly.__name__ = NamedOnly.__qualname__ = class_name
    return NamedOnly


# Rally's and OSB's other built-in sources: importable, not drawn here.
NAMED_ONLY = [
    "SleepParamSource", "CreateIndexParamSource", "CreateDataStreamParamSource", "DeleteDataStreamParamSource",
    "DeleteIndexParamSource", "DeleteTemplateParamSource", "DeleteIndexTemplateParamSource",
    "DeleteComposableTemplateParamSource", "DeleteComponentTemplateParamSource", "SearchParamSource",
    "PartitionBulkIndexParamSource", "OpenPointInTimeParamSource", "ClosePointInTimeParamSource",
    "ForceMergeParamSource", "DownsampleParamSource",
    # OSB's own.
    "VectorSearchParamSource", "VectorDataSetPartitionParamSource", "VectorSearchPartitionParamSource",
    "BulkVectorsFromDataSetParamSource",
]
for _name in NAMED_ONLY:
    globals()[_name] = _named_only(_name)

_BY_NAME = {"file-reader": BulkIndexParamSource}


def register_param_source_for_name(name, param_source_class):
    _BY_NAME[name] = param_source_class


def param_source_for_name(name, track, params):
    try:
        cls = _BY_NAME[name]
    except KeyError:
        raise errors.RallyError(f"no param source named [{name}] is registered") from None
    return cls(track, params)

