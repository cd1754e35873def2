"""The `track` a param source is constructed with.

Where esrally is installed, esrally's own TrackSpecificationReader reads the rendered track, so
a param source sees exactly Rally's objects. Otherwise this module's classes stand in, with
Rally's attribute names: name, description, meta_data, indices (name, body, types),
data_streams, templates, composable_templates, component_templates, corpora (name, documents,
meta_data; documents with Rally's fields), challenges and selected_challenge_or_default.

The spec runner sends: {"name", "spec": the rendered track, "challenge": the raced one,
"params": the track parameters, "documents": {source file name: absolute path},
"bodies": {index or template name: its rendered body}}.
"""

import os


def build(req, root, dialect):
    spec = req.get("spec") or {}
    track = None
    if dialect == "rally":
        try:
            track = _with_esrally(req, spec, root)
        except ImportError:
            pass
    if track is None:
        track = _standalone(req, spec)
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


class Index:
    def __init__(self, name, body=None, types=None):
        self.name = name
        self.body = body
        self.types = types or []

    def matches(self, pattern):
        import fnmatch

        return pattern in (None, "_all", "*") or fnmatch.fnmatch(self.name, pattern)

    def __str__(self):
        return self.name


class DataStream:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


class IndexTemplate:
    def __init__(self, name, pattern, content, delete_matching_indices=False):
        self.name = name
        self.pattern = pattern
        self.content = content
        self.delete_matching_indices = delete_matching_indices


class ComponentTemplate:
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
        self.number_of_documents = number_of_documents
        self.compressed_size_in_bytes = compressed_size_in_bytes
        self.uncompressed_size_in_bytes = uncompressed_size_in_bytes
        self.target_index = target_index
        self.target_data_stream = target_data_stream
        self.target_type = target_type
        self.meta_data = meta_data or {}

    @property
    def is_bulk(self):
        return self.source_format == self.SOURCE_FORMAT_BULK


class DocumentCorpus:
    def __init__(self, name, documents=None, meta_data=None):
        self.name = name
        self.documents = documents or []
        self.meta_data = meta_data or {}

    def number_of_documents(self, source_format):
        return sum(d.number_of_documents for d in self.documents if d.source_format == source_format)

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


class Operation:
    def __init__(self, name, operation_type, params=None, param_source=None):
        self.name = name
        self.type = operation_type
        self.params = params or {}
        self.param_source = param_source


class Task:
    def __init__(self, spec, operations):
        op = spec.get("operation")
        if isinstance(op, str):
            op = operations.get(op) or {"name": op, "operation-type": op}
        op = op or {}
        params = {k: v for k, v in op.items() if k not in ("name", "operation-type", "param-source")}
        self.operation = Operation(op.get("name"), op.get("operation-type"), params, op.get("param-source"))
        self.name = spec.get("name") or self.operation.name
        self.clients = spec.get("clients", 1)
        self.iterations = spec.get("iterations")
        self.warmup_iterations = spec.get("warmup-iterations")
        self.time_period = spec.get("time-period")
        self.warmup_time_period = spec.get("warmup-time-period")
        # Rally's: the task as written.
        self.params = spec
        self.tags = spec.get("tags") or []
        self.meta_data = spec.get("meta") or {}

    def __iter__(self):
        return iter([self])


class Parallel:
    def __init__(self, tasks, clients=None):
        self.tasks = tasks
        self.clients = clients

    def __iter__(self):
        return iter(self.tasks)


class Challenge:
    def __init__(self, spec, operations):
        self.name = spec.get("name", "default")
        self.description = spec.get("description", "")
        self.default = bool(spec.get("default", False))
        self.parameters = spec.get("parameters") or {}
        self.meta_data = spec.get("meta") or {}
        self.selected = False
        self.schedule = []
        for item in spec.get("schedule") or []:
            if "parallel" in item:
                tasks = [Task(t, operations) for t in item["parallel"].get("tasks", [])]
                self.schedule.append(Parallel(tasks, item["parallel"].get("clients")))
            else:
                self.schedule.append(Task(item, operations))


