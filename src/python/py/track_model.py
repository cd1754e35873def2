"""The `track` a param source, runner or track processor is handed.

Where esrally is installed, esrally's own TrackSpecificationReader reads the rendered track, so
the track's Python sees exactly Rally's objects. Otherwise this module's classes stand in: the
classes of Rally's `esrally/track/track.py` with their constructors, attributes, properties
and methods (OSB's workload model has the same ones under its names), built from the rendered
track with the defaults of Rally's loader.

The spec runner sends: {"name", "spec": the rendered track, "challenge": the raced one,
"params": the track parameters, "documents": {source file name: absolute path},
"bodies": {index or template name: its rendered body}, "test_mode"}.
"""

import collections
import fnmatch
import os
import re
from enum import Enum

# Rally's model, as `esrally.track` (and OSB's `osbenchmark.workload`) export it.
__all__ = [
    "AdminStatus", "Challenge", "ComponentTemplate", "DataStream", "DocumentCorpus", "Documents", "Index",
    "IndexTemplate", "Operation", "OperationType", "Parallel", "Task", "TaskNameFilter", "TaskOpTypeFilter",
    "TaskTagFilter", "Throughput", "Track",
]


def build(req, root, dialect):
    spec = req.get("spec") or {}
    track = None
    if dialect == "rally":
        try:
            track = _with_esrally(req, spec, root)
        except ImportError:
            pass
    if track is None:
        track = _standalone(req, spec, root)
    if req.get("test_mode"):
        # Rally's test mode: the `-1k` files (their paths came with `documents`), 1,000 documents.
        for corpus in track.corpora:
            for d in corpus.documents:
                try:
                    if (d.number_of_documents or 0) > 1000:
                        d.number_of_documents = 1000
                except (AttributeError, TypeError):
                    pass
    return track


def absolute_paths(track, root, data_root):
    """Rally's set_absolute_data_path, for corpora processors added with relative paths: the
    first of the track's directory, `<data_root>/<corpus>` and runner's `<data_root>/<track>`
    that holds the file, else the last (where a processor's prepare writes it)."""
    for corpus in getattr(track, "corpora", []):
        for d in corpus.documents:
            for attr in ("document_file", "document_archive"):
                name = getattr(d, attr, None)
                if not name or os.path.isabs(name):
                    continue
                candidates = [os.path.join(root, name)]
                if data_root:
                    candidates.append(os.path.join(data_root, corpus.name, name))
                    candidates.append(os.path.join(data_root, track.name, name))
                found = next((c for c in candidates if os.path.exists(c)), candidates[-1])
                try:
                    setattr(d, attr, found)
                except AttributeError:
                    pass


def _absolute(track, documents):
    for corpus in getattr(track, "corpora", []):
        for d in corpus.documents:
            for attr in ("document_file", "document_archive"):
                name = getattr(d, attr, None)
                if name and name in documents:
                    setattr(d, attr, documents[name])


def _with_esrally(req, spec, root):
    from esrally.track import loader

    if not hasattr(loader, "TrackSpecificationReader"):
        # runner's stand-in for esrally, not esrally.
        raise ImportError("esrally is not installed")

    reader = loader.TrackSpecificationReader(
        track_params=req.get("params") or {},
        complete_track_params=None,
        selected_challenge=req.get("challenge"),
    )
    entry = "track.json" if os.path.exists(os.path.join(root, "track.json")) else "workload.json"
    track = reader(req.get("name", os.path.basename(root)), spec, root, spec_file=os.path.join(root, entry))
    _absolute(track, req.get("documents") or {})
    return track


# -- Rally's classes ------------------------------------------------------------------------------


class _Named:
    """Equality, hashing and printing by name, as Rally's index-like classes have them."""

    def __str__(self):
        return self.name

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.name)

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return type(self) is type(other) and self.name == other.name


