"""esrally.track: Rally's track model (runner's track_model stands in)."""
from track_model import *  # noqa: F401,F403

# Tracks import it from here too (`from esrally.track import exceptions`), as esrally allows.
from esrally import exceptions  # noqa: F401,E402
