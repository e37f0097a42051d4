//! Mann–Whitney's test for few values a side (runs, not ranges: 3 to 20 runs of a build),
//! with the exact distribution of the rank sum instead of the normal approximation, which
//! is poor below about 8 values a side. With ties, or more values, the approximation
//! (`significance::mann_whitney`) is used.

use super::significance::mann_whitney;

/// The most values a side counted exactly.
const EXACT_MAX: usize = 20;

/// The two-sided p of the rank-sum test of `a` against `b`; `None` when a side has fewer
/// than 3 values (no difference could be significant).
pub fn rank_test(a: &[u64], b: &[u64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 < 3 || n2 < 3 {
        return None;
    }
    let mut all: Vec<(u64, bool)> = a.iter().map(|&v| (v, true)).collect();
    all.extend(b.iter().map(|&v| (v, false)));
    all.sort_unstable();
    let tied = all.windows(2).any(|w| w[0].0 == w[1].0);
    if tied || n1 > EXACT_MAX || n2 > EXACT_MAX {
        return mann_whitney(a, b);
    }
    // A's rank sum, ranks from 1.
    let rank_sum: usize = all
        .iter()
        .enumerate()
        .filter(|(_, x)| x.1)
        .map(|(i, _)| i + 1)
        .sum();
    let ways = rank_sum_counts(n1, n1 + n2);
    let total: f64 = ways.iter().sum();
    let below: f64 = ways[..=rank_sum].iter().sum();
    let above: f64 = ways[rank_sum..].iter().sum();
    Some((2.0 * below.min(above) / total).min(1.0))
}

/// The change from `a` to `b` in percent, as runs call for it: the Hodges–Lehmann estimate
/// of the ratio (the median of every `b_j / a_i`) and its 95% confidence interval, read
/// from the sorted ratios at the rank test's critical values (exact where [`rank_test`]
/// is, else the normal approximation), so that the interval excludes 0 when, and only
/// when, the test finds the sides apart at about 5%. The percentile bootstrap of a median
/// of ten values is too coarse for this. `None` when a side has fewer than 3 values or a
/// value is 0.
pub fn ratio_change(a: &[u64], b: &[u64]) -> Option<(f64, (f64, f64))> {
    let (m, n) = (a.len(), b.len());
    if m < 3 || n < 3 || a.iter().chain(b).any(|&v| v == 0) {
        return None;
    }
    let mut logs: Vec<f64> = b
        .iter()
        .flat_map(|&y| a.iter().map(move |&x| (y as f64).ln() - (x as f64).ln()))
        .collect();
    logs.sort_by(f64::total_cmp);
    let total = logs.len();
    let estimate = if total % 2 == 1 {
        logs[total / 2]
    } else {
        (logs[total / 2 - 1] + logs[total / 2]) / 2.0
    };
    // c: how many of the smallest (and of the largest) ratios fall outside the interval.
    let c = if m <= EXACT_MAX && n <= EXACT_MAX {
        let ways = rank_sum_counts(m, m + n);
        let all: f64 = ways.iter().sum();
        // U = R - m(m+1)/2: its null distribution from the rank sums'.
        let u: Vec<f64> = ways[m * (m + 1) / 2..].to_vec();
        let mut below = 0.0;
        let mut c = 0;
        while c < u.len() && (below + u[c]) / all <= 0.025 {
            below += u[c];
            c += 1;
        }
        c
    } else {
        let (mf, nf) = (m as f64, n as f64);
        let half = mf * nf / 2.0;
        let spread = 1.959_964 * (mf * nf * (mf + nf + 1.0) / 12.0).sqrt();
        (half - spread).floor().max(0.0) as usize
    };
    let pct = |x: f64| (x.exp() - 1.0) * 100.0;
    let (low, high) = if c == 0 {
        (logs[0], logs[total - 1])
    } else {
        (logs[c], logs[total - 1 - c])
    };
    Some((pct(estimate), (pct(low), pct(high))))
}

/// How many ways `k` ranks of `1..=n` sum to each total (index: the sum).
fn rank_sum_counts(k: usize, n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    // ways[j][s]: subsets of j ranks among those seen so far that sum to s.
    let mut ways = vec![vec![0.0f64; max + 1]; k + 1];
    ways[0][0] = 1.0;
    for rank in 1..=n {
        for j in (1..=k.min(rank)).rev() {
            for s in (rank..=max).rev() {
                ways[j][s] += ways[j - 1][s - rank];
            }
        }
    }
    ways.swap_remove(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_p_values_match_the_tables() {
        // Complete separation of 4 and 4: 2 of C(8,4) = 70 orderings are as extreme.
        let p = rank_test(&[1, 2, 3, 4], &[5, 6, 7, 8]).unwrap();
        assert!((p - 2.0 / 70.0).abs() < 1e-12, "{p}");
        // 10 against 10, completely apart: 2 / C(20,10).
        let a: Vec<u64> = (0..10).collect();
        let b: Vec<u64> = (10..20).collect();
        let p = rank_test(&a, &b).unwrap();
        assert!((p - 2.0 / 184_756.0).abs() < 1e-12, "{p}");
        // Interleaved: nothing to tell apart.
        let p = rank_test(&[1, 3, 5, 7], &[2, 4, 6, 8]).unwrap();
        assert!(p > 0.5, "{p}");
        // Three a side can never reach 0.05 (2 / 20 = 0.1 at best), two are not tested.
        assert!((rank_test(&[1, 2, 3], &[4, 5, 6]).unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(rank_test(&[1, 2], &[3, 4]), None);
    }

    #[test]
    fn the_ratio_interval_agrees_with_the_test() {
        // Ten runs a side 10% apart with ±4% noise: the estimate near +10%, the interval
        // above 0; the same sides swapped, below.
        let a: Vec<u64> = (0..10).map(|i| 1000 + (i * 37 % 9) * 10).collect();
        let b: Vec<u64> = a.iter().map(|v| v * 11 / 10 + 3).collect();
        let (est, (low, high)) = ratio_change(&a, &b).unwrap();
        assert!(
            (9.0..12.0).contains(&est) && low > 0.0 && high < 25.0,
            "{est} [{low}, {high}]"
        );
        let (est, (low, high)) = ratio_change(&b, &a).unwrap();
        assert!(est < 0.0 && high < 0.0, "{est} [{low}, {high}]");
        // The same values: nothing apart, the interval around 0.
        let (est, (low, high)) = ratio_change(&a, &a).unwrap();
        assert!(est.abs() < 1e-9 && low < 0.0 && high > 0.0);
        assert_eq!(ratio_change(&[1, 2], &a), None);
        assert_eq!(ratio_change(&[0, 2, 3], &a), None);
    }

    #[test]
    fn ties_fall_back_to_the_approximation() {
        let a = [5, 5, 6, 7, 8];
        let b = [5, 9, 9, 10, 11];
        assert_eq!(rank_test(&a, &b), mann_whitney(&a, &b));
    }
}
