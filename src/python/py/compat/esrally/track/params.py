"""esrally.track.params: the base class param sources extend."""

from enum import Enum


class ParamSource:
    def __init__(self, track, params, **kwargs):
        self.track = track
        self._params = params
        self.kwargs = kwargs

    def partition(self, partition_index, total_partitions):
        return self

    @property
    def infinite(self):
        # Rally's: a source without a size runs forever.
        return self.size() is None

    def size(self):
        return None

    def params(self):
        return self._params

    def _client_params(self):
        return {
            "request-timeout": self._params.get("request-timeout"),
            "headers": self._params.get("headers"),
            "opaque-id": self._params.get("opaque-id"),
        }


class IndexIdConflict(Enum):
    """Rally's id conflicts of a bulk (its `conflicts` param)."""

    NoConflicts = 0
    SequentialConflicts = 1
    RandomConflicts = 2
