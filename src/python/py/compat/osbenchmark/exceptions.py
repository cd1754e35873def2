"""osbenchmark.exceptions: OSB's names for Rally's exception hierarchy (the same classes, so a
workload catching one catches what runner's stand-ins raise)."""
from standin.errors import *  # noqa: F401,F403
from standin.errors import (  # noqa: F401
    RallyAssertionError as BenchmarkAssertionError,
    RallyError as BenchmarkError,
    RallyTaskAssertionError as BenchmarkTaskAssertionError,
    TrackConfigError as WorkloadConfigError,
)

