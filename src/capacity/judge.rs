//! One probe judged against the SLO, with how sure the verdict is. A criterion is *within
//! noise* when its limit lies inside the statistic's 95% confidence interval, widened to at
//! least ±5% of the value for timings (run-to-run variation on a shared machine, which no
//! interval from one window sees): a percentile's interval comes from the ranks of the order
//! statistics (distribution-free: the p-quantile of n samples lies between the samples of
//! rank n·p ∓ 1.96·√(n·p·(1-p))), a mean's from its standard error, an error rate's from the
//! Wilson score interval.

use super::{CriterionRecord, ProbeVerdict};
use crate::metrics::{value_at_percentile, TrialMetrics};
use crate::thresholds::{Bound, Metric, Stat, Threshold};
use hdrhistogram::Histogram;

const Z: f64 = 1.96;
/// Timings are never called certain closer than this to their limit.
const TIMING_NOISE: f64 = 0.05;
/// Nor an achieved rate closer than this to its share of the target.
const RATE_NOISE: f64 = 0.02;

/// A probe's verdict and the criteria behind it.
#[derive(Debug, Clone)]
pub struct Judgement {
    pub verdict: ProbeVerdict,
    /// Flipping one or more uncertain criteria could change the verdict.
    pub uncertain: bool,
    pub criteria: Vec<CriterionRecord>,
}

/// What one probe measured, as the SLO reads it.
pub struct ProbeMeasure<'a> {
    pub metrics: &'a TrialMetrics,
    /// The probe's target, ops/s.
    pub target: f64,
    /// Achieved operations per second over the measured window.
    pub achieved: f64,
}

pub fn judge(slo: &[Threshold], m: &ProbeMeasure) -> Judgement {
    let criteria: Vec<CriterionRecord> = slo.iter().map(|c| criterion(c, m)).collect();
    let held = criteria.iter().all(|c| c.held);
    // A held probe is in doubt if any criterion could fail; a failed one only if every
    // failing criterion could hold.
    let uncertain = if held {
        criteria.iter().any(|c| c.within_noise)
    } else {
        criteria.iter().filter(|c| !c.held).all(|c| c.within_noise)
    };
    Judgement {
        verdict: if held {
            ProbeVerdict::Held
        } else {
            ProbeVerdict::Failed
        },
        uncertain,
        criteria,
    }
}

fn criterion(c: &Threshold, m: &ProbeMeasure) -> CriterionRecord {
    let (value, interval) = match c.metric {
        Metric::Latency(stat) => timing(&m.metrics.latency, stat, m.metrics.latency_mean_ms),
        Metric::ServiceTime(stat) => timing(&m.metrics.service, stat, m.metrics.service_mean_ms),
        Metric::ErrorRate => {
            let counts = &m.metrics.counts;
            let errors = counts.error_count();
            wilson(errors, counts.successes + errors)
        }
        Metric::Throughput => {
            let v = m.achieved;
            (Some(v), (v * (1.0 - RATE_NOISE), v * (1.0 + RATE_NOISE)))
        }
        Metric::Recall(stat) => match &m.metrics.recall {
            Some(h) if !h.is_empty() => recall(h, stat),
            _ => (None, (0.0, 0.0)),
        },
    };
    let bound = match c.bound {
        Bound::Millis(v) | Bound::Ratio(v) | Bound::Rate(v) => v,
        Bound::OfTarget(share) => share * m.target,
    };
    let Some(value) = value else {
        // Nothing measured holds no goal.
        return CriterionRecord {
            criterion: c.to_string(),
            value: None,
            interval: None,
            held: false,
            within_noise: false,
        };
    };
    let held = c.cmp.holds(value, bound);
    CriterionRecord {
        criterion: c.to_string(),
        value: Some(value),
        interval: Some(interval),
        held,
        within_noise: interval.0 <= bound && bound <= interval.1,
    }
}

/// A recall statistic (histograms hold thousandths) and its interval: a mean's from its
/// standard error, a percentile's from order-statistic ranks, the minimum as it is.
fn recall(h: &Histogram<u64>, stat: crate::thresholds::RecallStat) -> (Option<f64>, (f64, f64)) {
    use crate::thresholds::RecallStat;
    let (value, lo, hi) = match stat {
        RecallStat::Min => {
            let v = h.min() as f64 / 1000.0;
            (v, v, v)
        }
        RecallStat::Mean => statistic(h, Stat::Mean, None),
        RecallStat::P5 => statistic(h, Stat::Percentile(5.0), None),
        RecallStat::P50 => statistic(h, Stat::Percentile(50.0), None),
    };
    (Some(value), (lo, hi))
}

/// A statistic of a histogram, its values divided by 1,000 (µs to ms, thousandths to a
/// ratio), with its 95% interval.
fn statistic(h: &Histogram<u64>, stat: Stat, exact_mean: Option<f64>) -> (f64, f64, f64) {
    let n = h.len();
    let ms = |us: u64| us as f64 / 1000.0;
    match stat {
        Stat::Mean => {
            let mean = exact_mean.unwrap_or(h.mean() / 1000.0);
            let half = Z * h.stdev() / 1000.0 / (n as f64).sqrt();
            (mean, mean - half, mean + half)
        }
        Stat::Percentile(q) => {
            let p = q / 100.0;
            let half = Z * (p * (1.0 - p) / n as f64).sqrt();
            (
                ms(value_at_percentile(h, q)),
                ms(value_at_percentile(h, ((p - half) * 100.0).max(0.0))),
                ms(value_at_percentile(h, ((p + half) * 100.0).min(100.0))),
            )
        }
    }
}

