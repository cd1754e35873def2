//! Change points in a series of races, as Apache Otava (formerly Hunter; arXiv 2301.03034)
//! finds them: E-Divisive means (Matteson & James) splits a segment where the energy distance
//! between its two sides is largest, and — Otava's variant — a split is kept when Student's
//! t-test between the two sides is significant, instead of the original permutation test:
//! deterministic (the same series always gives the same answer, which a CI gate needs) and
//! cheap. Splitting recurses into both sides; then, as Otava does, every change point is tested
//! again against its neighbours (the segments between the change points around it) and the
//! weakest insignificant one dropped, until all hold. The newest race alone, after the last
//! change point, is tested against that segment's prediction interval, so that a CI run can
//! fail on the race that starts a regression, not three races later.

use super::student::{student_p, Side};

/// A change: the series is different from `index` on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The first point after the change.
    pub index: usize,
    pub before: Side,
    pub after: Side,
    pub p_value: f64,
}

/// Most points a series may have: the search is quadratic in a segment's length.
pub const MAX_POINTS: usize = 10_000;
/// Each side of an interior split holds at least this many points.
const MIN_SIDE: usize = 2;

/// The change points of `x` at significance `max_p`, in order.
pub fn change_points(x: &[f64], max_p: f64) -> Vec<ChangePoint> {
    let x = &x[..x.len().min(MAX_POINTS)];
    let mut cuts = Vec::new();
    split(x, 0, x.len(), max_p, &mut cuts);
    cuts.sort_unstable();
    prune(x, &mut cuts, max_p);
    let mut points: Vec<ChangePoint> = cuts
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let lo = if i == 0 { 0 } else { cuts[i - 1] };
            let hi = cuts.get(i + 1).copied().unwrap_or(x.len());
            test(x, lo, c, hi)
        })
        .collect();
    if let Some(last) = newest_alone(x, cuts.last().copied().unwrap_or(0), max_p) {
        points.push(last);
    }
    points
}

/// Splits `x[lo..hi]` where the energy statistic peaks, if the split is significant.
fn split(x: &[f64], lo: usize, hi: usize, max_p: f64, cuts: &mut Vec<usize>) {
    if hi - lo < 2 * MIN_SIDE {
        return;
    }
    let Some(tau) = best_split(&x[lo..hi]).map(|t| lo + t) else {
        return;
    };
    if test(x, lo, tau, hi).p_value <= max_p {
        cuts.push(tau);
        split(x, lo, tau, max_p, cuts);
        split(x, tau, hi, max_p, cuts);
    }
}

/// The split of `s` maximising E-Divisive's Q̂ (α = 1), each side at least `MIN_SIDE` long.
/// The three sums of distances are updated point by point: O(n²) time, O(1) memory.
fn best_split(s: &[f64]) -> Option<usize> {
    let n = s.len();
    let d = |i: usize, j: usize| (s[i] - s[j]).abs();
    // Before τ = MIN_SIDE: within the left, within the right, and between.
    let mut left: f64 = 0.0;
    let mut right: f64 = 0.0;
    let mut between: f64 = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            match (i < MIN_SIDE, j < MIN_SIDE) {
                (true, true) => left += d(i, j),
                (false, false) => right += d(i, j),
                _ => between += d(i, j),
            }
        }
    }
    let mut best: Option<(usize, f64)> = None;
    let mut tau = MIN_SIDE;
    loop {
        let (a, b) = (tau as f64, (n - tau) as f64);
        let q = (a * b / n as f64)
            * (2.0 * between / (a * b)
                - left / (a * (a - 1.0) / 2.0)
                - right / (b * (b - 1.0) / 2.0));
        if best.is_none_or(|(_, bq)| q > bq) {
            best = Some((tau, q));
        }
        if tau + 1 > n - MIN_SIDE {
            break;
        }
        // Move point τ from the right side to the left.
        let to_left: f64 = (0..tau).map(|i| d(i, tau)).sum();
        let to_right: f64 = (tau + 1..n).map(|j| d(tau, j)).sum();
        left += to_left;
        right -= to_right;
        between += to_right - to_left;
        tau += 1;
    }
    best.map(|(t, _)| t)
}