class Index(_Named):
    def __init__(self, name, body=None, types=None):
        self.name = name
        self.body = body
        # Rally dropped mapping types; kept for tracks that still pass them.
        self.types = types or []

    def matches(self, pattern):
        if pattern is None:
            return True
        if pattern in ("_all", "*"):
            return True
        return fnmatch.fnmatch(self.name, pattern)


class DataStream(_Named):
    def __init__(self, name):
        self.name = name

    def matches(self, pattern):
        if pattern is None:
            return True
        if pattern in ("_all", "*"):
            return True
        return fnmatch.fnmatch(self.name, pattern)


class IndexTemplate(_Named):
    def __init__(self, name, pattern, content, delete_matching_indices=False):
        self.name = name
        self.pattern = pattern
        self.content = content
        self.delete_matching_indices = delete_matching_indices


class ComponentTemplate(_Named):
    def __init__(self, name, content):
        self.name = name
        self.content = content


class Documents:
    SOURCE_FORMAT_BULK = "bulk"

    def __init__(self, source_format, document_file=None, document_archive=None, base_url=None,
                 includes_action_and_meta_data=False, number_of_documents=0, compressed_size_in_bytes=0,
                 uncompressed_size_in_bytes=0, target_index=None, target_data_stream=None, target_type=None,
                 meta_data=None):
        self.source_format = source_format
        self.document_file = document_file
        self.document_archive = document_archive
        self.base_url = base_url
        self.includes_action_and_meta_data = includes_action_and_meta_data
        self._number_of_documents = number_of_documents
        self._compressed_size_in_bytes = compressed_size_in_bytes
        self._uncompressed_size_in_bytes = uncompressed_size_in_bytes
        self.target_index = target_index
        self.target_data_stream = target_data_stream
        self.target_type = target_type
        self.meta_data = meta_data or {}

    def has_compressed_corpus(self):
        return self.document_archive is not None

    def has_uncompressed_corpus(self):
        return self.document_file is not None

    # Sizes are numbers or None (Rally's setters coerce what a processor sets).
    @property
    def number_of_documents(self):
        return self._number_of_documents

    @number_of_documents.setter
    def number_of_documents(self, value):
        self._number_of_documents = int(value) if value is not None else None

    @property
    def compressed_size_in_bytes(self):
        return self._compressed_size_in_bytes

    @compressed_size_in_bytes.setter
    def compressed_size_in_bytes(self, value):
        self._compressed_size_in_bytes = int(value) if value is not None else None

    @property
    def uncompressed_size_in_bytes(self):
        return self._uncompressed_size_in_bytes

    @uncompressed_size_in_bytes.setter
    def uncompressed_size_in_bytes(self, value):
        self._uncompressed_size_in_bytes = int(value) if value is not None else None

    @property
    def number_of_lines(self):
        # An action line precedes each document where the file holds them.
        n = self.number_of_documents or 0
        return 2 * n if self.includes_action_and_meta_data else n

    @property
    def is_bulk(self):
        return self.source_format == self.SOURCE_FORMAT_BULK

    def _identity(self):
        return (self.source_format, self.document_file, self.document_archive, self.base_url,
                self.includes_action_and_meta_data, self.number_of_documents, self.target_index,
                self.target_data_stream)

    def __str__(self):
        return "%s documents from %s" % (self.source_format, self.document_file)

    def __repr__(self):
        return "Documents(%r)" % (self.document_file,)

    def __hash__(self):
        return hash(self._identity())

    def __eq__(self, other):
        return isinstance(other, Documents) and self._identity() == other._identity()


