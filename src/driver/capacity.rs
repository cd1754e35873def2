//! A capacity search run: probe after probe, each a step of its own (its clients prepared
//! and started as any task's), until the search concludes. The trial recorded is the probe
//! at the capacity, with the whole search beside it.

use super::{Driver, TrialRun};
use crate::backend::Backend;
use crate::capacity::judge::{judge, ProbeMeasure};
use crate::capacity::search::{Next, Outcome, Search};
use crate::capacity::share::ProbeShare;
use crate::capacity::{CapacityRecord, Conclusion, Phase, ProbeRecord, ProbeVerdict};
use crate::metrics::{Percentiles, TrialMetrics};
use crate::plan::{Leaf, Plan};
use crate::track::rate::CapacitySpec;
use crate::track::ScheduleKind;
use crate::units::{format_number, OpsPerSec};
use tokio::time::Instant;

/// A search under way: its state machine, the probes so far, and the runs it may record.
struct Searching {
    search: Search,
    started: Instant,
    probes: Vec<ProbeRecord>,
    /// The highest rate whose final verdict held, and a run at it that held.
    best: Option<(f64, TrialRun)>,
    /// The last run that held at the rate being decided.
    held: Option<TrialRun>,
    /// The last run of any other kind, recorded when no rate held.
    last: Option<TrialRun>,
    /// Why the driver was the limit, when it was.
    reason: Option<String>,
}

impl Searching {
    fn new(spec: &CapacitySpec) -> Searching {
        Searching {
            search: Search::new(
                spec.precision,
                spec.max_probes,
                spec.probe_start.map(|r| r.0),
            ),
            started: Instant::now(),
            probes: Vec::new(),
            best: None,
            held: None,
            last: None,
            reason: None,
        }
    }

    /// Takes a probe that ran and was judged.
    fn take(&mut self, run: TrialRun, record: ProbeRecord, rate: Option<f64>, cpu_is_driver: bool) {
        let driver_limited = driver_lagged(&record, cpu_is_driver);
        let outcome = Outcome {
            verdict: record.verdict.unwrap_or(ProbeVerdict::Held),
            uncertain: record.within_noise,
            achieved: record.achieved,
            driver_limited: driver_limited.is_some(),
        };
        if record.verdict == Some(ProbeVerdict::Held) {
            self.held = Some(run);
        } else {
            self.last = Some(run);
        }
        self.probes.push(record);
        match (self.search.record(outcome), rate) {
            (Some(ProbeVerdict::Held), Some(r)) => {
                if self.best.as_ref().is_none_or(|(b, _)| r >= *b) {
                    if let Some(run) = self.held.take() {
                        self.best = Some((r, run));
                    }
                }
                self.held = None;
            }
            (Some(ProbeVerdict::Failed), _) => {
                self.reason = driver_limited.or(self.reason.take());
                self.held = None;
            }
            _ => {}
        }
    }

    /// The trial to record: the probe at the capacity (else the last one), with the search.
    fn finish(
        self,
        leaf: &Leaf,
        spec: &CapacitySpec,
        conclusion: Conclusion,
        nothing: impl FnOnce() -> TrialRun,
    ) -> TrialRun {
        let (held, failed) = self.search.bracket();
        let achieved = self.best.as_ref().map(|(r, _)| {
            self.probes
                .iter()
                .rev()
                .find(|p| p.target == Some(*r) && p.verdict == Some(ProbeVerdict::Held))
                .map_or(0.0, |p| p.achieved)
        });
        let mut trial = match self.best {
            Some((_, run)) => run,
            None => self.last.unwrap_or_else(nothing),
        };
        trial.trial = leaf.trial;
        trial.capacity = Some(CapacityRecord {
            trial: leaf.trial,
            slo: spec.slo.iter().map(ToString::to_string).collect(),
            precision: spec.precision,
            conclusion,
            reason: self
                .reason
                .filter(|_| conclusion == Conclusion::DriverLimited),
            capacity: held,
            achieved,
            failed_at: failed,
            unthrottled: self.search.calibrated(),
            probes: self.probes,
            seconds: self.started.elapsed().as_secs_f64(),
        });
        trial
    }
}

