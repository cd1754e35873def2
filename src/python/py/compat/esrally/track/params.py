"""esrally.track.params: the param source base class, Slice, IndexIdConflict and Rally's
sources by name (standin/params.py says which draw here)."""
from standin.params import *  # noqa: F401,F403
