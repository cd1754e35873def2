//! A shard's side of the rendezvous: join, learn the coordinator's clock, meet the others
//! before each step (the driver's `StepGate`), and send the stored race at the end.

use super::wire::{self, ShardResults, ToCoordinator, ToMember, WireError};
use super::{unix_ns, ShardSpec};
use crate::capacity::share::ProbeShare;
use crate::driver::{Slice, StepGate};
use crate::results::{HistogramFile, RaceRecord, ShardRole};
use futures::future::BoxFuture;
use std::time::Duration;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Round trips measured to learn the clock offset; the shortest is kept.
const CLOCK_SAMPLES: usize = 8;

pub struct Member {
    pub slice: Slice,
    /// The race's id, given by the coordinator once every shard has joined.
    pub race_id: String,
    coordinator: String,
    timeout: Duration,
    /// The coordinator's clock minus this machine's, in nanoseconds.
    offset_ns: i64,
    round_trip_ns: u64,
    conn: Mutex<(OwnedReadHalf, OwnedWriteHalf)>,
    cancel: CancellationToken,
    /// How long before each step's start its Go arrived (ms; negative: after).
    slack: std::sync::Mutex<Vec<(usize, f64)>>,
}

/// Detects a peer machine that vanished (no reset ever comes) within seconds.
pub(super) fn keepalive(stream: &TcpStream) {
    let ka = socket2::TcpKeepalive::new()
        .with_time(Duration::from_secs(5))
        .with_interval(Duration::from_secs(1))
        .with_retries(5);
    let _ = socket2::SockRef::from(stream).set_tcp_keepalive(&ka);
}

impl Member {
    /// Joins the rendezvous (retrying while shard 0 starts) and waits for every shard.
    pub async fn join(
        spec: &ShardSpec,
        plan: &str,
        cancel: &CancellationToken,
    ) -> Result<Member, String> {
        let deadline = Instant::now() + spec.timeout;
        let at = &spec.coordinator;
        let stream = loop {
            let last = match TcpStream::connect(at).await {
                Ok(s) => break s,
                Err(e) => e,
            };
            if Instant::now() >= deadline {
                return Err(format!(
                    "shard {} of {} cannot reach the rendezvous at {at} (shard 0) within {:?}: {last}",
                    spec.slice.index, spec.slice.count, spec.timeout
                ));
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                _ = cancel.cancelled() => return Err(interrupted()),
            }
        };
        let _ = stream.set_nodelay(true);
        keepalive(&stream);
        let (mut read, mut write) = stream.into_split();
        let lost = |e: WireError| format!("lost the rendezvous at {at} (shard 0): {e}");
        let host = crate::results::HostInfo::current().hostname;
        let hello = ToCoordinator::Hello {
            shard: spec.slice.index,
            count: spec.slice.count,
            plan: plan.to_string(),
            host,
        };
        wire::send(&mut write, &hello, false).await.map_err(lost)?;
        // The coordinator answers once all have joined, or fails the race at its own timeout.
        let welcome = tokio::select! {
            m = tokio::time::timeout(spec.timeout + Duration::from_secs(10), wire::receive(&mut read)) => m,
            _ = cancel.cancelled() => return Err(interrupted()),
        };
        let race_id = match welcome {
            Ok(Ok(ToMember::Welcome { race })) => race,
            Ok(Ok(ToMember::Fail { message })) => return Err(format!("rendezvous: {message}")),
            Ok(Ok(other)) => {
                return Err(format!("rendezvous at {at} sent {other:?} before welcome"))
            }
            Ok(Err(e)) => return Err(lost(e)),
            Err(_) => {
                return Err(format!(
                    "the rendezvous at {at} did not start the race within {:?}",
                    spec.timeout
                ))
            }
        };
        let mut best = (u64::MAX, 0i64);
        for _ in 0..CLOCK_SAMPLES {
            let sent = unix_ns();
            wire::send(&mut write, &ToCoordinator::Ping, false)
                .await
                .map_err(lost)?;
            match wire::receive(&mut read).await.map_err(lost)? {
                ToMember::Pong { now_ns } => {
                    let back = unix_ns();
                    let rtt = back.saturating_sub(sent);
                    if rtt < best.0 {
                        let midpoint = sent as i128 + (rtt / 2) as i128;
                        best = (rtt, (now_ns as i128 - midpoint) as i64);
                    }
                }
                ToMember::Fail { message } => return Err(format!("rendezvous: {message}")),
                other => return Err(format!("rendezvous at {at} sent {other:?} instead of pong")),
            }
        }
        Ok(Member {
            slice: spec.slice,
            race_id,
            coordinator: at.clone(),
            timeout: spec.timeout,
            offset_ns: best.1,
            round_trip_ns: best.0,
            conn: Mutex::new((read, write)),
            cancel: cancel.clone(),
            slack: std::sync::Mutex::new(Vec::new()),
        })
    }

    pub fn role(&self) -> ShardRole {
        ShardRole {
            index: self.slice.index,
            count: self.slice.count,
            race: self.race_id.clone(),
            coordinator: self.coordinator.clone(),
            clock_offset_ms: -self.offset_ns as f64 / 1e6,
            round_trip_ms: self.round_trip_ns as f64 / 1e6,
            start_slack_ms: self.slack.lock().unwrap_or_else(|p| p.into_inner()).clone(),
        }
    }

