"""esrally.utils.io: the path helpers and file sources tracks use."""
from standin.io import *  # noqa: F401,F403
