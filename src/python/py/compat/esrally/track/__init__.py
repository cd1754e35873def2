from track_model import (  # noqa: F401
    ComponentTemplate,
    DataStream,
    DocumentCorpus,
    Documents,
    Index,
    IndexTemplate,
    Track,
)
