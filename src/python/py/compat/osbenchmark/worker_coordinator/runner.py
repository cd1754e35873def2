"""osbenchmark.worker_coordinator.runner: as esrally.driver.runner."""
from standin.runners import *  # noqa: F401,F403
from standin.runners import _RUNNERS  # noqa: F401
