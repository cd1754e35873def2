"""esrally.track.loader: the track processor base classes. DefaultTrackPreparator's work
(downloading and decompressing corpora) is what runner does natively before the race, so here
it prepares nothing."""


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