class DocumentCorpus(_Named):
    def __init__(self, name, documents=None, meta_data=None):
        self.name = name
        self.documents = documents or []
        self.meta_data = meta_data or {}

    def _sum(self, attr, source_format):
        total = 0
        for d in self.documents:
            if source_format is None or d.source_format == source_format:
                value = getattr(d, attr)
                if value is None:
                    # Rally: a size not known for one file is not known for the corpus.
                    return None
                total += value
        return total

    def number_of_documents(self, source_format):
        return self._sum("number_of_documents", source_format)

    def compressed_size_in_bytes(self, source_format):
        return self._sum("compressed_size_in_bytes", source_format)

    def uncompressed_size_in_bytes(self, source_format):
        return self._sum("uncompressed_size_in_bytes", source_format)

    def filter(self, source_format=None, target_indices=None, target_data_streams=None):
        kept = []
        for d in self.documents:
            if source_format and d.source_format != source_format:
                continue
            if target_indices and d.target_index not in target_indices:
                continue
            if target_data_streams and d.target_data_stream not in target_data_streams:
                continue
            kept.append(d)
        return DocumentCorpus(self.name, kept, self.meta_data)

    def union(self, other):
        if self.name != other.name:
            raise ValueError("Corpora names differ: [%s] and [%s]." % (self.name, other.name))
        if self.meta_data != other.meta_data:
            raise ValueError("Corpora meta-data differ: [%s] and [%s]." % (self.meta_data, other.meta_data))
        if self is other:
            return self
        documents = list(self.documents)
        documents += [d for d in other.documents if d not in documents]
        return DocumentCorpus(self.name, documents, self.meta_data)


class AdminStatus(Enum):
    Yes = 1
    No = 2


class OperationType(Enum):
    """Rally's built-in operation types: (id, whether it is administrative)."""

    IndexStats = (1, False)
    NodeStats = (2, False)
    Search = (3, False)
    Bulk = (4, False)
    RawRequest = (5, False)
    WaitForRecovery = (6, False)
    WaitForSnapshotCreate = (7, False)
    Composite = (8, False)
    SubmitAsyncSearch = (9, False)
    GetAsyncSearch = (10, False)
    DeleteAsyncSearch = (11, False)
    PaginatedSearch = (12, False)
    ScrollSearch = (13, False)
    OpenPointInTime = (14, False)
    ClosePointInTime = (15, False)
    Sql = (16, False)
    FieldCaps = (17, False)
    CompositeAgg = (18, False)
    WaitForCurrentSnapshotsCreate = (19, False)
    Downsample = (20, False)
    Esql = (21, False)
    ForceMerge = (22, True)
    ClusterHealth = (23, True)
    PutPipeline = (24, True)
    Refresh = (25, True)
    CreateIndex = (26, True)
    DeleteIndex = (27, True)
    CreateIndexTemplate = (28, True)
    DeleteIndexTemplate = (29, True)
    ShrinkIndex = (30, True)
    CreateMlDatafeed = (31, True)
    DeleteMlDatafeed = (32, True)
    StartMlDatafeed = (33, True)
    StopMlDatafeed = (34, True)
    CreateMlJob = (35, True)
    DeleteMlJob = (36, True)
    OpenMlJob = (37, True)
    CloseMlJob = (38, True)
    Sleep = (39, True)
    DeleteSnapshotRepository = (40, True)
    CreateSnapshotRepository = (41, True)
    CreateSnapshot = (42, True)
    RestoreSnapshot = (43, True)
    PutSettings = (44, True)
    CreateTransform = (45, True)
    StartTransform = (46, True)
    WaitForTransform = (47, True)
    DeleteTransform = (48, True)
    CreateDataStream = (49, True)
    DeleteDataStream = (50, True)
    CreateComposableTemplate = (51, True)
    DeleteComposableTemplate = (52, True)
    CreateComponentTemplate = (53, True)
    DeleteComponentTemplate = (54, True)
    TransformStats = (55, True)
    CreateIlmPolicy = (56, True)
    DeleteIlmPolicy = (57, True)
    RunUntil = (58, False)
    EsqlProfile = (59, False)
    EnrichPolicy = (60, True)

    def __init__(self, id, admin):
        self.id = id
        self.admin_status = AdminStatus.Yes if admin else AdminStatus.No

    @property
    def admin_op(self):
        return self.admin_status == AdminStatus.Yes

    def to_hyphenated_string(self):
        return re.sub(r"(?<!^)([A-Z])", r"-\1", self.name).lower()

    @classmethod
    def from_hyphenated_string(cls, v):
        for member in cls:
            if member.to_hyphenated_string() == v:
                return member
        raise KeyError(f"No enum value for [{v}]")


