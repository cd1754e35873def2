//! Shard 0's rendezvous: every shard (shard 0 too) connects, says which it is and what it
//! plans to run, then arrives before each step and is told when the step starts, on this
//! clock; at the end each sends its stored race here. A shard that never joins, or that does
//! not reach a step within the timeout of the first to reach it, fails the race on every
//! shard with a message naming it. A shard whose connection drops is left behind: the others
//! go on, and the merged race names it missing.

use super::unix_ns;
use super::wire::{self, ShardResults, ToCoordinator, ToMember};
use crate::results::{BarrierRecord, HistogramFile, RaceRecord, RaceStatus};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// What the rendezvous gathered by the end of the race.
#[derive(Debug)]
pub struct Collected {
    pub race_id: String,
    /// Each shard that sent its race: its index, its host, its race.
    pub results: Vec<(u32, String, RaceRecord, HistogramFile)>,
    /// Shards whose results never came, and why.
    pub missing: BTreeMap<u32, String>,
    pub barriers: Vec<BarrierRecord>,
    /// Why the race was stopped on every shard, when it was.
    pub failure: Option<String>,
}

/// The rendezvous, running on shard 0.
pub struct Coordinator {
    pub address: std::net::SocketAddr,
    task: JoinHandle<Result<Collected, String>>,
}

impl Coordinator {
    /// Listens on `address` (`HOST:PORT`; on every interface with that port when HOST is not
    /// one of this machine's addresses, as a Kubernetes Service name is not).
    pub async fn start(
        address: &str,
        count: u32,
        timeout: Duration,
        plan: String,
    ) -> Result<Coordinator, String> {
        let listener = bind(address).await?;
        let bound = listener
            .local_addr()
            .map_err(|e| format!("rendezvous at {address}: {e}"))?;
        let (events, inbox) = mpsc::unbounded_channel();
        tokio::spawn(accept(listener, events, timeout));
        let state = State::new(count, timeout, plan, bound.to_string());
        Ok(Coordinator {
            address: bound,
            task: tokio::spawn(state.run(inbox)),
        })
    }

    /// Waits until every shard has sent its results or left.
    pub async fn finish(self) -> Result<Collected, String> {
        self.task
            .await
            .map_err(|e| format!("the rendezvous crashed: {e}"))?
    }
}

async fn bind(address: &str) -> Result<TcpListener, String> {
    let port = address
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse::<u16>().ok())
        .ok_or_else(|| format!("--coordinator `{address}`: expected HOST:PORT"))?;
    if let Ok(listener) = TcpListener::bind(address).await {
        return Ok(listener);
    }
    TcpListener::bind(("0.0.0.0", port)).await.map_err(|e| {
        format!("shard 0 cannot listen for the other shards on port {port} ({address}): {e}")
    })
}

/// A shard's hello, with the way back to it.
struct Joined {
    conn: u64,
    shard: u32,
    count: u32,
    plan: String,
    host: String,
    tx: mpsc::UnboundedSender<ToMember>,
}

enum Event {
    Joined(Joined),
    Arrive {
        conn: u64,
        step: usize,
        what: String,
        round_trip_ns: u64,
    },
    Results {
        conn: u64,
        results: Box<ShardResults>,
    },
    Probe {
        conn: u64,
        step: usize,
        probe: u32,
        share: Box<crate::capacity::share::ProbeShare>,
    },
    Gone {
        conn: u64,
        why: String,
    },
}

async fn accept(listener: TcpListener, events: mpsc::UnboundedSender<Event>, timeout: Duration) {
    let mut next = 0u64;
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            // Out of descriptors, say: wait rather than spin.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        if events.is_closed() {
            return;
        }
        next += 1;
        tokio::spawn(connection(next, stream, peer, events.clone(), timeout));
    }
}