/// A timing statistic in ms and its interval; None when nothing was measured.
fn timing(h: &Histogram<u64>, stat: Stat, exact_mean_ms: Option<f64>) -> (Option<f64>, (f64, f64)) {
    let n = h.len();
    if n == 0 {
        return (None, (0.0, 0.0));
    }
    let (value, lo, hi) = statistic(h, stat, exact_mean_ms);
    let lo = lo.min(value * (1.0 - TIMING_NOISE));
    let hi = hi.max(value * (1.0 + TIMING_NOISE));
    (Some(value), (lo, hi))
}

/// An error rate and its Wilson score interval; None when no operation ended.
fn wilson(errors: u64, n: u64) -> (Option<f64>, (f64, f64)) {
    if n == 0 {
        return (None, (0.0, 0.0));
    }
    let (n, p) = (n as f64, errors as f64 / n as f64);
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    (
        Some(p),
        ((centre - half).max(0.0), (centre + half).min(1.0)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{new_histogram, Counts};
    use std::time::Duration;

    fn metrics(latencies_us: &[(u64, u64)], successes: u64, errors: u64) -> TrialMetrics {
        let mut latency = new_histogram();
        for &(v, n) in latencies_us {
            latency.record_n(v, n).unwrap();
        }
        let mut counts = Counts {
            successes,
            operations: successes + errors,
            ..Counts::default()
        };
        counts.errors[0] = errors;
        TrialMetrics {
            service: latency.clone(),
            latency,
            service_mean_ms: None,
            latency_mean_ms: None,
            counts,
            measured_window: Duration::from_secs(10),
            per_second: Vec::new(),
            window: None,
            units_by_second: Vec::new(),
            cut_short: false,
            parts: None,
            recall: None,
            runner_numbers: Default::default(),
            samples: None,
            timeline: Vec::new(),
        }
    }

    fn slo(text: &str) -> Vec<Threshold> {
        vec![text.parse().unwrap()]
    }

    fn measure(m: &TrialMetrics) -> ProbeMeasure<'_> {
        ProbeMeasure {
            metrics: m,
            target: 100.0,
            achieved: 100.0,
        }
    }

    #[test]
    fn far_from_the_limit_is_certain_either_way() {
        // 4,000 operations at 10 ms: p99 is 10 ms, far below 20 ms.
        let m = metrics(&[(10_000, 4_000)], 4_000, 0);
        let j = judge(&slo("latency.p99 < 20ms"), &measure(&m));
        assert_eq!(j.verdict, ProbeVerdict::Held);
        assert!(!j.uncertain);
        // Half of them at 100 ms: p99 is 100 ms, far above.
        let m = metrics(&[(10_000, 2_000), (100_000, 2_000)], 4_000, 0);
        let j = judge(&slo("latency.p99 < 20ms"), &measure(&m));
        assert_eq!(j.verdict, ProbeVerdict::Failed);
        assert!(!j.uncertain);
    }

    #[test]
    fn a_percentile_whose_interval_spans_the_limit_is_within_noise() {
        // 1,000 samples; the slowest 1.2% at 25 ms: p99 is 25 ms, but the 95% interval of
        // p99's rank (990 ± 6.2) reaches the 10 ms samples below, so the verdict is in doubt.
        let m = metrics(&[(10_000, 988), (25_000, 12)], 1_000, 0);
        let j = judge(&slo("latency.p99 < 20ms"), &measure(&m));
        assert_eq!(j.verdict, ProbeVerdict::Failed);
        assert!(j.uncertain, "{:?}", j.criteria);
        // A value within 5% of the limit is in doubt however many samples there are.
        let m = metrics(&[(19_500, 100_000)], 100_000, 0);
        let j = judge(&slo("latency.p99 < 20ms"), &measure(&m));
        assert_eq!(j.verdict, ProbeVerdict::Held);
        assert!(j.uncertain);
    }

    #[test]
    fn error_rates_are_judged_with_the_wilson_interval() {
        // 0 errors in 10,000: the upper end (3.8e-4) is below 0.1%: certain.
        let m = metrics(&[(1_000, 10_000)], 10_000, 0);
        let j = judge(&slo("error_rate < 0.1%"), &measure(&m));
        assert_eq!((j.verdict, j.uncertain), (ProbeVerdict::Held, false));
        // 1 error in 1,000 is exactly the limit: failed (not below), and in doubt.
        let m = metrics(&[(1_000, 1_000)], 999, 1);
        let j = judge(&slo("error_rate < 0.1%"), &measure(&m));
        assert_eq!((j.verdict, j.uncertain), (ProbeVerdict::Failed, true));
    }

    #[test]
    fn nothing_measured_holds_nothing() {
        let m = metrics(&[], 0, 0);
        let j = judge(&slo("latency.p50 < 1s"), &measure(&m));
        assert_eq!((j.verdict, j.uncertain), (ProbeVerdict::Failed, false));
    }

    #[test]
    fn a_share_of_the_target_is_of_the_probes_rate() {
        let m = metrics(&[(1_000, 1_000)], 1_000, 0);
        let short = ProbeMeasure {
            metrics: &m,
            target: 100.0,
            achieved: 80.0,
        };
        let j = judge(&slo("throughput >= 95% of target"), &short);
        assert_eq!((j.verdict, j.uncertain), (ProbeVerdict::Failed, false));
    }
}
