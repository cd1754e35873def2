//! A leaf's clients, ready to run: each with its schedule, budget and payload source, in
//! groups that share a recorder, from the step's common start; and their end, collected.

use super::budget::{Budget, IterationPool};
use super::client::{ClientRun, Exec, Shared, Source};
use super::group_recorder::GroupRecorder;
use super::python::ClientFeed;
use super::schedule::{wait_until, Schedule};
use super::stop::StopSignal;
use super::work::{CorpusFeed, KeyGen, VectorWalk};
use super::{groups, timer, Slice};
use crate::metrics::Recorder;
use crate::ops::PayloadSource;
use crate::plan::{Leaf, Work};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The clients of a leaf in their groups (see `groups`), each group with the recorder its
/// clients share.
pub(super) struct ClientGroups<F> {
    groups: Vec<Vec<F>>,
    recorders: Vec<Arc<GroupRecorder>>,
}

impl<F> ClientGroups<F> {
    /// Each group's live counters.
    pub fn live(&self) -> Vec<Arc<crate::metrics::LiveGroup>> {
        self.recorders.iter().map(|r| r.live.clone()).collect()
    }
}

/// When a leaf's clients start, and which of them this process runs.
pub(super) struct LeafStart {
    pub slice: Slice,
    pub origin: Instant,
    /// Samples kept per trial, all clients together, when the race keeps them.
    pub keep_samples: Option<usize>,
}

/// Each client's loop, ready to spawn: its schedule, budget and payload source, in its group
/// with the group's recorder, all sharing one time zero.
pub(super) fn client_runs<C: crate::backend::BackendClient>(
    leaf: &Leaf,
    start: LeafStart,
    clients: Vec<(C, Arc<StopSignal>)>,
    exec: Arc<Exec<C::Prepared>>,
    feed: Option<&Arc<CorpusFeed>>,
    feeds: Vec<ClientFeed<C::Prepared>>,
    shared: &Arc<Shared>,
    later_per_client: u64,
) -> ClientGroups<impl std::future::Future<Output = ()> + Send + 'static> {
    let LeafStart {
        slice,
        origin,
        keep_samples,
    } = start;
    let first_client = slice.clients(leaf.clients).start;
    let expected_secs = match leaf.work {
        Work::Time { warmup, measured } => (warmup + measured).as_secs() as usize + 1,
        _ => 16,
    };
    // The time between two operations of the whole task at its target rate. The measured
    // window runs to the end of the last operation's slot: N operations at rate r span N/r.
    // Clients are staggered by this much, so a client's own interval (N times longer) would
    // stretch the merged window by the stagger (1 s of 16 at 10,000 clients at 1 op/s each).
    let slot = match leaf.target_throughput {
        Some(t) if leaf.schedule != crate::track::ScheduleKind::Unthrottled => t.interval(),
        _ => Duration::ZERO,
    };
    let pool = match leaf.work {
        Work::Iterations { warmup, measured } => Some(IterationPool::new(
            slice.share(warmup, leaf.clients),
            slice.share(measured, leaf.clients),
            clients.len() as u64,
        )),
        _ => None,
    };
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    let tasks = groups::task_count(clients.len(), workers);
    let ramp = leaf.ramp.clone().map(Arc::new);
    // A sleep operation waits on the timer too, to take the time it names.
    let sleeps = matches!(leaf.spec, crate::ops::OpSpec::Sleep(d) if !d.is_zero());
    let waits = (!slot.is_zero() || !leaf.ramp_up.is_zero() || ramp.is_some() || sleeps)
        && timers_fit(clients.len(), later_per_client);
    let recorders = group_recorders(
        leaf,
        origin,
        expected_secs,
        slot,
        tasks,
        keep_samples,
        first_client,
    );
    let mut groups: Vec<Vec<_>> = (0..tasks).map(|_| Vec::new()).collect();
    // One feed per client of this process, in client order.
    let mut feeds = feeds.into_iter();
    for (i, (client, stop)) in clients.into_iter().enumerate() {
        let group = i % tasks;
        // The client's place in the whole task: its schedule and keys are those it would
        // have in a race of one process.
        let i = first_client + i as u64;
        let budget = match (leaf.work, &pool) {
            (_, Some(pool)) => Budget::iterations(pool),
            (Work::Time { warmup, measured }, _) => Budget::Time {
                warmup_end: origin + warmup,
                end: origin + warmup + measured,
            },
            _ => Budget::Corpus,
        };
        let source = source_of(leaf, i, feed, &mut feeds);
        let run = ClientRun {
            client,
            index: i,
            starts_at: origin + ramp_delay(leaf, i),
            timer: (waits && cfg!(not(test))).then(precise_timer).flatten(),
            stop,
            exec: exec.clone(),
            schedule: schedule_of(leaf, ramp.as_ref(), origin + ramp_delay(leaf, i), i),
            budget,
            source,
            recorder: recorders[group].clone(),
        };
        let (delay, shared) = (ramp_delay(leaf, i), shared.clone());
        groups[group].push(async move {
            // A ramped-up client starts late; Ctrl-C while it waits stops it at once.
            if !delay.is_zero()
                && !wait_until(origin + delay, &shared.cancel, run.timer.as_ref()).await
            {
                return run.stopped_before_start(&shared);
            }
            run.run(shared).await
        });
    }
    ClientGroups { groups, recorders }
}