/// One shard's connection: its messages become events; what the state sends goes out.
async fn connection(
    conn: u64,
    stream: TcpStream,
    peer: std::net::SocketAddr,
    events: mpsc::UnboundedSender<Event>,
    timeout: Duration,
) {
    let _ = stream.set_nodelay(true);
    super::member::keepalive(&stream);
    let (mut read, mut write) = stream.into_split();
    let (tx, mut outbox) = mpsc::unbounded_channel::<ToMember>();
    let writer = tokio::spawn(async move {
        while let Some(m) = outbox.recv().await {
            let last = matches!(m, ToMember::Fail { .. });
            if wire::send(&mut write, &m, m.is_large()).await.is_err() || last {
                break;
            }
        }
    });
    // A peer must say who it is soon: a stray connection does not hold a slot.
    let hello = tokio::time::timeout(timeout, wire::receive::<_, ToCoordinator>(&mut read)).await;
    let why = match hello {
        Ok(Ok(ToCoordinator::Hello {
            shard,
            count,
            plan,
            host,
        })) => {
            let _ = events.send(Event::Joined(Joined {
                conn,
                shard,
                count,
                plan,
                host,
                tx: tx.clone(),
            }));
            loop {
                match wire::receive::<_, ToCoordinator>(&mut read).await {
                    Ok(ToCoordinator::Ping) => {
                        let _ = tx.send(ToMember::Pong { now_ns: unix_ns() });
                    }
                    Ok(ToCoordinator::Arrive {
                        step,
                        what,
                        round_trip_ns,
                    }) => {
                        let _ = events.send(Event::Arrive {
                            conn,
                            step,
                            what,
                            round_trip_ns,
                        });
                    }
                    Ok(ToCoordinator::Results(results)) => {
                        let _ = events.send(Event::Results { conn, results });
                    }
                    Ok(ToCoordinator::Probe { step, probe, share }) => {
                        let _ = events.send(Event::Probe {
                            conn,
                            step,
                            probe,
                            share,
                        });
                    }
                    Ok(ToCoordinator::Hello { .. }) => break "said hello twice".to_string(),
                    Err(wire::WireError::Closed) => break "its connection closed".to_string(),
                    Err(e) => break format!("{peer} {e}"),
                }
            }
        }
        Ok(Ok(_)) => {
            let _ = tx.send(ToMember::Fail {
                message: "the first message must be hello".into(),
            });
            format!("{peer} did not start with hello")
        }
        Ok(Err(e)) => format!("{peer} {e}"),
        Err(_) => format!("{peer} did not say hello within {timeout:?}"),
    };
    let _ = events.send(Event::Gone { conn, why });
    drop(tx);
    let _ = writer.await;
}

#[derive(PartialEq)]
enum Racing {
    Yes,
    Done,
    Gone(String),
}

struct Shard {
    conn: u64,
    host: String,
    tx: mpsc::UnboundedSender<ToMember>,
    racing: Racing,
}

struct Arrival {
    what: String,
    first: Instant,
    last: Instant,
    shards: BTreeSet<u32>,
}

struct State {
    count: u32,
    timeout: Duration,
    plan: String,
    address: String,
    started: Instant,
    shards: Vec<Option<Shard>>,
    race_id: Option<String>,
    arrivals: BTreeMap<usize, Arrival>,
    probes: super::probes::ProbeExchange,
    round_trip_ns: u64,
    barriers: Vec<BarrierRecord>,
    results: Vec<(u32, String, RaceRecord, HistogramFile)>,
    failure: Option<String>,
    /// After a failure: when the shards still racing are given up on.
    collect_until: Option<Instant>,
}

impl State {
    fn new(count: u32, timeout: Duration, plan: String, address: String) -> State {
        State {
            count,
            timeout,
            plan,
            address,
            started: Instant::now(),
            shards: (0..count).map(|_| None).collect(),
            race_id: None,
            arrivals: BTreeMap::new(),
            probes: Default::default(),
            round_trip_ns: 0,
            barriers: Vec::new(),
            results: Vec::new(),
            failure: None,
            collect_until: None,
        }
    }