def _builtin_type(name):
    try:
        return OperationType.from_hyphenated_string(name)
    except KeyError:
        return None


class Operation:
    def __init__(self, name, operation_type, meta_data=None, params=None, param_source=None):
        if params is None:
            params = {}
        self.name = name
        self.meta_data = meta_data if meta_data else {}
        self.type = operation_type
        self.params = params
        self.param_source = param_source

    @property
    def include_in_reporting(self):
        # Rally: administrative operations are left out of the report unless asked for.
        builtin = _builtin_type(self.type)
        default = not (builtin is not None and builtin.admin_op)
        return self.params.get("include-in-reporting", default)

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, type(self)) and self.name == other.name

    def __str__(self):
        return self.name

    def __repr__(self):
        return "Operation(%r, %r)" % (self.name, self.type)


class TaskNameFilter:
    def __init__(self, name):
        self.name = name

    def matches(self, task):
        return self.name == task.name

    def __str__(self):
        return f"filter for task name [{self.name}]"


class TaskOpTypeFilter:
    def __init__(self, op_type_name):
        self.op_type = op_type_name

    def matches(self, task):
        return self.op_type == task.operation.type

    def __str__(self):
        return f"filter for operation type [{self.op_type}]"


class TaskTagFilter:
    def __init__(self, tag_name):
        self.tag_name = tag_name

    def matches(self, task):
        return self.tag_name in task.tags

    def __str__(self):
        return f"filter for tasks tagged [{self.tag_name}]"


class Task:
    THROUGHPUT_PATTERN = re.compile(r"(?P<value>(\d*\.)?\d+)\s(?P<unit>\w+/s)")
    IGNORE_RESPONSE_ERROR_LEVEL_WHITELIST = ["non-fatal"]

    def __init__(self, name, operation, tags=None, meta_data=None, warmup_iterations=None, iterations=None,
                 warmup_time_period=None, time_period=None, ramp_up_time_period=None, clients=1,
                 completes_parent=False, any_completes_parent=False, schedule=None, params=None):
        self.name = name
        self.operation = operation
        if isinstance(tags, str):
            self.tags = [tags]
        else:
            self.tags = tags or []
        self.meta_data = meta_data or {}
        self.warmup_iterations = warmup_iterations
        self.iterations = iterations
        self.warmup_time_period = warmup_time_period
        self.time_period = time_period
        self.ramp_up_time_period = ramp_up_time_period
        self.clients = clients
        self.completes_parent = completes_parent
        self.any_completes_parent = any_completes_parent
        self.schedule = schedule
        self.params = params if params is not None else {}

    def matches(self, task_filter):
        return task_filter.matches(self)

    @property
    def target_throughput(self):
        """Rally's: `target-throughput` (a number of ops/s, or "N unit/s") or the inverse of
        `target-interval`; None where neither is given."""
        def numeric(v):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"Target throughput [{v}] for task [{self}] must be a number.")
            return v

        target_throughput = self.params.get("target-throughput")
        target_interval = self.params.get("target-interval")
        if target_interval is not None and target_throughput is not None:
            raise ValueError(f"Task [{self}] specifies target-interval [{target_interval}] and "
                             f"target-throughput [{target_throughput}] but only one of them is allowed.")
        if target_interval is not None:
            return Throughput(1.0 / numeric(target_interval), "ops/s")
        if target_throughput is None:
            return None
        if isinstance(target_throughput, str):
            matches = re.match(Task.THROUGHPUT_PATTERN, target_throughput)
            if matches:
                return Throughput(float(matches.group("value")), matches.group("unit"))
            raise ValueError(f"Task [{self}] specifies invalid target throughput [{target_throughput}].")
        return Throughput(numeric(target_throughput), "ops/s")

    @property
    def ignore_response_error_level(self):
        level = self.params.get("ignore-response-error-level")
        if level and level not in Task.IGNORE_RESPONSE_ERROR_LEVEL_WHITELIST:
            raise ValueError(f"Task [{self}] specifies ignore-response-error-level to [{level}] but the only "
                             f"allowed values are [{','.join(Task.IGNORE_RESPONSE_ERROR_LEVEL_WHITELIST)}].")
        return level

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, type(self)) and self.name == other.name

    def __iter__(self):
        return iter([self])

    def __str__(self):
        return self.name

    def __repr__(self):
        return "Task(%r)" % (self.name,)


