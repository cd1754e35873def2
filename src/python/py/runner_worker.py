"""runner's Python worker.

It loads a Rally track's `track.py` (an OpenSearch Benchmark workload's `workload.py`) as
Rally's ComponentLoader does, calls its `register(registry)`, and then serves what was
registered to runner: param sources (drawn ahead, in batches) and custom runners (called with
the official client, timed as Rally times them).

Protocol: frames on the standard input and on the original standard output, each a 4-byte
big-endian length and that many bytes of JSON. Every request carries `rid`; its reply echoes
it. A reply carrying drawn params is a JSON head, a newline, then the params' bytes: the head's
`items` gives, for each params dict, the length of its JSON without its `body`, that body's
length (null: none) and its kind (0: JSON, 1: text), laid end to end. A body is sent as the
bytes Python encoded, never decoded and encoded again on the way to the request. What the track prints goes to the standard error,
which runner shows.
"""

import asyncio
import hashlib
import importlib.util
import inspect
import json
import os
import random
import signal
import struct
import sys
import time
import traceback

MAX_FRAME = 256 << 20
# A batch of draws stops growing past this many bytes of JSON.
BATCH_BYTES = 4 << 20


class Registry:
    """What `register(registry)` is given: Rally's and OSB's method names."""

    def __init__(self, dialect):
        self.dialect = dialect
        self.param_sources = {}
        self.runners = {}
        self.schedulers = {}
        self.track_processors = []
        self.standard_value_sources = {}

    def register_param_source(self, name, param_source):
        if not inspect.isfunction(param_source) and not inspect.isclass(param_source):
            raise TypeError(f"Parameter source [{param_source}] must be either a function or a class.")
        self.param_sources[name] = param_source

    def register_runner(self, name, runner, **kwargs):
        if not kwargs.get("async_runner", False):
            raise TypeError(
                f"Runner [{runner}] must be implemented as async runner and registered with async_runner=True."
            )
        self.runners[name] = runner
        # Also where esrally's (or the stand-in's) `runner_for` finds it: a track's runner may
        # look up another (elastic/logs' multi-cluster wrapper does).
        try:
            from esrally.driver import runner as rally

            rally.register_runner(name, runner, **kwargs)
        except Exception:
            pass

    def register_scheduler(self, name, scheduler):
        self.schedulers[name] = scheduler

    def register_track_processor(self, processor):
        self.track_processors.append(processor)

    # OpenSearch Benchmark's names.
    def register_workload_processor(self, processor):
        self.track_processors.append(processor)

    def register_standard_value_source(self, op_name, field_name, source):
        self.standard_value_sources[(op_name, field_name)] = source

    @property
    def meta_data(self):
        return {"rally_version": "2.13.0", "async_runner": True}


def load_component(root, entry):
    """Rally's ComponentLoader: every module below `root` (directories starting with `_`
    skipped) is executed as `<dir name>.<relative path>`, the parent of `root` is on sys.path,
    and `<dir name>.<entry>` is the root module."""
    component = os.path.basename(os.path.normpath(root))
    sys.path.insert(0, os.path.abspath(os.path.join(root, os.pardir)))
    root_module = None
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("_"))
        for filename in sorted(files):
            name, ext = os.path.splitext(filename)
            if ext != ".py":
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            module_name = "%s.%s" % (component, rel.replace(os.sep, "."))
            spec = importlib.util.spec_from_file_location(module_name, os.path.join(dirpath, filename))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            if rel == entry:
                root_module = module
    if root_module is None:
        raise RuntimeError(f"no {entry}.py in {root}")
    return root_module


def where_it_failed(tb, root):
    """The innermost frame of the traceback in the track's own files, else the innermost."""
    frames = traceback.extract_tb(tb)
    root = os.path.abspath(root)
    parent = os.path.dirname(root)
    own = [f for f in frames if os.path.abspath(f.filename).startswith(parent)]
    frame = (own or frames or [None])[-1]
    if frame is None:
        return None
    return {"file": frame.filename, "line": frame.lineno}


