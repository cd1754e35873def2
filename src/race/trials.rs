//! Each trial as it ends: printed (unless quiet), stored in a file of its own, and kept for
//! the race's consolidated record.

use crate::backend::credentials::Redactor;
use crate::driver::TrialRun;
use crate::metrics::{encode_histogram, Percentiles};
use crate::results::*;
use crate::shard::Member;
use crate::units::{format_number, format_significant, Timestamp};
use std::collections::BTreeMap;

/// Where the trials of a running race go.
pub(super) struct TrialSink<'a> {
    pub record: RaceRecord,
    pub histograms: HistogramFile,
    store: &'a RaceStore,
    redactor: &'a Redactor,
    member: Option<&'a Member>,
    quiet: bool,
    /// The first trial that could not be stored as it ended.
    pub store_error: Option<StoreError>,
    /// Trials stored as they ended.
    pub stored_trials: usize,
}

impl<'a> TrialSink<'a> {
    pub fn new(
        record: RaceRecord,
        store: &'a RaceStore,
        redactor: &'a Redactor,
        member: Option<&'a Member>,
        quiet: bool,
    ) -> Self {
        TrialSink {
            record,
            histograms: HistogramFile {
                format: FORMAT_VERSION,
                trials: Vec::new(),
            },
            store,
            redactor,
            member,
            quiet,
            store_error: None,
            stored_trials: 0,
        }
    }

    /// Takes a trial that ended: a warmup one is only shown; a recorded one is stored as it
    /// ends, in a file of its own (a killed race keeps all completed trials, and a trial costs
    /// the same to store whatever came before it).
    pub fn take(&mut self, run: TrialRun) {
        let mut tr = trial_record(&run, self.redactor, self.member);
        if let Some(ramp) = &self.record.tasks[run.result].slot.ramp {
            // Seconds before the one the first measured operation started in held only warmup.
            let warmup = run
                .metrics
                .window
                .map_or(0.0, |(a, _)| a.as_secs_f64().floor());
            tr.rate_by_second = Some(RateBySecond::of(ramp, &run.metrics.units_by_second, warmup));
        }
        if !self.quiet {
            self.print(&run, &tr);
        }
        if run.warmup {
            return;
        }
        let trial_histograms = TrialHistograms {
            task_index: run.result,
            trial: run.trial,
            service_time_us: encode_histogram(&run.metrics.service),
            latency_us: encode_histogram(&run.metrics.latency),
            parts: part_histograms(&run.metrics),
        };
        let seq = self.histograms.trials.len();
        if let Some(samples) = &run.metrics.samples {
            // Before the trial's record, which names the file: a record never names samples
            // that were not written.
            match self.store.write_samples(&self.record.race_id, seq, samples) {
                Ok(file) => {
                    tr.samples = Some(SamplesRecord {
                        file,
                        seen: samples.seen,
                        kept: samples.samples.len() as u64,
                    })
                }
                Err(e) => {
                    self.store_error.get_or_insert(e);
                }
            }
        }
        let stored = StoredTrial::new(run.result, tr, trial_histograms);
        match self.store.append_trial(&self.record.race_id, seq, &stored) {
            Ok(()) => self.stored_trials += 1,
            Err(e) => {
                self.store_error.get_or_insert(e);
            }
        }
        self.histograms.trials.push(stored.histograms);
        self.record.tasks[run.result].trials.push(stored.record);
    }

    fn print(&self, run: &TrialRun, tr: &TrialRecord) {
        let task = &self.record.tasks[run.result];
        let status = match (&tr.failure, tr.interrupted) {
            _ if tr.capacity.is_some() => capacity_line(tr.capacity.as_ref().expect("matched")),
            (Some(f), _) => format!("failed: {f}"),
            (None, true) => "interrupted".into(),
            (None, false) => finished_line(tr, task.slot.throughput_unit.as_str()),
        };
        if run.warmup {
            eprintln!(
                "  {} [{}] warmup trial {}/{}: {status} (not recorded)",
                task.slot.task,
                task.sweep_label(),
                run.trial + 1,
                task.slot.warmup_trials
            );
        } else {
            eprintln!(
                "  {} [{}] trial {}/{}: {status}",
                task.slot.task,
                task.sweep_label(),
                run.trial + 1,
                task.slot.planned_trials
            );
        }
    }
}

/// A finished trial in a line: its rate in the task's unit, latency and errors.
fn finished_line(tr: &TrialRecord, unit: &str) -> String {
    let p = |q: f64| tr.latency_ms.at(q).map_or("-".into(), format_significant);
    let errors = match tr.errors {
        0 => "no errors".to_string(),
        n => format!(
            "{n} errors ({}%)",
            format_significant(tr.error_rate * 100.0)
        ),
    };
    format!(
        "{} {unit} · latency p50 {} p99 {} ms · {errors}",
        format_significant(tr.throughput),
        p(50.0),
        p(99.0),
    )
}

