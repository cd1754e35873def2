"""esrally.driver.runner: the runner base classes, the registry, Retry and Rally's runners by
name (standin/runners.py says which run here)."""
from standin.runners import *  # noqa: F401,F403
from standin.runners import _RUNNERS  # noqa: F401
