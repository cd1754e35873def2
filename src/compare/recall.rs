//! Two races' recall compared on every measured answer, not trial medians: each side's
//! answers (its trials' recall histograms added) give a mean and its standard error, and
//! Welch's z-test on the two means decides. A difference under half a point of recall is
//! within noise, whatever its p-value.

use super::{Better, CompareOptions, MetricDiff, Verdict};
use crate::results::TaskRecord;
use hdrhistogram::Histogram;

/// The smallest difference in mean recall that counts (0.5 points).
const RECALL_RESOLUTION: f64 = 0.005;

fn answers(t: &TaskRecord) -> Option<Histogram<u64>> {
    crate::results::RecallRecord::merged(t.complete_trials().filter_map(|tr| tr.recall.as_ref()))
}

/// Mean recall (0 to 1) and the variance of that mean.
fn mean_and_variance(h: &Histogram<u64>) -> (f64, f64) {
    let n = h.len() as f64;
    let sd = h.stdev() / 1000.0;
    (h.mean() / 1000.0, sd * sd / n)
}

/// The recall row of a task both races measured recall on.
pub fn diff(b: &TaskRecord, c: &TaskRecord, opts: CompareOptions) -> Option<MetricDiff> {
    let (bh, ch) = (answers(b)?, answers(c)?);
    let ((bm, bv), (cm, cv)) = (mean_and_variance(&bh), mean_and_variance(&ch));
    let absolute = cm - bm;
    let se = (bv + cv).sqrt();
    let p_value = if se > 0.0 {
        Some(2.0 * (1.0 - super::stats::normal_cdf(absolute.abs() / se)))
    } else if absolute == 0.0 {
        Some(1.0)
    } else {
        // Every answer the same on each side, and the sides differ.
        Some(0.0)
    };
    let verdict = match p_value {
        _ if absolute.abs() < RECALL_RESOLUTION => Verdict::WithinNoise,
        Some(p) if p <= opts.alpha && absolute > 0.0 => Verdict::Improvement,
        Some(p) if p <= opts.alpha => Verdict::Regression,
        _ => Verdict::NotSignificant,
    };
    Some(MetricDiff {
        metric: "recall_mean",
        unit: "ratio".into(),
        better: Better::Higher,
        baseline: bm,
        contender: cm,
        absolute,
        relative: (bm != 0.0).then(|| absolute / bm),
        p_value,
        verdict,
        interval: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(values: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = crate::metrics::recall_histogram();
        for (v, n) in values {
            h.record_n(*v, *n).unwrap();
        }
        h
    }

    #[test]
    fn a_drop_in_recall_over_many_answers_is_a_regression() {
        let (bm, bv) = mean_and_variance(&h(&[(1000, 900), (900, 100)]));
        let (cm, cv) = mean_and_variance(&h(&[(1000, 700), (900, 300)]));
        assert!((bm - 0.99).abs() < 1e-9 && (cm - 0.97).abs() < 1e-9);
        let z = (cm - bm).abs() / (bv + cv).sqrt();
        assert!(z > 5.0, "{z}");
    }
}
