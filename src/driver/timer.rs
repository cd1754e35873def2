//! A client's precise wait for its next intended start: a timerfd (the kernel's
//! high-resolution timer) polled by tokio's reactor. tokio's own timer ticks in whole
//! milliseconds, so waits used to sleep to within 2 ms and then spin with `yield_now`; at
//! 10,000 clients (or any high rate) the spinning clients kept both cores busy and delayed the
//! replies of every other client (redis p99 service time 903 ms at 10,000 ops/s). A timerfd
//! wakes the task within tens of microseconds and burns nothing while it waits.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use tokio::io::unix::AsyncFd;
use tokio::time::Instant;

pub struct PreciseTimer {
    fd: AsyncFd<OwnedFd>,
}

impl PreciseTimer {
    pub fn new() -> io::Result<PreciseTimer> {
        // SAFETY: timerfd_create takes no pointers; a valid result is a new descriptor we own.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a descriptor just created and owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: the `OwnedFd` keeps the descriptor open and the same for as long as the
        // `AsyncFd` that owns it lives.
        let fd = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
            .map_err(io::Error::from)?;
        Ok(PreciseTimer { fd })
    }

    /// Returns at `at` (at once when it has passed).
    pub async fn sleep_until(&self, at: Instant) -> io::Result<()> {
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: libc::time_t::try_from(left.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: left.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: a valid timerfd and a valid itimerspec; the old value is not asked for.
        if unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) }
            != 0
        {
            return Err(io::Error::last_os_error());
        }
        loop {
            let mut ready = self.fd.readable().await?;
            let mut expirations = [0u8; 8];
            // SAFETY: reads at most 8 bytes into the 8-byte buffer.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
            if n == 8 {
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::WouldBlock {
                return Err(err);
            }
            ready.clear_ready();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn wakes_at_the_deadline_never_before_and_can_be_reused() {
        // How late it wakes is measured in BENCHMARKS.md, not asserted here.
        let timer = PreciseTimer::new().unwrap();
        for wait in [300, 2500, 0, 50].map(Duration::from_micros) {
            let at = Instant::now() + wait;
            timer.sleep_until(at).await.unwrap();
            assert!(Instant::now() >= at, "never early");
        }
    }
}