# Rally's: a value and its unit (`ops/s`, `docs/s`, ...).
Throughput = collections.namedtuple("Throughput", ["value", "unit"])


class Parallel:
    def __init__(self, tasks, clients=None):
        self.tasks = tasks
        self._clients = clients

    @property
    def clients(self):
        # Rally: the block's own `clients`, else the sum of its tasks'.
        if self._clients is not None:
            return self._clients
        return sum(task.clients for task in self.tasks)

    def matches(self, task_filter):
        return any(task.matches(task_filter) for task in self.tasks)

    def remove_task(self, task):
        self.tasks.remove(task)

    def __iter__(self):
        return iter(self.tasks)

    def __str__(self):
        return "%d parallel tasks" % len(self.tasks)

    def __repr__(self):
        return "Parallel(%r)" % (self.tasks,)

    def __eq__(self, other):
        return isinstance(other, type(self)) and self.tasks == other.tasks

    def __hash__(self):
        return hash(tuple(self.tasks))


class Challenge(_Named):
    def __init__(self, name, description=None, user_info=None, default=False, selected=False,
                 auto_generated=False, parameters=None, meta_data=None, schedule=None):
        self.name = name
        self.parameters = parameters if parameters else {}
        self.meta_data = meta_data if meta_data else {}
        self.description = description
        self.user_info = user_info
        self.serverless_info = []
        self.default = default
        self.selected = selected
        self.auto_generated = auto_generated
        self.schedule = schedule if schedule else []

    def prepend_tasks(self, tasks):
        self.schedule = tasks + self.schedule

    def remove_task(self, task):
        self.schedule.remove(task)


class Track:
    def __init__(self, name, description=None, meta_data=None, challenges=None, indices=None, data_streams=None,
                 templates=None, composable_templates=None, component_templates=None, corpora=None,
                 dependencies=None, has_plugins=False, root=None, serverless_info=None):
        self.name = name
        self.meta_data = meta_data if meta_data else {}
        self.description = description if description is not None else ""
        self.challenges = challenges if challenges else []
        self.indices = indices if indices else []
        self.data_streams = data_streams if data_streams else []
        self.corpora = corpora if corpora else []
        self.templates = templates if templates else []
        self.composable_templates = composable_templates if composable_templates else []
        self.component_templates = component_templates if component_templates else []
        self.dependencies = dependencies if dependencies else []
        self.has_plugins = has_plugins
        self.root = root
        self.serverless_info = serverless_info if serverless_info else []

    @property
    def default_challenge(self):
        for challenge in self.challenges:
            if challenge.default:
                return challenge
        return None

    @property
    def selected_challenge(self):
        for challenge in self.challenges:
            if challenge.selected:
                return challenge
        return None

    @property
    def selected_challenge_or_default(self):
        selected = self.selected_challenge
        return selected if selected else self.default_challenge

    def find_challenge_or_default(self, name):
        if name:
            return self.find_challenge(name)
        return self.default_challenge

    def find_challenge(self, name):
        for challenge in self.challenges:
            if challenge.name == name:
                return challenge
        raise LookupError(f"Unknown challenge [{name}] for track [{self.name}]")

    @property
    def number_of_documents(self):
        return self._corpora_sum("number_of_documents")

    @property
    def compressed_size_in_bytes(self):
        return self._corpora_sum("compressed_size_in_bytes")

    @property
    def uncompressed_size_in_bytes(self):
        return self._corpora_sum("uncompressed_size_in_bytes")

    def _corpora_sum(self, attr):
        total = 0
        for corpus in self.corpora:
            value = getattr(corpus, attr)(Documents.SOURCE_FORMAT_BULK)
            if value is None:
                return None
            total += value
        return total

    def index_names(self):
        return [i.name for i in self.indices]

    def data_stream_names(self):
        return [i.name for i in self.data_streams]

    def __str__(self):
        return self.name

    def __repr__(self):
        return "Track(%r)" % (self.name,)

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, type(self)) and self.name == other.name


