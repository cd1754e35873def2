//! Stopping an operation in flight when the race is interrupted (Ctrl-C, SIGTERM, an abort),
//! without a lock or an allocation per operation: a flag and a waker per client.

use futures::task::AtomicWaker;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

#[derive(Default)]
pub struct StopSignal {
    stopped: AtomicBool,
    waker: AtomicWaker,
}

impl StopSignal {
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// Runs `operation` to its end, or drops it as soon as the signal is given (`None`).
    /// An operation that is ready on its first poll never touches the waker.
    pub async fn unless_stopped<F: Future>(&self, operation: F) -> Option<F::Output> {
        let mut operation = std::pin::pin!(operation);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(out) = operation.as_mut().poll(cx) {
                return Poll::Ready(Some(out));
            }
            self.waker.register(cx.waker());
            // Checked after registering, so that a stop between the two is not missed.
            if self.stopped.load(Ordering::Acquire) {
                return Poll::Ready(None);
            }
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_stop_drops_the_operation_in_flight() {
        let signal = Arc::new(StopSignal::default());
        let stopper = signal.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            stopper.stop();
        });
        let started = tokio::time::Instant::now();
        let out = signal
            .unless_stopped(tokio::time::sleep(Duration::from_secs(7200)))
            .await;
        assert!(out.is_none());
        assert_eq!(started.elapsed(), Duration::from_millis(10));
    }

    #[tokio::test]
    async fn an_operation_that_ends_first_gives_its_output() {
        let signal = StopSignal::default();
        assert_eq!(signal.unless_stopped(async { 7 }).await, Some(7));
        signal.stop();
        assert_eq!(
            signal.unless_stopped(std::future::pending::<u8>()).await,
            None
        );
    }
}