def error_reply(e, root=None):
    reply = {"ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc(limit=20)[-4000:]}
    if isinstance(e, ModuleNotFoundError) and e.name:
        reply["missing"] = e.name.split(".")[0]
    elif isinstance(e, ImportError) and (e.name or "").split(".")[0] in ("esrally", "osbenchmark"):
        # A name the package lacks here: where it is runner's stand-in, the track needs the
        # package itself.
        package = e.name.split(".")[0]
        reply["missing"] = package
        module = sys.modules.get(package)
        if "compat" in (getattr(module, "__file__", None) or ""):
            reply["error"] += (
                f" (runner's stand-in for {package} has every name the public Rally and OSB catalogues import, "
                "not this one)"
            )
    if isinstance(e, SyntaxError) and e.filename:
        reply["at"] = {"file": e.filename, "line": e.lineno}
    elif root is not None:
        reply["at"] = where_it_failed(e.__traceback__, root)
    return reply


class Delegating:
    """Rally's DelegatingParamSource: a function registered as a param source."""

    def __init__(self, track, params, delegate):
        self.track = track
        self._params = params
        self.delegate = delegate
        self.infinite = True

    def partition(self, partition_index, total_partitions):
        return self

    def params(self):
        return self.delegate(self.track, self._params)


def derived_state(base, client):
    """Client 0 draws from the state the source left after its construction (as a race of one
    client in Rally would); client i from a state derived from it, so that a source that seeds
    `random` gives every client the same draws on each run."""
    if client == 0:
        return base
    digest = hashlib.sha256(repr(base).encode() + b":%d" % client).digest()
    return random.Random(digest).getstate()


class Source:
    def __init__(self, factory, track, params, clients, total, scheduler=None):
        self.instance = factory(track, params)
        base = random.getstate()
        self.parts = {}
        self.states = {}
        # A task paced by the track's scheduler: one per client, Rally's `next_scheduled`.
        self.schedulers = {}
        self.scheduled = {}
        # A runner's next params, drawn here and kept for its call (they never leave Python).
        self.pending = {}
        for client in clients:
            random.setstate(base)
            self.parts[client] = self.instance.partition(client, total)
            if scheduler is not None:
                sched = scheduler()
                if hasattr(sched, "parameter_source"):
                    sched.parameter_source = self.parts[client]
                self.schedulers[client] = sched
                self.scheduled[client] = 0
            self.states[client] = derived_state(random.getstate(), client)

    def params_for_runner(self, client):
        """The params of a runner's call: those a step kept, else drawn now; None when the
        source has ended."""
        if client in self.pending:
            return self.pending.pop(client)
        random.setstate(self.states[client])
        try:
            p = self.parts[client].params()
        except StopIteration:
            return None
        finally:
            self.states[client] = random.getstate()
        if not isinstance(p, dict):
            raise TypeError(f"params() returned {type(p).__name__}, not a dict: {str(p)[:200]}")
        return p

    def step(self, client, feedback, keep=False):
        """Rally's ScheduleHandle, one call at a time: the last call's feedback to the
        scheduler, then its next point in time, then the params (kept here for a runner)."""
        sched = self.schedulers[client]
        random.setstate(self.states[client])
        try:
            if feedback:
                if hasattr(sched, "before_request"):
                    sched.before_request(feedback["before"])
                if hasattr(sched, "after_request"):
                    meta = feedback.get("meta") or {"success": True}
                    sched.after_request(feedback["after"], feedback["weight"], feedback["unit"], meta)
            self.scheduled[client] = sched.next(self.scheduled[client])
            try:
                p = self.parts[client].params()
            except StopIteration:
                return None, None
            if not isinstance(p, dict):
                raise TypeError(f"params() returned {type(p).__name__}, not a dict: {str(p)[:200]}")
            if keep:
                self.pending[client] = p
                return float(self.scheduled[client]), ""
            return float(self.scheduled[client]), encode_params(p)
        finally:
            self.states[client] = random.getstate()

    def describe(self, client):
        part = self.parts[client]
        size = None
        if hasattr(part, "size"):
            try:
                size = part.size()
            except Exception:
                size = None
        return {"infinite": bool(getattr(part, "infinite", True)), "size": size if isinstance(size, int) else None}

    def draw(self, client, n, check=False):
        """Up to n params, as encoded items (`encode_params`); with `check`, drawn and checked
        but not encoded (a runner's params may hold what JSON cannot carry: they stay in
        Python)."""
        part = self.parts[client]
        random.setstate(self.states[client])
        out = []
        size = 0
        ended = False
        try:
            while len(out) < n and size < BATCH_BYTES:
                try:
                    p = part.params()
                except StopIteration:
                    ended = True
                    break
                if not isinstance(p, dict):
                    raise TypeError(f"params() returned {type(p).__name__}, not a dict: {str(p)[:200]}")
                item = (b"{}", None, 0) if check else encode_params(p)
                size += len(item[0]) + len(item[1] or b"")
                out.append(item)
        finally:
            self.states[client] = random.getstate()
        return out, ended


def encode(value):
    def fallback(o):
        if isinstance(o, (set, frozenset, tuple)):
            return list(o)
        if hasattr(o, "isoformat"):
            return o.isoformat()
        raise TypeError(f"a {type(o).__name__} ({str(o)[:100]}) cannot be sent as JSON")

    return json.dumps(value, default=fallback, separators=(",", ":"))


TEXT_BODY = 1


def encode_params(p):
    """A params dict as bytes: (its JSON without its `body`, that body, how it is sent). A dict
    body goes as its JSON (a search body can hold tens of thousands of terms: encoded once,
    here, it reaches the request as these bytes); a text or bytes body (a bulk's NDJSON) as
    its UTF-8, never escaped into a JSON string; any other body stays in the params."""
    body = p.get("body")
    if isinstance(body, dict):
        return encode_rest(p), encode(body).encode(), 0
    if isinstance(body, str):
        return encode_rest(p), body.encode("utf-8"), TEXT_BODY
    if isinstance(body, (bytes, bytearray, memoryview)):
        return encode_rest(p), bytes(body), TEXT_BODY
    return encode(p).encode(), None, 0


def encode_rest(p):
    return encode({k: v for k, v in p.items() if k != "body"}).encode()


class Worker:
    def __init__(self, out):
        self.out = out
        self.registry = None
        self.track = None
        self.root = None
        self.sources = {}
        self.es = None
        self.client_spec = None
        self.index = 0
        self.request_context = None

    def send(self, obj):
        data = encode(obj).encode()
        if len(data) > MAX_FRAME:
            data = encode({"rid": obj.get("rid"), "ok": False, "error": f"a reply of {len(data)} bytes is over the {MAX_FRAME}-byte limit"}).encode()
        self.write(struct.pack(">I", len(data)) + data)

    def write(self, frame):
        # An unbuffered pipe may take part of a large frame (a signal mid-write): the rest follows.
        view = memoryview(frame)
        while view:
            view = view[self.out.write(view):]

    def send_items(self, rid, head, items):
        """A reply of drawn params: its head, a newline, then each item's bytes end to end."""
        lengths = [[len(rest), None if body is None else len(body), kind] for rest, body, kind in items]
        top = ('{"rid":%d,"ok":true,%s,"items":%s}\n' % (rid, head, json.dumps(lengths, separators=(",", ":")))).encode()
        parts = [top]
        for rest, body, _ in items:
            parts.append(rest)
            if body is not None:
                parts.append(body)
        size = sum(len(x) for x in parts)
        if size > MAX_FRAME:
            self.send({"rid": rid, "ok": False, "error": f"a reply of {size} bytes is over the {MAX_FRAME}-byte limit"})
            return
        # One copy of the params, into the frame.
        self.write(b"".join([struct.pack(">I", size)] + parts))

    # -- requests ---------------------------------------------------------------------------

    def load(self, req):
        import track_model

        self.root = req["dir"]
        self.client_spec = req.get("client")
        self.index = int(req.get("worker", 0))
        dialect = req.get("dialect", "rally")
        self.registry = Registry(dialect)
        # As Rally's driver does before it loads a track: its own runners are found by type.
        try:
            from esrally.driver import runner as rally

            if hasattr(rally, "register_default_runners"):
                rally.register_default_runners()
        except Exception:
            pass
        module = load_component(self.root, req.get("entry", "track"))
        if not hasattr(module, "register"):
            raise RuntimeError(f"{req.get('entry', 'track')}.py defines no register(registry)")
        module.register(self.registry)
        self.track = track_model.build(req.get("track") or {}, self.root, dialect)
        # Rally hands processors what they ask for; runner downloads and decompresses corpora
        # itself, so they get no downloader or decompressor (as in Rally's unit tests).
        for processor in self.registry.track_processors:
            for attr in ("cfg", "downloader", "decompressor"):
                if hasattr(processor, attr):
                    setattr(processor, attr, None)
            processor.on_after_load_track(self.track)
        track_model.absolute_paths(self.track, self.root, req.get("data_root"))
        # The installed package's version (esrally's, or OSB's for a workload); None where
        # runner's stand-in serves (it has no `version` module).
        esrally_version = None
        try:
            package = importlib.import_module("osbenchmark.version" if dialect == "osb" else "esrally.version")
            esrally_version = getattr(package, "__version__", None) or package.release_version()
        except Exception:
            pass
        return {
            "python": ".".join(map(str, sys.version_info[:3])),
            "esrally": esrally_version,
            "param_sources": sorted(self.registry.param_sources),
            "runners": sorted(self.registry.runners),
            "schedulers": sorted(self.registry.schedulers),
            "track_processors": [type(p).__name__ for p in self.registry.track_processors],
        }

    def prepare(self, req):
        """Rally's on_prepare_track: each processor's jobs, this worker's share of them (job i
        runs in worker i % count), before the race starts."""
        ran = 0
        index, count = int(req.get("index", 0)), max(1, int(req.get("count", 1)))
        job = 0
        for processor in self.registry.track_processors:
            if prepares_corpora_only(processor):
                # Rally's DefaultTrackPreparator downloads and unpacks the corpora: runner
                # did that before the race.
                continue
            for fn, kwargs in processor.on_prepare_track(self.track, req["data_root"]) or []:
                if job % count == index:
                    fn(**kwargs)
                    ran += 1
                job += 1
        return {"jobs": ran}

    def check_client(self, req):
        """Whether the client custom runners need imports: the module named, else nothing."""
        kind = req.get("kind", "elasticsearch")
        # The async clients need aiohttp besides the client itself.
        modules = ["opensearchpy", "aiohttp"] if kind == "opensearch" else ["elasticsearch", "aiohttp"]
        for module in modules:
            try:
                importlib.import_module(module)
            except ImportError as e:
                return {"missing": module, "error": str(e)}
        return {"missing": None}

    def source(self, req):
        name = req["name"]
        factory = self.registry.param_sources.get(name)
        if factory is None:
            raise KeyError(f"no param source `{name}` is registered")
        if inspect.isfunction(factory):
            fn = factory
            factory = lambda track, params: Delegating(track, params, fn)  # noqa: E731
        clients = req["clients"]
        scheduler = None
        if req.get("scheduler"):
            import schedulers

            scheduler = schedulers.factory(self.registry, req["scheduler"], self.track, req.get("task") or {})
        src = Source(factory, self.track, req.get("params") or {}, clients, req["total"], scheduler)
        self.sources[req["sid"]] = src
        return {"clients": [src.describe(c) for c in clients]}

    def step(self, req):
        return self.sources[req["sid"]].step(req["client"], req.get("feedback"), req.get("keep", False))

    def draw(self, req):
        src = self.sources[req["sid"]]
        items, ended = src.draw(req["client"], max(1, min(int(req.get("n", 1)), 10000)), req.get("check", False))
        return items, ended

    # -- custom runners -----------------------------------------------------------------------

    def client(self):
        if self.es is not None:
            return self.es
        if not self.client_spec:
            raise RuntimeError("runner gave this worker no client (the race has no target for custom runners)")
        import es_client

        self.es, self.request_context = es_client.create(self.client_spec, self.index)
        return self.es

    async def run(self, req):
        rid = req["rid"]
        runner = self.registry.runners.get(req["runner"])
        rallys_own = runner is None and req["runner"].startswith("rally:")
        if rallys_own:
            runner = rally_runner(req["runner"][len("rally:"):])
        if runner is None:
            self.send({"rid": rid, "ok": False, "fatal": True, "error": f"no runner `{req['runner']}` is registered"})
            return
        if "sid" in req:
            try:
                params = self.sources[req["sid"]].params_for_runner(req["client"])
            except Exception as e:
                self.send(dict(error_reply(e, self.root), rid=rid, fatal=True))
                return
            if params is None:
                self.send({"rid": rid, "ok": True, "end": True})
                return
        else:
            params = req.get("params") or {}
        try:
            es = self.client()
        except Exception as e:
            self.send({"rid": rid, "ok": False, "fatal": True, "error": f"cannot create the client: {type(e).__name__}: {e}"})
            return
        import es_client

        # Rally's own runners take every cluster's client by name, as Rally hands them.
        target = {"default": es} if rallys_own else es
        reply = await es_client.execute(runner, target, params, self.request_context)
        reply["rid"] = rid
        try:
            self.send(reply)
        except TypeError as e:
            self.send({"rid": rid, "ok": False, "fatal": True, "error": f"runner `{req['runner']}` returned what JSON cannot carry: {e}"})

    async def close(self):
        if self.es is not None:
            try:
                await self.es.close()
            except Exception:
                pass


def prepares_corpora_only(processor):
    """Whether `processor` is Rally's (or OSB's) DefaultTrackPreparator as it is, its
    on_prepare_track not overridden."""
    for module, name in (("esrally.track.loader", "DefaultTrackPreparator"),
                         ("osbenchmark.workload.loader", "DefaultWorkloadPreparator")):
        try:
            base = getattr(importlib.import_module(module), name)
        except Exception:
            continue
        if isinstance(processor, base) and type(processor).on_prepare_track is base.on_prepare_track:
            return True
    return False


def rally_runner(kind):
    """esrally's own runner for one of Rally's operation types (None without esrally)."""
    try:
        from esrally.driver import runner as rally
    except ImportError:
        return None
    try:
        return rally.runner_for(kind)
    except Exception:
        rally.register_default_runners()
        try:
            return rally.runner_for(kind)
        except Exception:
            return None


async def read_frames(reader):
    while True:
        try:
            head = await reader.readexactly(4)
        except asyncio.IncompleteReadError:
            return
        (n,) = struct.unpack(">I", head)
        if n > MAX_FRAME:
            raise RuntimeError(f"a request of {n} bytes is over the {MAX_FRAME}-byte limit")
        yield json.loads(await reader.readexactly(n))


async def serve(out):
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_FRAME)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", buffering=0))
    worker = Worker(out)
    calls = set()
    async for req in read_frames(reader):
        kind = req.get("t")
        rid = req.get("rid", 0)
        if kind == "run":
            task = asyncio.ensure_future(worker.run(req))
            calls.add(task)
            task.add_done_callback(calls.discard)
            continue
        if kind == "exit":
            break
        try:
            # A track's own code (register, processors, sources) runs off the event loop, as
            # in Rally, where it may run one of its own (`asyncio.run`).
            if kind == "load":
                try:
                    reply = await loop.run_in_executor(None, worker.load, req)
                except BaseException as e:  # noqa: B902 - a track's SystemExit is an error too
                    worker.send(dict(error_reply(e, req.get("dir")), rid=rid))
                    continue
                worker.send(dict(reply, rid=rid, ok=True))
            elif kind == "prepare":
                worker.send(dict(await loop.run_in_executor(None, worker.prepare, req), rid=rid, ok=True))
            elif kind == "check-client":
                worker.send(dict(worker.check_client(req), rid=rid, ok=True))
            elif kind == "source":
                worker.send(dict(await loop.run_in_executor(None, worker.source, req), rid=rid, ok=True))
            elif kind == "draw":
                items, ended = worker.draw(req)
                worker.send_items(rid, '"end":%s' % ("true" if ended else "false"), items)
            elif kind == "step":
                at, params = worker.step(req)
                if params is None:
                    worker.send({"rid": rid, "ok": True, "end": True})
                elif params == "":
                    worker.send({"rid": rid, "ok": True, "end": False, "at": at})
                else:
                    worker.send_items(rid, '"end":false,"at":%s' % json.dumps(at), [params])
            elif kind == "close-source":
                worker.sources.pop(req.get("sid"), None)
                worker.send({"rid": rid, "ok": True})
            else:
                worker.send({"rid": rid, "ok": False, "error": f"unknown request `{kind}`"})
        except Exception as e:
            worker.send(dict(error_reply(e, worker.root), rid=rid))
    for task in list(calls):
        task.cancel()
    await worker.close()


def main():
    # The protocol keeps the original standard output; the track's prints go to stderr.
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    # Ctrl-C reaches the whole process group: runner stops its workers itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # runner's own modules first; its stand-in `esrally` last, behind an installed esrally.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    sys.path.append(os.path.join(here, "compat"))
    try:
        asyncio.run(serve(out))
    except (BrokenPipeError, ConnectionResetError):
        # runner went away (or refused what was sent, and said why): nothing is left to do.
        os._exit(0)


if __name__ == "__main__":
    main()
