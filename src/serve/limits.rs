//! What one `runner serve` gives its clients at most: connections, request bytes held in
//! memory, and the time to send a request. Without these, idle or slow sockets lock every real
//! client out and partial bodies hold memory without bound.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Open connections at most. At the cap the longest-idle connection is closed to admit a
    /// new one; when none is idle, new connections wait in the listen backlog.
    pub max_connections: usize,
    /// Request bytes (as received, and as decompressed) held by all requests together.
    pub max_in_flight_bytes: usize,
    /// Time to send a complete request head, counted from when the server starts waiting for
    /// one: it closes slowloris connections and connections idle between requests alike.
    pub header_timeout: Duration,
    /// Time to send a whole request body once its head has arrived.
    pub body_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 4096,
            max_in_flight_bytes: 256 * 1024 * 1024,
            header_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(60),
        }
    }
}

/// One open connection, as the registry sees it.
pub(super) struct Conn {
    requests_in_progress: AtomicU32,
    /// Milliseconds since the registry's epoch when the last request ended (or the
    /// connection opened).
    last_active_ms: AtomicU64,
    /// Cancelled to ask the connection to close.
    pub(super) close: CancellationToken,
}

/// The open connections, so that the longest-idle one can make room at the cap.
pub(super) struct Connections {
    max: usize,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    next_id: AtomicU64,
    freed: Notify,
    epoch: Instant,
}

/// Holds a connection's place; dropping it frees the place.
pub(super) struct Admitted {
    registry: Arc<Connections>,
    id: u64,
    pub(super) conn: Arc<Conn>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.registry
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
        self.registry.freed.notify_one();
    }
}

/// Marks a request in progress on its connection (so that it is not closed as idle).
pub(super) struct InProgress {
    registry: Arc<Connections>,
    conn: Arc<Conn>,
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.conn
            .last_active_ms
            .store(self.registry.now_ms(), Ordering::Relaxed);
        self.conn
            .requests_in_progress
            .fetch_sub(1, Ordering::Relaxed);
    }
}

impl Connections {
    pub(super) fn new(max: usize) -> Arc<Connections> {
        Arc::new(Connections {
            max: max.max(1),
            open: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            freed: Notify::new(),
            epoch: Instant::now(),
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.open.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// A place for a new connection: at once below the cap; at the cap after closing the
    /// longest-idle connection, or once one ends. `None` when `cancel` fires first.
    pub(super) async fn admit(self: &Arc<Self>, cancel: &CancellationToken) -> Option<Admitted> {
        loop {
            let freed = self.freed.notified();
            if let Some(admitted) = self.try_admit() {
                return Some(admitted);
            }
            tokio::select! {
                _ = freed => {}
                _ = cancel.cancelled() => return None,
            }
        }
    }

    fn try_admit(self: &Arc<Self>) -> Option<Admitted> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() >= self.max {
            let idlest = open
                .iter()
                .filter(|(_, c)| {
                    c.requests_in_progress.load(Ordering::Relaxed) == 0 && !c.close.is_cancelled()
                })
                .min_by_key(|(_, c)| c.last_active_ms.load(Ordering::Relaxed))
                .map(|(id, _)| *id)?;
            // The evicted connection leaves the count now; its task ends on its own.
            if let Some(conn) = open.remove(&idlest) {
                conn.close.cancel();
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            requests_in_progress: AtomicU32::new(0),
            last_active_ms: AtomicU64::new(self.now_ms()),
            close: CancellationToken::new(),
        });
        open.insert(id, conn.clone());
        Some(Admitted {
            registry: self.clone(),
            id,
            conn,
        })
    }

    pub(super) fn begin_request(self: &Arc<Self>, conn: &Arc<Conn>) -> InProgress {
        conn.requests_in_progress.fetch_add(1, Ordering::Relaxed);
        InProgress {
            registry: self.clone(),
            conn: conn.clone(),
        }
    }
}

/// Request bytes held in memory by all requests together, as Elasticsearch's in-flight
/// requests circuit breaker counts them.
pub(super) struct InFlightBytes {
    max: usize,
    used: AtomicUsize,
}

/// Bytes counted against the in-flight budget until dropped.
pub(super) struct Reservation<'a> {
    budget: &'a InFlightBytes,
    bytes: usize,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

impl InFlightBytes {
    pub(super) fn new(max: usize) -> InFlightBytes {
        InFlightBytes {
            max,
            used: AtomicUsize::new(0),
        }
    }

    pub(super) fn reservation(&self) -> Reservation<'_> {
        Reservation {
            budget: self,
            bytes: 0,
        }
    }

    pub(super) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    pub(super) fn max(&self) -> usize {
        self.max
    }
}

impl Reservation<'_> {
    /// Counts `more` bytes, or returns false (counting nothing) when that would pass the
    /// budget.
    pub(super) fn grow(&mut self, more: usize) -> bool {
        let budget = self.budget;
        let taken = budget
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(more).filter(|&total| total <= budget.max)
            });
        if taken.is_ok() {
            self.bytes += more;
        }
        taken.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn at_the_cap_the_longest_idle_connection_makes_room() {
        let registry = Connections::new(2);
        let cancel = CancellationToken::new();
        let first = registry.admit(&cancel).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
        let second = registry.admit(&cancel).await.unwrap();
        let _third = registry.admit(&cancel).await.unwrap();
        assert!(
            first.conn.close.is_cancelled(),
            "the oldest idle connection is asked to close"
        );
        assert!(!second.conn.close.is_cancelled());
        assert_eq!(registry.len(), 2);
    }

    #[tokio::test]
    async fn a_connection_with_a_request_in_progress_is_never_evicted() {
        let registry = Connections::new(1);
        let cancel = CancellationToken::new();
        let busy = registry.admit(&cancel).await.unwrap();
        let request = registry.begin_request(&busy.conn);
        // Full and busy: the next one waits until the busy one ends.
        let waiting =
            tokio::time::timeout(Duration::from_millis(50), registry.admit(&cancel)).await;
        assert!(
            waiting.is_err(),
            "a new connection waits while the only one is busy"
        );
        assert!(!busy.conn.close.is_cancelled());
        drop(request);
        drop(busy);
        assert!(registry.admit(&cancel).await.is_some());
        cancel.cancel();
    }

    #[test]
    fn in_flight_bytes_are_bounded_and_released() {
        let budget = InFlightBytes::new(100);
        let mut a = budget.reservation();
        assert!(a.grow(60));
        let mut b = budget.reservation();
        assert!(!b.grow(41), "60 + 41 passes 100");
        assert!(b.grow(40));
        assert!(!b.grow(usize::MAX), "no overflow");
        drop(a);
        assert_eq!(budget.used(), 40);
        drop(b);
        assert_eq!(budget.used(), 0);
    }
}