    /// This shard's own race id: beside the merged race, not listed as a race of its own.
    pub fn shard_race_id(&self) -> String {
        format!("{}/shard-{}", self.race_id, self.slice.index)
    }

    /// An instant of this machine as nanoseconds on the coordinator's clock.
    pub fn shared_ns(&self, at: Instant) -> u64 {
        let (now, now_ns) = (Instant::now(), unix_ns() as i128);
        let delta = if at >= now {
            (at - now).as_nanos() as i128
        } else {
            -((now - at).as_nanos() as i128)
        };
        (now_ns + delta + self.offset_ns as i128).max(0) as u64
    }

    /// An instant of the coordinator's clock on this machine's.
    fn local_instant(&self, shared_ns: u64) -> Instant {
        let (now, now_ns) = (Instant::now(), unix_ns() as i128);
        let delta = shared_ns as i128 - self.offset_ns as i128 - now_ns;
        if delta >= 0 {
            now + Duration::from_nanos(delta as u64)
        } else {
            now.checked_sub(Duration::from_nanos((-delta) as u64))
                .unwrap_or(now)
        }
    }

    /// Sends the stored race to shard 0 and leaves the rendezvous.
    pub async fn send_results(
        &self,
        race: &RaceRecord,
        histograms: &HistogramFile,
    ) -> Result<(), String> {
        let message = ToCoordinator::Results(Box::new(ShardResults {
            race: race.clone(),
            histograms: histograms.clone(),
        }));
        let mut conn = self.conn.lock().await;
        let sent =
            tokio::time::timeout(self.timeout, wire::send(&mut conn.1, &message, true)).await;
        match sent {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!(
                "cannot send this shard's results to the rendezvous at {}: {e}",
                self.coordinator
            )),
            Err(_) => Err(format!(
                "the rendezvous at {} did not take this shard's results within {:?}",
                self.coordinator, self.timeout
            )),
        }
    }

    /// Closes this shard's side of the rendezvous: whatever it sent, it will send no more.
    pub async fn leave(&self) {
        use tokio::io::AsyncWriteExt as _;
        let mut conn = self.conn.lock().await;
        let _ = conn.1.shutdown().await;
    }

    async fn meet(&self, step: usize, what: &str) -> Result<Instant, String> {
        let arrive = ToCoordinator::Arrive {
            step,
            what: what.to_string(),
            round_trip_ns: self.round_trip_ns,
        };
        let at_ns = self
            .ask(&arrive, false, |m| match m {
                ToMember::Go { step: s, at_ns } if s == step => Ok(at_ns),
                other => Err(other),
            })
            .await?;
        let (start, now) = (self.local_instant(at_ns), Instant::now());
        let slack = if start >= now {
            (start - now).as_secs_f64()
        } else {
            -(now - start).as_secs_f64()
        };
        let mut slacks = self.slack.lock().unwrap_or_else(|p| p.into_inner());
        slacks.push((step, slack * 1e3));
        Ok(start)
    }

    /// Sends this shard's part of a probe and waits for all of them, merged.
    async fn probe(&self, step: usize, probe: u32, mine: ProbeShare) -> Result<ProbeShare, String> {
        let message = ToCoordinator::Probe {
            step,
            probe,
            share: Box::new(mine),
        };
        self.ask(&message, true, |m| match m {
            ToMember::Probed {
                step: s,
                probe: p,
                merged,
            } if s == step && p == probe => Ok(*merged),
            other => Err(other),
        })
        .await
    }

    /// Sends `message` and waits for the answer `wanted` picks out (other messages are
    /// passed over; a failure of the race ends the wait).
    async fn ask<T>(
        &self,
        message: &ToCoordinator,
        large: bool,
        wanted: impl Fn(ToMember) -> Result<T, ToMember>,
    ) -> Result<T, String> {
        let mut conn = self.conn.lock().await;
        let (read, write) = &mut *conn;
        let at = &self.coordinator;
        let lost = |e: WireError| format!("lost the rendezvous at {at} (shard 0): {e}");
        wire::send(write, message, large).await.map_err(lost)?;
        // The coordinator enforces the timeout between shards; this one only guards against
        // a coordinator that stopped answering without closing.
        let limit = Instant::now() + self.timeout * 2 + Duration::from_secs(30);
        loop {
            let message = tokio::select! {
                m = tokio::time::timeout_at(limit, wire::receive(read)) => m,
                _ = self.cancel.cancelled() => return Err(interrupted()),
            };
            match message {
                Ok(Ok(m)) => match wanted(m) {
                    Ok(answer) => return Ok(answer),
                    Err(ToMember::Fail { message }) => {
                        return Err(format!("rendezvous: {message}"))
                    }
                    Err(_) => continue,
                },
                Ok(Err(e)) => return Err(lost(e)),
                Err(_) => return Err(format!("the rendezvous at {at} stopped answering")),
            }
        }
    }
}

fn interrupted() -> String {
    "interrupted while waiting for the other shards".into()
}

impl StepGate for Member {
    fn arrive<'a>(&'a self, step: usize, what: &'a str) -> BoxFuture<'a, Result<Instant, String>> {
        Box::pin(self.meet(step, what))
    }

    fn share_probe<'a>(
        &'a self,
        step: usize,
        probe: u32,
        mine: ProbeShare,
    ) -> BoxFuture<'a, Result<ProbeShare, String>> {
        Box::pin(self.probe(step, probe, mine))
    }
}
