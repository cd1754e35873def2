"""esrally.track.track: the track model (runner's track_model stands in)."""
from track_model import *  # noqa: F401,F403