    async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Event>) -> Result<Collected, String> {
        loop {
            let deadline = self.deadline();
            let event = tokio::select! {
                e = inbox.recv() => e,
                _ = tokio::time::sleep_until(deadline) => None,
            };
            match event {
                Some(e) => self.handle(e)?,
                None => self.timed_out()?,
            }
            if let Some(done) = self.finished() {
                return Ok(done);
            }
        }
    }

    fn deadline(&self) -> Instant {
        let far = Instant::now() + Duration::from_secs(86_400 * 365);
        if self.race_id.is_none() {
            return self.started + self.timeout;
        }
        let barrier = self.arrivals.values().map(|a| a.first + self.timeout).min();
        let probe = self.probes.oldest().map(|first| first + self.timeout);
        [barrier, probe, self.collect_until]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(far)
    }

    fn shard_of(&self, conn: u64) -> Option<u32> {
        self.shards
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.conn == conn))
            .map(|i| i as u32)
    }

    fn fail_all(&mut self, message: &str) {
        for s in self.shards.iter().flatten() {
            let _ = s.tx.send(ToMember::Fail {
                message: message.to_string(),
            });
        }
    }

    fn handle(&mut self, event: Event) -> Result<(), String> {
        match event {
            Event::Joined(hello) => self.joined(hello)?,
            Event::Arrive {
                conn,
                step,
                what,
                round_trip_ns,
            } => {
                let Some(shard) = self.shard_of(conn) else {
                    return Ok(());
                };
                if let Some(f) = &self.failure {
                    let message = f.clone();
                    self.send(shard, ToMember::Fail { message });
                    return Ok(());
                }
                self.round_trip_ns = self.round_trip_ns.max(round_trip_ns);
                let now = Instant::now();
                let a = self.arrivals.entry(step).or_insert_with(|| Arrival {
                    what,
                    first: now,
                    last: now,
                    shards: BTreeSet::new(),
                });
                a.last = now;
                a.shards.insert(shard);
                self.release();
            }
            Event::Probe {
                conn,
                step,
                probe,
                share,
            } => self.probe(conn, step, probe, *share),
            Event::Results { conn, results } => {
                if let Some(shard) = self.shard_of(conn) {
                    if shard == 0 && self.collect_until.is_none() {
                        // Shard 0 has run every step: the others are at their last one.
                        self.collect_until = Some(Instant::now() + self.timeout);
                    }
                    let s = self.shards[shard as usize].as_mut().expect("joined");
                    s.racing = Racing::Done;
                    let host = s.host.clone();
                    let status = results.race.status;
                    if matches!(status, RaceStatus::Aborted | RaceStatus::Interrupted)
                        && self.failure.is_none()
                    {
                        // `--on-error abort` or Ctrl-C on one shard stops the race on all.
                        let why = results.race.stop_reason.clone().unwrap_or_default();
                        let message = format!("shard {shard} (on {host}) stopped: {why}");
                        self.fail_all(&message);
                        self.failure = Some(message);
                        self.collect_until
                            .get_or_insert(Instant::now() + self.timeout);
                    }
                    self.results
                        .push((shard, host, results.race, results.histograms));
                    self.release();
                }
            }
            Event::Gone { conn, why } => {
                let Some(shard) = self.shard_of(conn) else {
                    return Ok(());
                };
                if self.race_id.is_none() {
                    // Before the race: a restarted pod may join again.
                    self.shards[shard as usize] = None;
                    return Ok(());
                }
                let s = self.shards[shard as usize].as_mut().expect("joined");
                if s.racing == Racing::Yes {
                    s.racing = Racing::Gone(format!("left the race: {why}"));
                    eprintln!("rendezvous: shard {shard} left the race ({why}); the others go on");
                    self.release();
                }
            }
        }
        Ok(())
    }

    fn joined(&mut self, hello: Joined) -> Result<(), String> {
        let Joined {
            conn,
            shard,
            count,
            plan,
            host,
            tx,
        } = hello;
        let refuse = |message: String| {
            let _ = tx.send(ToMember::Fail { message });
        };
        if count != self.count || shard >= self.count {
            refuse(format!(
                "shard {shard} of {count} (on {host}) does not fit a race of {} shards",
                self.count
            ));
            return Ok(());
        }
        if plan != self.plan {
            let message = format!(
                "shard {shard} (on {host}) planned a different race than shard 0 \
                 (plan {plan}, shard 0's {}): every shard must run the same track, challenge, \
                 parameters and runner version",
                self.plan
            );
            refuse(message.clone());
            self.fail_all(&message);
            return Err(message);
        }
        if let Some(other) = &self.shards[shard as usize] {
            refuse(format!(
                "shard {shard} has already joined, from {}",
                other.host
            ));
            return Ok(());
        }
        if self.race_id.is_some() {
            refuse(format!("shard {shard} joined after the race started"));
            return Ok(());
        }
        self.shards[shard as usize] = Some(Shard {
            conn,
            host,
            tx,
            racing: Racing::Yes,
        });
        if self.shards.iter().all(Option::is_some) {
            let race = crate::results::new_race_id();
            for s in self.shards.iter().flatten() {
                let _ = s.tx.send(ToMember::Welcome { race: race.clone() });
            }
            self.race_id = Some(race);
        }
        Ok(())
    }

    fn send(&self, shard: u32, message: ToMember) {
        if let Some(s) = &self.shards[shard as usize] {
            let _ = s.tx.send(message);
        }
    }

    fn racing(&self) -> BTreeSet<u32> {
        self.shards
            .iter()
            .enumerate()
            .filter(|(_, s)| s.as_ref().is_some_and(|s| s.racing == Racing::Yes))
            .map(|(i, _)| i as u32)
            .collect()
    }

    /// Takes a shard's part of a probe; answers every probe all racing shards have sent.
    fn probe(
        &mut self,
        conn: u64,
        step: usize,
        probe: u32,
        share: crate::capacity::share::ProbeShare,
    ) {
        let Some(shard) = self.shard_of(conn) else {
            return;
        };
        if let Some(f) = &self.failure {
            let message = f.clone();
            self.send(shard, ToMember::Fail { message });
            return;
        }
        self.probes.add(step, probe, shard, share);
        self.release();
    }

    fn release_probes(&mut self, racing: &BTreeSet<u32>) {
        for m in self.probes.ready(racing) {
            match m.merged {
                Ok(merged) => {
                    for shard in &m.shards {
                        let merged = Box::new(merged.clone());
                        self.send(
                            *shard,
                            ToMember::Probed {
                                step: m.step,
                                probe: m.probe,
                                merged,
                            },
                        );
                    }
                }
                Err(why) => {
                    let message = format!(
                        "probe {} of step {} cannot be merged: {why}",
                        m.probe + 1,
                        m.step
                    );
                    self.fail_all(&message);
                    self.failure.get_or_insert(message);
                    self.collect_until = Some(Instant::now() + self.timeout);
                }
            }
        }
    }

    /// Starts each step every shard still racing has reached.
    fn release(&mut self) {
        let racing = self.racing();
        self.release_probes(&racing);
        let ready: Vec<usize> = self
            .arrivals
            .iter()
            .filter(|(_, a)| racing.is_subset(&a.shards))
            .map(|(step, _)| *step)
            .collect();
        for step in ready {
            let a = self.arrivals.remove(&step).expect("listed above");
            // Far enough ahead for the Go to reach every shard before it is due.
            let margin = Duration::from_nanos(self.round_trip_ns.saturating_mul(4))
                .max(Duration::from_millis(20));
            let at_ns = unix_ns() + margin.as_nanos() as u64;
            for shard in &a.shards {
                self.send(*shard, ToMember::Go { step, at_ns });
            }
            let now = Instant::now();
            self.barriers.push(BarrierRecord {
                step,
                what: a.what,
                arrival_spread_ms: (a.last - a.first).as_secs_f64() * 1e3,
                start_after_ms: ((now - a.last) + margin).as_secs_f64() * 1e3,
                min_slack_ms: None,
            });
        }
    }

    fn timed_out(&mut self) -> Result<(), String> {
        let now = Instant::now();
        if self.race_id.is_none() {
            if now < self.started + self.timeout {
                return Ok(());
            }
            let absent: Vec<String> = (0..self.count)
                .filter(|i| self.shards[*i as usize].is_none())
                .map(|i| i.to_string())
                .collect();
            let message = format!(
                "shard{} {} of {} did not join within {:?} (the rendezvous is at {}); \
                 no race was run",
                if absent.len() > 1 { "s" } else { "" },
                absent.join(", "),
                self.count,
                self.timeout,
                self.address
            );
            self.fail_all(&message);
            return Err(message);
        };
        if self.collect_until.is_some_and(|t| now >= t) {
            let timeout = self.timeout;
            for s in self.shards.iter_mut().flatten() {
                if s.racing == Racing::Yes {
                    s.racing = Racing::Gone(format!(
                        "sent no results within {timeout:?} of shard 0's end"
                    ));
                }
            }
            return Ok(());
        }
        let probes_late = match now.checked_sub(self.timeout) {
            Some(limit) => self.probes.late(limit),
            None => Vec::new(),
        };
        for ((step, probe), sent) in probes_late {
            let behind: Vec<String> = self
                .racing()
                .difference(&sent)
                .map(|s| s.to_string())
                .collect();
            let message = format!(
                "shard {} did not finish probe {} of step {step} within {:?} of the first shard; the race stops on every shard",
                behind.join(", shard "),
                probe + 1,
                self.timeout
            );
            self.fail_all(&message);
            self.failure.get_or_insert(message);
            self.collect_until = Some(now + self.timeout);
        }
        let late: Vec<(usize, String)> = self
            .arrivals
            .iter()
            .filter(|(_, a)| now >= a.first + self.timeout)
            .map(|(step, a)| (*step, a.what.clone()))
            .collect();
        for (step, what) in late {
            let a = self.arrivals.remove(&step).expect("listed above");
            let behind: Vec<String> = self
                .shards
                .iter()
                .enumerate()
                .filter_map(|(i, s)| Some((i as u32, s.as_ref()?)))
                .filter(|(i, s)| s.racing == Racing::Yes && !a.shards.contains(i))
                .map(|(i, s)| format!("{i} (on {})", s.host))
                .collect();
            let message = format!(
                "shard {} did not reach `{what}` within {:?} of the first shard; \
                 the race stops on every shard",
                behind.join(", shard "),
                self.timeout
            );
            eprintln!("rendezvous: {message}");
            self.fail_all(&message);
            self.failure.get_or_insert(message);
            self.collect_until = Some(now + self.timeout);
        }
        Ok(())
    }

    fn finished(&mut self) -> Option<Collected> {
        let race_id = self.race_id.clone()?;
        if self
            .shards
            .iter()
            .flatten()
            .any(|s| s.racing == Racing::Yes)
        {
            return None;
        }
        let missing = self
            .shards
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match &s.as_ref()?.racing {
                Racing::Gone(why) => Some((i as u32, why.clone())),
                _ => None,
            })
            .collect();
        Some(Collected {
            race_id,
            results: std::mem::take(&mut self.results),
            missing,
            barriers: std::mem::take(&mut self.barriers),
            failure: self.failure.take(),
        })
    }
}

#[cfg(test)]
mod tests;