impl<B: Backend> Driver<B> {
    pub(super) async fn run_capacity(
        &self,
        plan: &Plan,
        leaf: &Leaf,
        step: usize,
        spec: &CapacitySpec,
        board: &super::Board,
    ) -> TrialRun {
        let mut s = Searching::new(spec);
        let conclusion = loop {
            let (rate, phase) = match s.search.next_step() {
                Next::Done(c) => break c,
                Next::Probe { rate, phase } => (rate, phase),
            };
            let probe = probe_leaf(leaf, rate, s.probes.len());
            let run = self
                .run_leaves(plan, std::slice::from_ref(&probe), Some(board), Some(step))
                .await
                .remove(0);
            if run.failure.is_some() || run.interrupted || self.stop_reason().is_some() {
                s.last = Some(run);
                break Conclusion::Stopped;
            }
            // A sharded race judges the whole probe: every shard's part, merged, the same
            // on every shard, so that all take the same next step.
            let merged = match self.merged_probe(step, s.probes.len(), &run).await {
                Ok(merged) => merged,
                Err(why) => {
                    self.abort_race(&why);
                    s.last = Some(run);
                    break Conclusion::Stopped;
                }
            };
            let measured = merged.as_ref().map_or(&run.metrics, |m| &m.0);
            let cpu = merged.as_ref().map_or(run.driver.cpu_cores, |m| m.1);
            let cpu = (cpu, run.driver.cores_available);
            let record = probe_record(spec, measured, cpu, run.wall, rate, phase);
            self.narrate(leaf, s.probes.len(), &record);
            s.take(run, record, rate, self.cpu_is_drivers(leaf));
        };
        s.finish(leaf, spec, conclusion, || self.nothing_ran(leaf))
    }

    /// Whether the runner's CPU is the driver's own: not when the embedded engine shares the
    /// process and the task runs on it.
    fn cpu_is_drivers(&self, leaf: &Leaf) -> bool {
        self.backend.embedded_engine().is_none()
            || matches!(leaf.spec, crate::ops::OpSpec::Sleep(_))
    }

    /// Every shard's part of this probe merged (with the busiest shard's CPU); None in a race
    /// of one process.
    async fn merged_probe(
        &self,
        step: usize,
        probe: usize,
        run: &TrialRun,
    ) -> Result<Option<(TrialMetrics, f64)>, String> {
        let Some(gate) = self.opts.gate.as_deref() else {
            return Ok(None);
        };
        let mine = ProbeShare::of(&run.metrics, run.driver.cpu_cores);
        let merged = gate.share_probe(step, probe as u32, mine).await?;
        Ok(Some((merged.metrics()?, merged.cpu_cores)))
    }

    fn nothing_ran(&self, leaf: &Leaf) -> TrialRun {
        TrialRun {
            result: leaf.result.unwrap_or(0),
            driver: Default::default(),
            server: None,
            trial: leaf.trial,
            started_at: chrono::Utc::now(),
            origin: Instant::now(),
            wall: Default::default(),
            metrics: TrialMetrics::merge(Vec::new()),
            failure: None,
            interrupted: true,
            warmup: false,
            capacity: None,
        }
    }

    /// One line per probe, as it ends (unless the race is quiet).
    fn narrate(&self, leaf: &Leaf, index: usize, p: &ProbeRecord) {
        if !self.opts.narrate {
            return;
        }
        let rate = p.target.map_or("unthrottled".into(), |r| {
            format!("{} ops/s", format_number(r))
        });
        let verdict = match (p.verdict, p.within_noise) {
            (None, _) => "calibration".to_string(),
            (Some(v), noise) => format!(
                "{}{}",
                if v == ProbeVerdict::Held {
                    "held"
                } else {
                    "failed"
                },
                if noise { " (within noise)" } else { "" }
            ),
        };
        eprintln!(
            "  {} probe {} ({:?}) at {rate}: achieved {} ops/s, latency p99 {} ms, {} errors: {verdict}",
            leaf.task,
            index + 1,
            p.phase,
            format_number(p.achieved),
            crate::units::ms(p.latency_ms.p99),
            p.errors
        );
    }
}

/// The task's leaf as one probe: a timed window at `rate` (unthrottled to calibrate).
fn probe_leaf(leaf: &Leaf, rate: Option<f64>, index: usize) -> Leaf {
    let mut probe = leaf.clone();
    probe.target_throughput = rate.and_then(|r| OpsPerSec::new(r).ok());
    if probe.target_throughput.is_none() {
        probe.schedule = ScheduleKind::Unthrottled;
    }
    probe.task = match rate {
        Some(r) => format!(
            "{} probe {} at {} ops/s",
            leaf.task,
            index + 1,
            format_number(r)
        ),
        None => format!("{} probe {} unthrottled", leaf.task, index + 1),
    };
    probe.capacity = None;
    probe
}

