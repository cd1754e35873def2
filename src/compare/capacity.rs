//! Two races' capacities compared. A search brackets the capacity between the highest rate
//! that held and the lowest that failed, so each side is an interval, not a sample; the
//! difference is better or worse only when the intervals do not overlap (and the medians
//! differ by more than the noise threshold), and the interval of the relative difference
//! (contender's bracket over baseline's) is shown beside it.

use super::{Better, CompareOptions, MetricDiff, Verdict};
use crate::results::TaskRecord;
use serde::Serialize;

/// Each side's bracket and the relative difference's interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CapacityIntervals {
    pub baseline: (f64, f64),
    pub contender: (f64, f64),
    /// The contender's capacity over the baseline's, minus one: lowest and highest the two
    /// brackets allow.
    pub relative: (f64, f64),
}

/// The capacities found by a task's searches, and the hull of their brackets.
fn side(t: &TaskRecord) -> Option<(Vec<f64>, (f64, f64))> {
    let intervals: Vec<(f64, f64)> = t
        .trials
        .iter()
        .filter_map(|tr| tr.capacity.as_ref()?.interval())
        .collect();
    if intervals.is_empty() {
        return None;
    }
    let found = intervals.iter().map(|i| i.0).collect();
    let lo = intervals.iter().map(|i| i.0).fold(f64::INFINITY, f64::min);
    let hi = intervals.iter().map(|i| i.1).fold(0.0, f64::max);
    Some((found, (lo, hi)))
}

/// The capacity row of a task both races searched, if both did.
pub fn diff(b: &TaskRecord, c: &TaskRecord, opts: CompareOptions) -> Option<MetricDiff> {
    let (bv, bi) = side(b)?;
    let (cv, ci) = side(c)?;
    let (baseline, contender) = (super::stats::median(&bv), super::stats::median(&cv));
    let absolute = contender - baseline;
    let relative = (baseline > 0.0).then(|| absolute / baseline);
    let beyond_noise = relative.is_some_and(|r| r.abs() >= opts.noise_threshold);
    let verdict = if !beyond_noise {
        Verdict::WithinNoise
    } else if ci.0 > bi.1 {
        Verdict::Improvement
    } else if ci.1 < bi.0 {
        Verdict::Regression
    } else {
        // The brackets overlap: the searches cannot tell the two apart.
        Verdict::NotSignificant
    };
    let ratio = |x: f64, y: f64| if y > 0.0 { x / y - 1.0 } else { 0.0 };
    Some(MetricDiff {
        metric: "capacity",
        unit: "ops/s".into(),
        better: Better::Higher,
        baseline,
        contender,
        absolute,
        relative,
        p_value: None,
        verdict,
        interval: Some(CapacityIntervals {
            baseline: bi,
            contender: ci,
            relative: (ratio(ci.0, bi.1), ratio(ci.1, bi.0)),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::{CapacityRecord, Conclusion};

    fn task(brackets: &[(f64, f64)]) -> TaskRecord {
        let race: crate::results::RaceRecord = serde_json::from_str(include_str!(
            "../../tests/fixtures/stored-races/geonames-test-mode/race.json"
        ))
        .unwrap();
        let mut t = race.tasks[0].clone();
        let template = t.trials[0].clone();
        t.trials = brackets
            .iter()
            .enumerate()
            .map(|(i, (held, failed))| {
                let mut tr = template.clone();
                tr.trial = i as u64;
                tr.capacity = Some(CapacityRecord {
                    trial: i as u64,
                    slo: vec!["latency.p99 < 20ms".into()],
                    precision: 0.02,
                    conclusion: Conclusion::Found,
                    reason: None,
                    capacity: Some(*held),
                    achieved: Some(*held),
                    failed_at: Some(*failed),
                    unthrottled: None,
                    probes: Vec::new(),
                    seconds: 1.0,
                });
                tr
            })
            .collect();
        t
    }

    #[test]
    fn brackets_apart_are_a_difference_and_overlapping_ones_are_not() {
        let o = CompareOptions::default();
        let base = task(&[(392.0, 400.0)]);
        let better = task(&[(490.0, 500.0)]);
        let d = diff(&base, &better, o).unwrap();
        assert_eq!(d.verdict, Verdict::Improvement);
        let i = d.interval.unwrap();
        assert!((i.relative.0 - (490.0 / 400.0 - 1.0)).abs() < 1e-12);
        assert!((i.relative.1 - (500.0 / 392.0 - 1.0)).abs() < 1e-12);
        assert_eq!(
            diff(&better, &base, o).unwrap().verdict,
            Verdict::Regression
        );
        // 6% apart, but the brackets overlap: not significant.
        let wide = task(&[(300.0, 500.0)]);
        let near = task(&[(420.0, 440.0)]);
        assert_eq!(
            diff(&wide, &near, o).unwrap().verdict,
            Verdict::NotSignificant
        );
        // Within the noise threshold: within noise.
        let close = task(&[(396.0, 404.0)]);
        assert_eq!(
            diff(&base, &close, o).unwrap().verdict,
            Verdict::WithinNoise
        );
    }
}
