"""esrally.track.loader: the track processor base classes and the corpus preparator."""
from standin.loader import *  # noqa: F401,F403
from track_model import TrackSyntaxError  # noqa: F401
