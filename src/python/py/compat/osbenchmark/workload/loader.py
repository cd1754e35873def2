"""osbenchmark.workload.loader: OSB's names for the processor base classes and the corpus
preparator, downloader and decompressor."""
from standin.loader import *  # noqa: F401,F403
from standin.loader import DefaultTrackPreparator as DefaultWorkloadPreparator  # noqa: F401
from standin.loader import TrackProcessor as WorkloadProcessor  # noqa: F401
from track_model import TrackSyntaxError as WorkloadSyntaxError  # noqa: F401