/// A search in a line: the capacity and its bracket, the probes and the time they took.
fn capacity_line(c: &crate::capacity::CapacityRecord) -> String {
    let rate = |v: Option<f64>| v.map_or("-".into(), format_number);
    format!(
        "capacity {} ops/s (achieved {}; lowest failed {}) · {} probes in {:.0} s · {}",
        rate(c.capacity),
        rate(c.achieved),
        rate(c.failed_at),
        c.probes.len(),
        c.seconds,
        c.conclusion.describe()
    )
}

fn trial_record(run: &TrialRun, redactor: &Redactor, shard: Option<&Member>) -> TrialRecord {
    let m = &run.metrics;
    let c = &m.counts;
    let mut errors_by_kind = BTreeMap::new();
    let mut error_messages = BTreeMap::new();
    for kind in crate::backend::ErrorKind::ALL {
        let n = c.errors[kind.index()];
        if n > 0 {
            errors_by_kind.insert(kind.into(), n);
        }
        if let Some(msg) = &c.first_error[kind.index()] {
            // A server may echo the Authorization header or quote a password back.
            error_messages.insert(kind.into(), redactor.redact(msg));
        }
    }
    let errors = c.error_count();
    TrialRecord {
        trial: run.trial,
        started_at: Timestamp::millis(run.started_at),
        wall_seconds: run.wall.as_secs_f64(),
        interrupted: run.interrupted,
        interrupted_operations: c.interrupted_operations,
        driver: Some((&run.driver).into()),
        server: run
            .server
            .as_ref()
            .and_then(|s| s.as_ref().ok())
            .map(Into::into),
        server_stats_error: run
            .server
            .as_ref()
            .and_then(|s| s.as_ref().err())
            .map(|e| redactor.redact(e)),
        failure: run.failure.as_deref().map(|f| redactor.redact(f)),
        throughput: if m.throughput().is_finite() {
            m.throughput()
        } else {
            0.0
        },
        measured_seconds: m.measured_window.as_secs_f64(),
        operations: c.operations,
        warmup_operations: c.warmup_operations,
        warmup_units: c.warmup_units,
        successes: c.successes,
        errors,
        errors_by_kind,
        error_messages,
        error_rate: crate::metrics::error_rate(c.successes, errors),
        units: c.units,
        requests: c.requests,
        requests_per_second: if m.measured_window.is_zero() {
            0.0
        } else {
            c.requests as f64 / m.measured_window.as_secs_f64()
        },
        hits: c.hits,
        service_time_ms: Percentiles::from_histogram(&m.service, m.service_mean_ms),
        latency_ms: Percentiles::from_histogram(&m.latency, m.latency_mean_ms),
        throughput_per_second: m.per_second.clone(),
        parts: part_records(m),
        clock: shard.map(|member| TrialClock {
            origin_ns: member.shared_ns(run.origin),
            window_s: m.window.map(|(a, b)| (a.as_secs_f64(), b.as_secs_f64())),
            units_by_second: m.units_by_second.clone(),
        }),
        per_shard: Vec::new(),
        late_starts: c.late_starts,
        partial_searches: c.partial_searches,
        capacity: run.capacity.clone(),
        rate_by_second: None,
        imported: false,
        recall: m.recall.as_ref().and_then(crate::results::RecallRecord::of),
        runner_numbers: m.runner_numbers.clone(),
        samples: None,
        timeline: m.timeline.clone(),
        measured_s: m.window.map(|(a, b)| [a.as_secs_f64(), b.as_secs_f64()]),
    }
}

fn part_histograms(m: &crate::metrics::TrialMetrics) -> BTreeMap<String, PartHistograms> {
    let Some(parts) = &m.parts else {
        return BTreeMap::new();
    };
    parts
        .used()
        .filter_map(|(label, _, times)| {
            times.map(|t| {
                (
                    label.to_string(),
                    PartHistograms {
                        service_time_us: encode_histogram(&t.service),
                        latency_us: encode_histogram(&t.latency),
                    },
                )
            })
        })
        .collect()
}

fn part_records(m: &crate::metrics::TrialMetrics) -> BTreeMap<String, PartRecord> {
    let Some(parts) = &m.parts else {
        return BTreeMap::new();
    };
    parts
        .used()
        .map(|(label, requests, times)| {
            (
                label.to_string(),
                PartRecord {
                    requests,
                    service_time_ms: times.map(|t| {
                        Percentiles::from_histogram(&t.service, t.means_ms().map(|m| m.0))
                    }),
                    latency_ms: times.map(|t| {
                        Percentiles::from_histogram(&t.latency, t.means_ms().map(|m| m.1))
                    }),
                },
            )
        })
        .collect()
}
