from track_model import (  # noqa: F401
    ComponentTemplate,
    DataStream,
    DocumentCorpus,
    Documents,
    Index,
    IndexTemplate,
    Track,
)
# Tracks import it from here too (`from esrally.track import exceptions`), as esrally allows.
from esrally import exceptions  # noqa: F401,E402