# -- the rendered track, read with Rally's loader defaults -----------------------------------------


class TrackSyntaxError(ValueError):
    pass


def _operation(spec, declared):
    """Rally's parse_operation for a task's `operation`: a declared name, a built-in type's
    name (an operation of that type and name), or an inline operation."""
    if isinstance(spec, str):
        if spec in declared:
            return declared[spec]
        spec = {"name": spec, "operation-type": spec}
        params = {}
    else:
        params = spec
    name = spec.get("name")
    kind = spec.get("operation-type")
    if kind is None:
        raise TrackSyntaxError(f"an operation ({name or 'inline'}) needs an `operation-type`")
    builtin = _builtin_type(kind)
    kind = builtin.to_hyphenated_string() if builtin is not None else kind
    # Rally's loader writes the reporting default of its own types into the params:
    # administrative ones are left out of the report unless asked for.
    if builtin is not None:
        params.setdefault("include-in-reporting", not builtin.admin_op)
    # Rally: an inline operation is named by its type where no name is given.
    return Operation(name or kind, kind, spec.get("meta"), params, spec.get("param-source"))


def _task(spec, declared, default_clients=1, completed_by=None):
    op = _operation(spec.get("operation"), declared)
    name = spec.get("name", op.name)
    return Task(
        name=name,
        operation=op,
        tags=spec.get("tags"),
        meta_data=spec.get("meta"),
        warmup_iterations=spec.get("warmup-iterations"),
        iterations=spec.get("iterations"),
        warmup_time_period=spec.get("warmup-time-period"),
        time_period=spec.get("time-period"),
        ramp_up_time_period=spec.get("ramp-up-time-period"),
        clients=spec.get("clients", default_clients),
        completes_parent=completed_by is not None and completed_by == name,
        any_completes_parent=completed_by == "any",
        schedule=spec.get("schedule"),
        params=spec,
    )


def _schedule(items, declared):
    out = []
    for item in items or []:
        if "parallel" in item:
            block = item["parallel"]
            completed_by = block.get("completed-by")
            # Rally: a block's `clients` bounds the block; its tasks default to one each.
            tasks = [_task(t, declared, 1, completed_by) for t in block.get("tasks") or []]
            out.append(Parallel(tasks, block.get("clients")))
        else:
            out.append(_task(item, declared))
    return out


def _corpora(spec, indices, data_streams, documents):
    """Rally's _create_corpora: per file its target, defaulting to the track's only index or
    only data stream; none for files holding their own action lines."""
    out = []
    for c in spec.get("corpora") or []:
        c_index = c.get("target-index", indices[0].name if len(indices) == 1 else None)
        c_stream = c.get("target-data-stream", data_streams[0].name if len(data_streams) == 1 else None)
        c_actions = c.get("includes-action-and-meta-data", False)
        docs = []
        for d in c.get("documents") or []:
            source = d.get("source-file")
            archive = None
            name = source
            for ext in (".zst", ".bz2", ".gz", ".zip", ".tgz", ".tar.gz", ".tar.bz2", ".tar"):
                if source and source.endswith(ext):
                    archive, name = source, source[: -len(ext)]
                    break
            actions = d.get("includes-action-and-meta-data", c_actions)
            docs.append(Documents(
                source_format=d.get("source-format", c.get("source-format", Documents.SOURCE_FORMAT_BULK)),
                document_file=documents.get(name, documents.get(source, name)),
                document_archive=documents.get(archive, archive) if archive else None,
                base_url=d.get("base-url", c.get("base-url")),
                includes_action_and_meta_data=actions,
                number_of_documents=d.get("document-count", 0),
                compressed_size_in_bytes=d.get("compressed-bytes"),
                uncompressed_size_in_bytes=d.get("uncompressed-bytes"),
                target_index=None if actions else d.get("target-index", c_index),
                target_data_stream=None if actions else d.get("target-data-stream", c_stream),
                meta_data=d.get("meta"),
            ))
        out.append(DocumentCorpus(c["name"], docs, c.get("meta")))
    return out


