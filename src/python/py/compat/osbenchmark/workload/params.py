"""osbenchmark.workload.params: as esrally.track.params."""
from standin.params import *  # noqa: F401,F403
