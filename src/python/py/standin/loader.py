"""Rally's loader names tracks use: the track processor base classes, the corpus preparator
and the downloader and decompressor it takes. runner fetches, unpacks and checks corpora itself
before the race, so processors are handed no downloader or decompressor (as in Rally's unit
tests), and what would fetch or unpack here says so."""

import logging
import os

from standin import errors


class TrackProcessor:
    def on_after_load_track(self, track):
        pass

    def on_prepare_track(self, track, data_root_dir):
        return []


class DefaultTrackPreparator(TrackProcessor):
    def __init__(self):
        super().__init__()
        self.cfg = None
        self.downloader = None
        self.decompressor = None
        self.track = None


class _Fetches:
    """A downloader or decompressor: runner's own does this before the race."""

    what = "fetch"

    def __init__(self, *args, **kwargs):
        self.logger = logging.getLogger(__name__)

    def _refuse(self, *args, **kwargs):
        raise errors.SystemSetupError(
            f"runner's stand-in does not {self.what} corpus files from Python: runner does it before the race "
            f"(install esrally for a track's processor that needs esrally's)"
        )


class Downloader(_Fetches):
    what = "download"

    def download(self, *args, **kwargs):
        self._refuse()


class Decompressor(_Fetches):
    what = "decompress"

    def decompress(self, *args, **kwargs):
        self._refuse()


class DocumentSetPreparator:
    def __init__(self, track_name, downloader, decompressor):
        self.track_name = track_name
        self.downloader = downloader
        self.decompressor = decompressor

    def is_locally_available(self, file_name):
        return os.path.isfile(file_name)

    def has_expected_size(self, file_name, expected_size):
        return expected_size is None or os.path.getsize(file_name) == expected_size

    def create_file_offset_table(self, document_file_path, expected_number_of_lines, corpus_base_url=None):
        # runner reads corpora without Rally's offset tables.
        return None

    def prepare_document_set(self, document_set, data_root):
        path = os.path.join(data_root, os.path.basename(document_set.document_file or ""))
        if not self.is_locally_available(path):
            Downloader()._refuse()

    def prepare_bundled_document_set(self, document_set, data_root):
        return self.is_locally_available(os.path.join(data_root, os.path.basename(document_set.document_file or "")))
