//! A scripted in-memory backend for the driver's own tests: each call takes the latency and
//! returns the result its script gives for the call's number. Under tokio's paused clock the
//! latencies are exact, so the driver's accounting (warmup, windows, throughput, coordinated
//! omission, aborts) is tested to the microsecond, as hyperfine's mock executor does.

use super::{Backend, BackendClient, BackendInfo, OpError, Outcome, Payload};
use crate::ops::OpSpec;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What call `n` (0-based, counted across all clients) takes and returns.
pub type Script = dyn Fn(u64) -> (Duration, Result<Outcome, OpError>) + Send + Sync;

pub struct ScriptedBackend {
    script: Arc<Script>,
    calls: Arc<AtomicU64>,
    pub connects: AtomicU64,
}

impl ScriptedBackend {
    pub fn new(
        script: impl Fn(u64) -> (Duration, Result<Outcome, OpError>) + Send + Sync + 'static,
    ) -> Self {
        ScriptedBackend {
            script: Arc::new(script),
            calls: Arc::new(AtomicU64::new(0)),
            connects: AtomicU64::new(0),
        }
    }

    /// Every call takes `latency` and succeeds with one unit.
    pub fn constant(latency: Duration) -> Self {
        Self::new(move |_| {
            (
                latency,
                Ok(Outcome {
                    units: 1,
                    ..Outcome::default()
                }),
            )
        })
    }

    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }
}

pub struct ScriptedClient {
    script: Arc<Script>,
    calls: Arc<AtomicU64>,
}

impl Backend for ScriptedBackend {
    type Client = ScriptedClient;
    type Prepared = ();

    fn info(&self) -> BackendInfo {
        BackendInfo {
            kind: "scripted".into(),
            ..BackendInfo::default()
        }
    }

    async fn connect(&self) -> Result<ScriptedClient, OpError> {
        self.connects.fetch_add(1, Ordering::SeqCst);
        Ok(ScriptedClient {
            script: self.script.clone(),
            calls: self.calls.clone(),
        })
    }

    fn prepare(&self, _op: &OpSpec) -> Result<(), OpError> {
        Ok(())
    }

    fn cannot_run(_op: &OpSpec) -> Option<String> {
        None
    }
}

impl BackendClient for ScriptedClient {
    type Prepared = ();

    async fn execute(&mut self, _op: &(), _payload: &Payload<'_>) -> Result<Outcome, OpError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let (latency, result) = (self.script)(n);
        tokio::time::sleep(latency).await;
        result
    }
}
