//! The Mann-Whitney U test (as an exact permutation test of rank sums when the samples are
//! small, normal approximation with tie correction otherwise): do two sets of trial results
//! come from the same distribution?

/// Average ranks (1-based) of `values`, ties sharing their mean rank.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|a, b| values[*a].total_cmp(&values[*b]));
    let mut out = vec![0.0; values.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && values[idx[j + 1]] == values[idx[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for k in i..=j {
            out[idx[k]] = rank;
        }
        i = j + 1;
    }
    out
}

/// Above this many arrangements the exact test gives way to the normal approximation.
const EXACT_LIMIT: u64 = 200_000;

fn binomial(n: u64, k: u64) -> u64 {
    (0..k).fold(1u64, |acc, i| acc.saturating_mul(n - i) / (i + 1))
}

/// Two-sided p-value that samples `a` and `b` differ in location. None when either has no values.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return None;
    }
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let r = ranks(&all);
    let observed: f64 = r[n..].iter().sum();
    let expected = m as f64 * (n + m + 1) as f64 / 2.0;
    let distance = (observed - expected).abs();
    if binomial((n + m) as u64, m as u64) <= EXACT_LIMIT {
        // Every way of choosing which m of the n+m results are "b": how often is the rank sum
        // at least as far from its expectation as observed?
        let (mut extreme, mut total) = (0u64, 0u64);
        fn walk(
            r: &[f64],
            start: usize,
            left: usize,
            sum: f64,
            expected: f64,
            distance: f64,
            extreme: &mut u64,
            total: &mut u64,
        ) {
            if left == 0 {
                *total += 1;
                if (sum - expected).abs() >= distance - 1e-9 {
                    *extreme += 1;
                }
                return;
            }
            for i in start..=r.len() - left {
                walk(
                    r,
                    i + 1,
                    left - 1,
                    sum + r[i],
                    expected,
                    distance,
                    extreme,
                    total,
                );
            }
        }
        walk(&r, 0, m, 0.0, expected, distance, &mut extreme, &mut total);
        return Some(extreme as f64 / total as f64);
    }
    let nf = (n + m) as f64;
    let mut tie_term = 0.0;
    let mut sorted = all.clone();
    sorted.sort_by(f64::total_cmp);
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|v| **v == sorted[i]).count();
        tie_term += (j * j * j - j) as f64;
        i += j;
    }
    let variance = n as f64 * m as f64 / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    if variance <= 0.0 {
        return Some(1.0);
    }
    let z = (distance - 0.5).max(0.0) / variance.sqrt();
    Some((2.0 * (1.0 - normal_cdf(z))).clamp(0.0, 1.0))
}

pub(crate) fn normal_cdf(z: f64) -> f64 {
    // Abramowitz & Stegun 7.1.26 for erf; plenty for a significance threshold.
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    let erf = if x >= 0.0 { y } else { -y };
    0.5 * (1.0 + erf)
}

/// The smallest two-sided p-value the exact test can give for samples of `n` and `m`
/// (complete separation): with 3 trials each it is 0.1, so 5% needs at least 4 each.
pub fn smallest_p(n: usize, m: usize) -> f64 {
    let ways = binomial((n + m) as u64, m as u64);
    if ways > EXACT_LIMIT {
        0.0
    } else {
        (2.0 / ways as f64).min(1.0)
    }
}

pub fn median(values: &[f64]) -> f64 {
    crate::report::ThroughputStats::of(values).median
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separated_samples_of_five_are_significant() {
        let p = mann_whitney_p(
            &[10.0, 11.0, 12.0, 13.0, 14.0],
            &[20.0, 21.0, 22.0, 23.0, 24.0],
        )
        .unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
    }

    #[test]
    fn three_against_three_cannot_reach_five_percent() {
        let p = mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!((p - 0.1).abs() < 1e-12, "{p}");
    }

    #[test]
    fn smallest_p_values() {
        assert!((smallest_p(3, 3) - 0.1).abs() < 1e-12);
        assert!(smallest_p(4, 4) < 0.05);
    }

    #[test]
    fn identical_samples_are_not_different() {
        assert_eq!(
            mann_whitney_p(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0]),
            Some(1.0)
        );
        let p = mann_whitney_p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert!(p > 0.5, "{p}");
    }

    #[test]
    fn large_samples_use_the_normal_approximation() {
        let a: Vec<f64> = (0..30).map(f64::from).collect();
        let b: Vec<f64> = (0..30).map(|v| f64::from(v) + 15.0).collect();
        let p = mann_whitney_p(&a, &b).unwrap();
        assert!(p < 0.01, "{p}");
        let same = mann_whitney_p(&a, &a).unwrap();
        assert!(same > 0.9, "{same}");
    }

    #[test]
    fn ranks_average_ties() {
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
    }
}
