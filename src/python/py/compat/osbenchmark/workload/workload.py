"""osbenchmark.workload.workload: the workload model, OSB's names for Rally's."""
from track_model import *  # noqa: F401,F403
from track_model import Challenge as TestProcedure  # noqa: F401
from track_model import Track as Workload  # noqa: F401