class Track:
    def __init__(self, name, description="", meta_data=None, challenges=None, indices=None, data_streams=None,
                 templates=None, composable_templates=None, component_templates=None, corpora=None):
        self.name = name
        self.description = description
        self.meta_data = meta_data or {}
        self.challenges = challenges or []
        self.indices = indices or []
        self.data_streams = data_streams or []
        self.templates = templates or []
        self.composable_templates = composable_templates or []
        self.component_templates = component_templates or []
        self.corpora = corpora or []
        self.dependencies = []
        self.has_plugins = True
        self.root = None

    @property
    def default_challenge(self):
        for c in self.challenges:
            if c.default:
                return c
        return self.challenges[0] if len(self.challenges) == 1 else None

    @property
    def selected_challenge(self):
        for c in self.challenges:
            if c.selected:
                return c
        return None

    @property
    def selected_challenge_or_default(self):
        return self.selected_challenge or self.default_challenge

    def find_challenge_or_default(self, name):
        if not name:
            return self.default_challenge
        for c in self.challenges:
            if c.name == name:
                return c
        raise LookupError(f"Unknown challenge [{name}] for track [{self.name}]")

    @property
    def number_of_documents(self):
        return sum(c.number_of_documents(Documents.SOURCE_FORMAT_BULK) for c in self.corpora)


def _standalone(req, spec):
    bodies = req.get("bodies") or {}
    documents = req.get("documents") or {}
    indices = [Index(i["name"], bodies.get(i["name"]), i.get("types")) for i in spec.get("indices") or []]
    data_streams = [DataStream(d["name"]) for d in spec.get("data-streams") or []]
    templates = [
        IndexTemplate(t["name"], t.get("index-pattern"), bodies.get(t["name"]), t.get("delete-matching-indices", False))
        for t in spec.get("templates") or []
    ]
    composable = [
        IndexTemplate(t["name"], t.get("index-pattern"), bodies.get(t["name"]), t.get("delete-matching-indices", False))
        for t in spec.get("composable-templates") or []
    ]
    components = [ComponentTemplate(t["name"], bodies.get(t["name"])) for t in spec.get("component-templates") or []]
    corpora = []
    for c in spec.get("corpora") or []:
        docs = []
        for d in c.get("documents") or []:
            source = d.get("source-file")
            default_index = indices[0].name if len(indices) == 1 else None
            docs.append(Documents(
                source_format=d.get("source-format", c.get("source-format", "bulk")),
                document_file=documents.get(source, source),
                base_url=d.get("base-url", c.get("base-url")),
                includes_action_and_meta_data=d.get("includes-action-and-meta-data", c.get("includes-action-and-meta-data", False)),
                number_of_documents=d.get("document-count", 0),
                compressed_size_in_bytes=d.get("compressed-bytes", 0),
                uncompressed_size_in_bytes=d.get("uncompressed-bytes", 0),
                target_index=d.get("target-index", c.get("target-index", default_index)),
                target_data_stream=d.get("target-data-stream", c.get("target-data-stream")),
                target_type=d.get("target-type", c.get("target-type")),
                meta_data=d.get("meta"),
            ))
        corpora.append(DocumentCorpus(c["name"], docs, c.get("meta")))
    operations = {o.get("name"): o for o in spec.get("operations") or [] if isinstance(o, dict)}
    challenge_specs = spec.get("challenges") or spec.get("test_procedures") or []
    if not challenge_specs:
        single = spec.get("challenge") or spec.get("test_procedure")
        if single:
            challenge_specs = [single]
        elif spec.get("schedule"):
            challenge_specs = [{"name": "default", "default": True, "schedule": spec["schedule"]}]
    challenges = [Challenge(c, operations) for c in challenge_specs]
    wanted = req.get("challenge")
    for c in challenges:
        c.selected = wanted is not None and c.name == wanted
    return Track(
        req.get("name", "track"),
        spec.get("description", ""),
        spec.get("meta"),
        challenges,
        indices,
        data_streams,
        templates,
        composable,
        components,
        corpora,
    )