/// Student's test between `x[lo..at]` and `x[at..hi]`.
fn test(x: &[f64], lo: usize, at: usize, hi: usize) -> ChangePoint {
    let (before, after) = (Side::of(&x[lo..at]), Side::of(&x[at..hi]));
    ChangePoint {
        index: at,
        before,
        after,
        p_value: student_p(before, after),
    }
}

/// Drops, one at a time, the weakest change point that no longer holds against the segments
/// between its neighbours.
fn prune(x: &[f64], cuts: &mut Vec<usize>, max_p: f64) {
    loop {
        let weakest = cuts
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let lo = if i == 0 { 0 } else { cuts[i - 1] };
                let hi = cuts.get(i + 1).copied().unwrap_or(x.len());
                (i, test(x, lo, c, hi).p_value)
            })
            .filter(|(_, p)| *p > max_p)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match weakest {
            Some((i, _)) => {
                cuts.remove(i);
            }
            None => return,
        }
    }
}

/// The newest point against the prediction interval of the segment it follows (from the last
/// change point), when that segment has enough points to have one.
fn newest_alone(x: &[f64], from: usize, max_p: f64) -> Option<ChangePoint> {
    let n = x.len();
    if n < 2 || n - 1 < from + 3 {
        return None;
    }
    let before = Side::of(&x[from..n - 1]);
    let last = x[n - 1];
    let p = super::student::prediction_p(before, last);
    (p <= max_p).then_some(ChangePoint {
        index: n - 1,
        before,
        after: Side::of(&x[n - 1..]),
        p_value: p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic noise: a small linear congruential generator, Gaussian by Box-Muller.
    fn noise(seed: u64, n: usize, sd: f64) -> Vec<f64> {
        let mut s = seed;
        let mut uniform = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let (u, v) = (uniform(), uniform());
                sd * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
            })
            .collect()
    }

    #[test]
    fn a_shift_is_found_where_it_starts() {
        for (shift, seed) in [(0.2, 1), (0.5, 2), (0.1, 3)] {
            let mut x: Vec<f64> = noise(seed, 30, 0.02)
                .iter()
                .map(|e| 100.0 * (1.0 + e))
                .collect();
            for v in &mut x[18..] {
                *v *= 1.0 + shift;
            }
            let cps = change_points(&x, 0.001);
            assert_eq!(cps.len(), 1, "shift {shift}: {cps:?}");
            // A 10% shift in 2% noise may be placed one race off.
            assert!(
                cps[0].index.abs_diff(18) <= usize::from(shift < 0.15),
                "shift {shift}: {cps:?}"
            );
            assert!((cps[0].after.mean / cps[0].before.mean - 1.0 - shift).abs() < 0.02);
        }
    }

    #[test]
    fn noise_alone_has_no_change_point() {
        let mut false_positives = 0;
        for seed in 0..50 {
            let x: Vec<f64> = noise(seed, 30, 0.03)
                .iter()
                .map(|e| 100.0 * (1.0 + e))
                .collect();
            false_positives += change_points(&x, 0.001).len();
        }
        assert!(false_positives <= 2, "{false_positives} in 50 flat series");
    }

    #[test]
    fn the_newest_race_alone_can_start_a_change() {
        let mut x: Vec<f64> = noise(9, 20, 0.01)
            .iter()
            .map(|e| 100.0 * (1.0 + e))
            .collect();
        x.push(130.0);
        let cps = change_points(&x, 0.001);
        assert_eq!(cps.last().map(|c| c.index), Some(20), "{cps:?}");
    }

    #[test]
    fn two_changes_are_both_found() {
        let mut x: Vec<f64> = noise(4, 40, 0.02)
            .iter()
            .map(|e| 100.0 * (1.0 + e))
            .collect();
        for v in &mut x[12..] {
            *v *= 1.3;
        }
        for v in &mut x[28..] {
            *v *= 0.7;
        }
        let idx: Vec<usize> = change_points(&x, 0.001).iter().map(|c| c.index).collect();
        assert_eq!(idx, vec![12, 28]);
    }
}
