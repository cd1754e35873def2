//! The one read API for stored histograms: decoded once when a race is loaded, merged per
//! task here, so that reports, plots and compare never see base64 and a histogram that
//! cannot be read is named (in `problems`), never silently dropped.

use super::model::HistogramFile;
use crate::metrics::{decode_histogram, new_histogram};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

struct Trial {
    task_index: usize,
    service: Histogram<u64>,
    latency: Histogram<u64>,
    /// Latency by labelled part (a mix's commands).
    parts: BTreeMap<String, Histogram<u64>>,
}

/// A race's histograms, decoded.
#[derive(Default)]
pub struct RaceHistograms {
    trials: Vec<Trial>,
    /// What could not be read, one line each (task, trial and why); reports show these.
    pub problems: Vec<String>,
}

impl RaceHistograms {
    pub fn decode(file: &HistogramFile) -> RaceHistograms {
        let mut out = RaceHistograms::default();
        for t in &file.trials {
            let what = |h: &str| {
                format!(
                    "the {h} histogram of task #{} trial {}",
                    t.task_index + 1,
                    t.trial + 1
                )
            };
            let (service, latency) = match (
                decode_histogram(&t.service_time_us),
                decode_histogram(&t.latency_us),
            ) {
                (Ok(s), Ok(l)) => (s, l),
                (Err(e), _) => {
                    out.problems.push(format!(
                        "{} cannot be read ({e}): left out",
                        what("service time")
                    ));
                    continue;
                }
                (_, Err(e)) => {
                    out.problems.push(format!(
                        "{} cannot be read ({e}): left out",
                        what("latency")
                    ));
                    continue;
                }
            };
            let mut parts = BTreeMap::new();
            for (label, p) in &t.parts {
                match decode_histogram(&p.latency_us) {
                    Ok(h) => {
                        parts.insert(label.clone(), h);
                    }
                    Err(e) => out.problems.push(format!(
                        "{} cannot be read ({e}): left out",
                        what(&format!("`{label}` latency"))
                    )),
                }
            }
            out.trials.push(Trial {
                task_index: t.task_index,
                service,
                latency,
                parts,
            });
        }
        out
    }

    /// Service time and latency of all of a task's stored trials, merged exactly; None when
    /// none of its trials has histograms.
    pub fn merged(&self, task_index: usize) -> Option<(Histogram<u64>, Histogram<u64>)> {
        let mut trials = self
            .trials
            .iter()
            .filter(|t| t.task_index == task_index)
            .peekable();
        trials.peek()?;
        let (mut service, mut latency) = (new_histogram(), new_histogram());
        for t in trials {
            add(&mut service, &t.service);
            add(&mut latency, &t.latency);
        }
        Some((service, latency))
    }

    /// Latency by labelled part of a task's trials, merged.
    pub fn merged_parts(&self, task_index: usize) -> BTreeMap<&str, Histogram<u64>> {
        let mut out: BTreeMap<&str, Histogram<u64>> = BTreeMap::new();
        for t in self.trials.iter().filter(|t| t.task_index == task_index) {
            for (label, h) in &t.parts {
                add(out.entry(label.as_str()).or_insert_with(new_histogram), h);
            }
        }
        out
    }
}

/// Adds `from` into `into`. Every stored histogram has the one configuration
/// ([`new_histogram`]); one that does not saturates at the highest trackable value instead
/// of being dropped.
pub fn add(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    if into.add(from).is_err() {
        for v in from.iter_recorded() {
            into.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::encode_histogram;
    use crate::results::{PartHistograms, TrialHistograms};

    fn trial(task_index: usize, trial: u64, values: &[u64]) -> TrialHistograms {
        let mut h = new_histogram();
        values.iter().for_each(|v| h.record(*v).unwrap());
        let encoded = encode_histogram(&h);
        let parts = BTreeMap::from([(
            "get".to_string(),
            PartHistograms {
                service_time_us: encoded.clone(),
                latency_us: encoded.clone(),
            },
        )]);
        TrialHistograms {
            task_index,
            trial,
            service_time_us: encoded.clone(),
            latency_us: encoded,
            parts,
        }
    }

    #[test]
    fn merges_per_task_and_names_what_cannot_be_read() {
        let mut broken = trial(0, 2, &[1]);
        broken.latency_us = "not base64!".into();
        let file = HistogramFile {
            format: 1,
            trials: vec![
                trial(0, 0, &[100, 200]),
                trial(1, 0, &[5]),
                trial(0, 1, &[300]),
                broken,
            ],
        };
        let h = RaceHistograms::decode(&file);
        let (service, latency) = h.merged(0).unwrap();
        assert_eq!((service.len(), latency.len(), service.max()), (3, 3, 300));
        assert_eq!(h.merged(1).unwrap().0.len(), 1);
        assert!(h.merged(2).is_none());
        assert_eq!(h.merged_parts(0)["get"].len(), 3);
        assert_eq!(h.problems.len(), 1);
        assert!(
            h.problems[0].contains("latency histogram of task #1 trial 3"),
            "{}",
            h.problems[0]
        );
    }
}
