"""osbenchmark.utils.io: as esrally.utils.io."""
from standin.io import *  # noqa: F401,F403
