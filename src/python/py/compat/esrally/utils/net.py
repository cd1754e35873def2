"""esrally.utils.net: runner downloads a track's corpora itself, before the race; the stand-in
fetches nothing (esrally's does)."""
from standin import errors


def download(url, local_path, expected_size_in_bytes=None, progress_indicator=None):
    raise errors.SystemSetupError(
        f"runner's stand-in for esrally downloads nothing ({url}): runner fetches corpora before the race; "
        f"install esrally for a track that downloads from Python"
    )


download_http = download