fn probe_record(
    spec: &CapacitySpec,
    m: &TrialMetrics,
    (cpu_cores, cores_available): (f64, u32),
    wall: std::time::Duration,
    rate: Option<f64>,
    phase: Phase,
) -> ProbeRecord {
    let c = &m.counts;
    let secs = m.measured_window.as_secs_f64();
    let achieved = if secs > 0.0 {
        c.operations as f64 / secs
    } else {
        0.0
    };
    let judgement = rate.map(|target| {
        judge(
            &spec.slo,
            &ProbeMeasure {
                metrics: m,
                target,
                achieved,
            },
        )
    });
    let errors = c.error_count();
    ProbeRecord {
        phase,
        target: rate,
        achieved,
        operations: c.operations,
        errors,
        error_rate: crate::metrics::error_rate(c.successes, errors),
        latency_ms: Percentiles::from_histogram(&m.latency, m.latency_mean_ms),
        service_time_ms: Percentiles::from_histogram(&m.service, m.service_mean_ms),
        verdict: judgement.as_ref().map(|j| j.verdict),
        within_noise: judgement.as_ref().is_some_and(|j| j.uncertain),
        criteria: judgement.map(|j| j.criteria).unwrap_or_default(),
        late_starts: c.late_starts,
        driver_cpu_cores: cpu_cores,
        cores_available,
        seconds: wall.as_secs_f64(),
    }
}

/// Most of its cores the runner may use before a failed probe is called the driver's limit.
const DRIVER_CPU_LIMIT: f64 = 0.9;

/// Why this probe's schedule was the driver's limit, if it was: too many operations started
/// late while their client was free (a client busy with the system's previous response is
/// the system's lag, and counts against the goal), or the runner's CPU near all its cores
/// (when the process is the driver alone: an in-process engine's work is the system's).
fn driver_lagged(p: &ProbeRecord, cpu_is_driver: bool) -> Option<String> {
    let target = p.target?;
    if p.operations == 0 {
        return None;
    }
    let share = p.late_starts as f64 / p.operations as f64;
    let cores = p.cores_available.max(1) as f64;
    let busy = cpu_is_driver && p.driver_cpu_cores >= DRIVER_CPU_LIMIT * cores;
    (share > crate::capacity::LATE_START_LIMIT || busy).then(|| {
        format!(
            "at {} ops/s the driver started {:.1}% of operations over {} ms late while their client was free and used {:.2} of {} cores; the system's capacity may be higher than this search could show",
            format_number(target),
            share * 100.0,
            crate::metrics::LATE_START.as_millis(),
            p.driver_cpu_cores,
            p.cores_available
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::Phase;

    fn probe(operations: u64, late_starts: u64) -> ProbeRecord {
        ProbeRecord {
            phase: Phase::Bisect,
            target: Some(1000.0),
            achieved: 990.0,
            operations,
            errors: 0,
            error_rate: 0.0,
            latency_ms: Default::default(),
            service_time_ms: Default::default(),
            verdict: Some(ProbeVerdict::Failed),
            within_noise: false,
            criteria: Vec::new(),
            late_starts,
            driver_cpu_cores: 1.2,
            cores_available: 2,
            seconds: 15.0,
        }
    }

    #[test]
    fn a_driver_that_started_many_free_operations_late_is_the_limit() {
        let why = driver_lagged(&probe(10_000, 900), true).expect("9% late is the driver's limit");
        assert!(
            why.contains("9.0%") && why.contains("1.20 of 2 cores"),
            "{why}"
        );
        // A few late starts are the machine's noise, not a limit.
        assert!(driver_lagged(&probe(10_000, 100), true).is_none());
        // The unthrottled calibration has no intended starts to be late for.
        let mut calibration = probe(10_000, 900);
        calibration.target = None;
        assert!(driver_lagged(&calibration, true).is_none());
        // A runner on 95% of its cores is the limit, unless an in-process engine is using them.
        let mut busy = probe(10_000, 10);
        busy.driver_cpu_cores = 1.9;
        assert!(driver_lagged(&busy, true).is_some());
        assert!(driver_lagged(&busy, false).is_none());
    }
}
