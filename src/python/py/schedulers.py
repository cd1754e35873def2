"""A task's scheduler from the track's Python, made as Rally's `scheduler_for` makes it.

Where esrally is installed, esrally's own `scheduler_for` builds it (the track's schedulers are
registered with it first). Otherwise runner's reading of the same rules: a class whose
`__init__` takes `params` is a legacy scheduler (given the task's params); one without all of
`before_request`, `after_request` and `next` is a simple scheduler, made with the task and its
throughput per client in requests per second, and made again when the runner's weight changes
(Rally's UnitAwareScheduler); any other is given the task and called back around each request.
"""

import inspect
import re


class TargetThroughput:
    def __init__(self, value, unit):
        self.value = value
        self.unit = unit


class Task:
    """The task a scheduler is made with: its name, clients, params (the whole task as
    written, as Rally's), schedule and target throughput."""

    THROUGHPUT_PATTERN = r"(?P<value>(\d*\.)?\d+)\s(?P<unit>\w+/s)"

    def __init__(self, spec):
        self.name = spec.get("name")
        self.clients = spec.get("clients", 1)
        self.params = spec
        self.schedule = spec.get("schedule")

    @property
    def target_throughput(self):
        interval = self.params.get("target-interval")
        throughput = self.params.get("target-throughput")
        if interval:
            return TargetThroughput(1 / float(interval), "ops/s")
        if isinstance(throughput, str):
            m = re.match(self.THROUGHPUT_PATTERN, throughput)
            if not m:
                raise ValueError(f"Task [{self.name}] specifies invalid target throughput [{throughput}].")
            return TargetThroughput(float(m.group("value")), m.group("unit"))
        if throughput:
            return TargetThroughput(float(throughput), "ops/s")
        return None

    def __str__(self):
        return self.name or "task"


def _rally_task(track, name):
    challenge = getattr(track, "selected_challenge_or_default", None)
    for item in getattr(challenge, "schedule", None) or []:
        for task in item:
            if getattr(task, "name", None) == name:
                return task
    return None


class UnitAware:
    """Rally's UnitAwareScheduler: a simple scheduler made once the first weight is known,
    and made again when it changes; unthrottled until then."""

    def __init__(self, task, cls):
        self.task = task
        self.cls = cls
        self.first = True
        self.weight = None
        self.scheduler = None

    def after_request(self, now, weight, unit, request_meta_data):
        if weight > 0 and (self.first or self.weight != weight):
            target = self.task.target_throughput
            if target is None:
                return
            if f"{unit}/s" != target.unit and target.unit == "ops/s":
                weight = 1
            self.first = False
            self.weight = weight
            self.scheduler = self.cls(self.task, target.value / self.task.clients / weight)

    def next(self, current):
        return 0 if self.scheduler is None else self.scheduler.next(current)


def factory(registry, name, track, spec):
    """A function making one scheduler (one per client) for the task `spec`."""
    cls = registry.schedulers[name]
    task = Task(spec)
    try:
        from esrally.driver import scheduler as rally_scheduler

        if hasattr(rally_scheduler, "scheduler_for"):
            # esrally's own task, where esrally read the track.
            task = _rally_task(track, spec.get("name")) or task
            try:
                rally_scheduler.register_scheduler(name, cls)
            except Exception:
                pass  # registered by an earlier source of this worker
            if not hasattr(task, "schedule") or task.schedule != name:
                task = _with_schedule(task, name)
            return lambda: rally_scheduler.scheduler_for(task)
    except ImportError:
        pass
    params = inspect.signature(cls.__init__).parameters
    if len(params) >= 2 and "params" in params:
        return lambda: cls(task.params)
    methods = [n for n, _ in inspect.getmembers(cls, inspect.isfunction)]
    if not all(m in methods for m in ("before_request", "after_request", "next")):
        return lambda: UnitAware(task, cls)
    return lambda: cls(task)


def _with_schedule(task, name):
    try:
        task.schedule = name
    except AttributeError:
        pass
    return task
