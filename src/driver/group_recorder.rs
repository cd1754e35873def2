//! One recorder per group of clients (see `groups`), not per client: at 10,000 clients the
//! per-client HDR histograms (two of about 190 KB each) were 3.7 GB. The clients of a group are
//! polled by one task, one at a time, so they share a recorder without a lock or an atomic;
//! the trial merges the groups' recorders exactly as it merged the clients' (every field is a
//! sum, a min, a max or an or).

use crate::metrics::{LiveGroup, Recorder};
use std::cell::UnsafeCell;
use std::sync::Arc;

pub struct GroupRecorder {
    recorder: UnsafeCell<Recorder>,
    /// The group's counters as they are while it runs, for the progress line and dashboard.
    pub live: Arc<LiveGroup>,
}

// SAFETY: the recorder is reached only through `with`, whose contract keeps the calls of one
// group's clients from overlapping: they run on the one task that polls the group.
unsafe impl Sync for GroupRecorder {}

impl GroupRecorder {
    pub fn new(recorder: Recorder) -> Arc<GroupRecorder> {
        let live = LiveGroup::new();
        Arc::new(GroupRecorder {
            recorder: UnsafeCell::new(recorder.with_live(live.clone())),
            live,
        })
    }

    /// Runs `f` on the recorder.
    ///
    /// # Safety
    /// Every caller is a client of the group this recorder was made for, and the group is
    /// polled by one task, so no two calls overlap; `f` does not call `with` again.
    #[inline]
    pub unsafe fn with<R>(&self, f: impl FnOnce(&mut Recorder) -> R) -> R {
        // SAFETY: by the contract above, this is the only reference to the recorder now.
        f(unsafe { &mut *self.recorder.get() })
    }

    /// The recorder, once every client of the group has ended (and dropped its handle).
    pub fn into_inner(self: Arc<GroupRecorder>) -> Option<Recorder> {
        Arc::try_unwrap(self)
            .ok()
            .map(|group| group.recorder.into_inner())
    }
}