/// One recorder per group of clients, with recall, parts and samples as the leaf measures them.
fn group_recorders(
    leaf: &Leaf,
    origin: Instant,
    expected_secs: usize,
    slot: Duration,
    tasks: usize,
    keep_samples: Option<usize>,
    first_client: u64,
) -> Vec<Arc<GroupRecorder>> {
    (0..tasks)
        .map(|group| {
            let mut recorder = Recorder::new(origin, expected_secs, slot);
            if let Some(cap) = keep_samples {
                // Each group keeps its share; its clients' requests are a uniform sample of
                // the group's when they outnumber it.
                let seed = 0x9e37_79b9_7f4a_7c15 ^ (first_client + group as u64);
                recorder = recorder.with_samples(cap.div_ceil(tasks).max(1), seed);
            }
            if matches!(leaf.spec, crate::ops::OpSpec::VectorSearch(_)) {
                recorder = recorder.with_recall();
            }
            GroupRecorder::new(match leaf.spec.counted_parts() {
                Some(labels) => recorder.with_parts(labels, leaf.spec.times_parts()),
                None => recorder,
            })
        })
        .collect()
}

/// Where client `i` takes each call's changing input from.
fn source_of<P>(
    leaf: &Leaf,
    i: u64,
    feed: Option<&Arc<CorpusFeed>>,
    feeds: &mut impl Iterator<Item = ClientFeed<P>>,
) -> Source<P> {
    match (leaf.spec.payload_source(), feed) {
        (_, Some(feed)) => Source::Corpus(feed.clone()),
        (PayloadSource::Python(_), _) => match feeds.next() {
            Some(ClientFeed::Queue(queue)) => Source::Python(queue),
            Some(ClientFeed::Paced(pacer)) => Source::Paced(pacer),
            None => Source::None,
        },
        (PayloadSource::Keys(kv), _) => Source::Keys(KeyGen::new(kv, i)),
        (PayloadSource::Bound(body), _) => Source::Bound(body.client(i, leaf.clients)),
        (PayloadSource::Vectors(v), _) => {
            Source::Vectors(VectorWalk::new(v.queries.vectors.len(), i, leaf.clients))
        }
        _ => Source::None,
    }
}

/// Runs each group of clients as one task and collects the groups' recorders; a client that
/// panicked is named by the last such message.
pub(super) async fn join_clients<F>(clients: ClientGroups<F>) -> (Vec<Recorder>, Option<String>)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let mut crashed = None;
    for group in groups::spawn(clients.groups) {
        match group.await {
            Ok(outputs) => {
                if let Some(e) = outputs.into_iter().filter_map(Result::err).last() {
                    crashed = Some(e);
                }
            }
            Err(e) => crashed = Some(e.to_string()),
        }
    }
    // Every client has ended and dropped its handle: each recorder is the group's alone.
    let mut recorders = Vec::with_capacity(clients.recorders.len());
    for recorder in clients.recorders {
        match recorder.into_inner() {
            Some(r) => recorders.push(r),
            None => {
                crashed =
                    Some("a group of clients ended without giving back its measurements".into())
            }
        }
    }
    (recorders, crashed)
}

/// Whether a timerfd per client fits the open-files limit beside the descriptors clients open
/// on their first request (an HTTP connection per host): those come first.
fn timers_fit(clients: usize, later_per_client: u64) -> bool {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct passed in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return false;
    }
    let open = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count()) as u64;
    let needed = open + (1 + later_per_client) * clients as u64 + 64;
    let fits = lim.rlim_cur >= needed;
    if !fits {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| eprintln!("warning: a timerfd for each of {clients} throttled clients does not fit the open-files limit ({}): they wait on tokio's 1 ms timer and spin the rest, which costs CPU (raise `ulimit -n` to {needed} to avoid it)", lim.rlim_cur));
    }
    fits
}

/// A client's timerfd; when the system refuses one (out of descriptors), the client waits on
/// tokio's timer and spins the last 2 ms instead, and the first refusal is said.
fn precise_timer() -> Option<timer::PreciseTimer> {
    static SAID: std::sync::Once = std::sync::Once::new();
    timer::PreciseTimer::new()
        .inspect_err(|e| SAID.call_once(|| eprintln!("warning: no timerfd for a throttled client ({e}): it waits on tokio's 1 ms timer and spins the rest, which costs CPU")))
        .ok()
}

/// Client `i`'s schedule: the leaf's ramp of rates, or its one target rate.
fn schedule_of(
    leaf: &Leaf,
    ramp: Option<&Arc<crate::track::rate::Ramp>>,
    start: Instant,
    i: u64,
) -> Schedule {
    let seed = 0x5EED ^ leaf.trial;
    match ramp {
        Some(ramp) => Schedule::ramped(leaf.schedule, ramp.clone(), start, i, leaf.clients, seed),
        None => Schedule::new(
            leaf.schedule,
            leaf.target_throughput,
            start,
            i,
            leaf.clients,
            seed,
        ),
    }
}

/// When client `i` of a leaf starts, after the first: `i/n` of the ramp-up.
fn ramp_delay(leaf: &Leaf, i: u64) -> Duration {
    leaf.ramp_up.mul_f64(i as f64 / leaf.clients.max(1) as f64)
}