def _merged(base, over):
    """Rally's merge_dicts: nested dicts merged key by key, two lists joined as a set (in no
    order, as Rally's), anything else from `over`."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merged(out[k], v)
        elif isinstance(v, list) and isinstance(out.get(k), list):
            try:
                out[k] = list(set(out[k] + v))
            except TypeError:
                # Unhashable items (Rally would fail here): both lists, in order.
                out[k] = out[k] + v
        else:
            out[k] = v
    return out


def _standalone(req, spec, root):
    bodies = req.get("bodies") or {}
    documents = req.get("documents") or {}
    indices = [Index(i["name"], bodies.get(i["name"]), i.get("types")) for i in spec.get("indices") or []]
    data_streams = [DataStream(d["name"]) for d in spec.get("data-streams") or []]

    def templates(key):
        # Rally deletes what a template matched unless told not to.
        return [
            IndexTemplate(t["name"], t.get("index-pattern"), bodies.get(t["name"]), t.get("delete-matching-indices", True))
            for t in spec.get(key) or []
        ]

    components = [ComponentTemplate(t["name"], bodies.get(t["name"])) for t in spec.get("component-templates") or []]
    declared = {}
    for o in spec.get("operations") or []:
        if isinstance(o, dict) and o.get("name"):
            declared[o["name"]] = _operation(o, {})
    challenge_specs = spec.get("challenges") or spec.get("test_procedures") or []
    if not challenge_specs:
        single = spec.get("challenge") or spec.get("test_procedure")
        if single:
            challenge_specs = [dict(single, default=True)]
        elif spec.get("schedule"):
            # Rally's auto-generated challenge of a track with a top-level schedule.
            challenge_specs = [{"name": "default", "default": True, "auto-generated": True, "schedule": spec["schedule"]}]
    wanted = req.get("challenge")
    challenges = []
    for c in challenge_specs:
        challenges.append(Challenge(
            name=c.get("name", "default"),
            description=c.get("description"),
            user_info=c.get("user-info"),
            # Rally keeps `default` as written (None where absent); a track's only challenge
            # is its default and the one raced, whatever was asked.
            default=True if len(challenge_specs) == 1 else c.get("default"),
            selected=(wanted is not None and c.get("name") == wanted) or len(challenge_specs) == 1,
            auto_generated=bool(c.get("auto-generated", False)),
            # Rally: the track's `parameters` merged with the challenge's (the challenge's win).
            parameters=_merged(spec.get("parameters") or {}, c.get("parameters") or {}),
            meta_data=c.get("meta"),
            schedule=_schedule(c.get("schedule"), declared),
        ))
    return Track(
        name=req.get("name", os.path.basename(os.path.normpath(root)) if root else "track"),
        description=spec.get("description", ""),
        meta_data=spec.get("meta"),
        challenges=challenges,
        indices=indices,
        data_streams=data_streams,
        templates=templates("templates"),
        composable_templates=templates("composable-templates"),
        component_templates=components,
        corpora=_corpora(spec, indices, data_streams, documents),
        dependencies=spec.get("dependencies"),
        has_plugins=False,
        root=root,
    )
