//! Whether two samples of durations differ: the Mann–Whitney U test (is one side
//! stochastically larger?) and a bootstrap confidence interval of the change of the median,
//! both deterministic (a seeded splitmix64), so that `utrace diff` says the same every run.

/// Fewer ranges than this on a side cannot be significant: the normal approximation of U
/// is poor there, and a handful of ranges says little about a GPU's timing anyway.
pub const MIN_SAMPLES: usize = 5;

/// Bootstrap resamples per interval.
const RESAMPLES: usize = 1000;

/// At most this many draws per side and resample, so that a group of millions of draws
/// stays fast. Drawing fewer than the sample holds (an m-out-of-n bootstrap) spreads the
/// resampled medians wider: the interval of a huge group is conservative, never too narrow.
const MAX_DRAWS: usize = 2000;

/// splitmix64 (Steele, Lea, Flood 2014): a tiny PRNG, good enough for resampling, the same
/// sequence for the same seed on every machine.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`), by multiply-high: its bias, at most n / 2^64, is
    /// nothing next to a bootstrap's own noise.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// A seed made from a text (FNV-1a), so each group's resampling depends on its own key
/// alone, not on which other groups the traces hold.
pub fn seed(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
/// Reorders `values`.
pub fn median(values: &mut [u64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    let (_, &mut upper, _) = values.select_nth_unstable(n / 2);
    if n % 2 == 1 {
        return upper as f64;
    }
    // The lower middle is the largest of the half below the upper one.
    let lower = values[..n / 2].iter().copied().max().unwrap_or(upper);
    (lower as f64 + upper as f64) / 2.0
}

/// The change from `a` to `b` in percent; a change from 0 to more is infinite.
pub fn change_pct(a: f64, b: f64) -> f64 {
    if a == 0.0 {
        if b == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (b - a) / a * 100.0
    }
}

/// The two-sided p-value of the Mann–Whitney U test of `a` against `b`; `None` when a side
/// has fewer than [`MIN_SAMPLES`].
///
/// It assumes that the durations are independent draws, within and between the samples,
/// and tests whether one side tends to be larger than the other (P(a > b) ≠ 1/2), which
/// for two distributions of the same shape is a shift of the median. It uses the normal
/// approximation of U (with the variance corrected for ties, and a continuity correction),
/// sound from about 8 values a side. Ranges of one trace are not quite independent (warm-up,
/// frames sharing a cache), so the p-value is a guide, not a proof.
pub fn mann_whitney(a: &[u64], b: &[u64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 < MIN_SAMPLES || n2 < MIN_SAMPLES {
        return None;
    }
    // Every value with its side, in order; ties get the mean of the ranks they span.
    let mut all: Vec<(u64, bool)> = a.iter().map(|&v| (v, true)).collect();
    all.extend(b.iter().map(|&v| (v, false)));
    all.sort_unstable();
    let total = all.len();
    let mut rank_sum_a = 0.0;
    let mut ties = 0.0; // Σ (t³ − t) over the groups of t tied values.
    let mut start = 0;
    while start < total {
        let end = start
            + all[start..]
                .iter()
                .take_while(|x| x.0 == all[start].0)
                .count();
        let t = (end - start) as f64;
        // Ranks start + 1 ..= end, their mean:
        let rank = (start + 1 + end) as f64 / 2.0;
        let in_a = all[start..end].iter().filter(|x| x.1).count() as f64;
        rank_sum_a += rank * in_a;
        ties += t * t * t - t;
        start = end;
    }
    let (n1, n2, n) = (n1 as f64, n2 as f64, total as f64);
    let u = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if variance <= 0.0 {
        // Every value is the same: nothing tells the sides apart.
        return Some(1.0);
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / variance.sqrt();
    Some(erfc(z / std::f64::consts::SQRT_2).min(1.0))
}

/// The complementary error function, for x ≥ 0 (Numerical Recipes' `erfcc`, a Chebyshev
/// fit with a relative error below 1.2e-7: plenty for a p-value).
fn erfc(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.5 * x);
    let poly = -1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    t * (-x * x + poly).exp()
}

/// The 95% bootstrap (percentile) interval of the change of the median from `a` to `b`, in
/// percent: each resample draws each side with replacement (at most [`MAX_DRAWS`] draws a
/// side), with the sequence `seed` starts. `None` when a side is empty.
pub fn median_change_ci(a: &[u64], b: &[u64], seed: u64) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let mut draw_a = vec![0; a.len().min(MAX_DRAWS)];
    let mut draw_b = vec![0; b.len().min(MAX_DRAWS)];
    let mut changes: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            resample(a, &mut draw_a, &mut rng);
            resample(b, &mut draw_b, &mut rng);
            change_pct(median(&mut draw_a), median(&mut draw_b))
        })
        .collect();
    changes.sort_unstable_by(f64::total_cmp);
    Some((quantile(&changes, 0.025), quantile(&changes, 0.975)))
}

fn resample(from: &[u64], into: &mut [u64], rng: &mut SplitMix64) {
    for slot in into.iter_mut() {
        *slot = from[rng.below(from.len())];
    }
}

/// The `q` quantile of sorted `values` (non-empty), by linear interpolation between ranks.
fn quantile(values: &[f64], q: f64) -> f64 {
    let at = q * (values.len() - 1) as f64;
    let (low, high) = (at.floor() as usize, at.ceil() as usize);
    if low == high || values[low] == values[high] {
        return values[low];
    }
    values[low] + (values[high] - values[low]) * (at - low as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, tolerance: f64) -> bool {
        (got - want).abs() <= tolerance
    }

    #[test]
    fn splitmix64_gives_the_reference_sequence() {
        // The first outputs for seed 1234567 of the reference C code (Vigna's splitmix64.c).
        let mut rng = SplitMix64::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
        let mut rng = SplitMix64::new(7);
        assert!((0..10_000).all(|_| rng.below(3) < 3));
    }

    #[test]
    fn medians() {
        assert_eq!(median(&mut [5, 1, 3]), 3.0);
        assert_eq!(median(&mut [4, 1, 3, 2]), 2.5);
        assert_eq!(median(&mut [7]), 7.0);
        assert_eq!(median(&mut []), 0.0);
        assert_eq!(change_pct(200.0, 300.0), 50.0);
        assert_eq!(change_pct(0.0, 0.0), 0.0);
        assert_eq!(change_pct(0.0, 1.0), f64::INFINITY);
    }

    #[test]
    fn mann_whitney_by_hand() {
        // a = 1..=5, b = 6..=10: a's ranks are 1..=5, R = 15, U = 15 − 5·6/2 = 0; mean 12.5,
        // variance 5·5/12·11 = 22.917; z = (12.5 − 0.5)/4.787 = 2.507; p = erfc(z/√2) = 0.01219.
        let p = mann_whitney(&[1, 2, 3, 4, 5], &[6, 7, 8, 9, 10]).unwrap();
        assert!(close(p, 0.012_185, 1e-5), "{p}");
        // The same, a side swapped: a two-sided test.
        let q = mann_whitney(&[6, 7, 8, 9, 10], &[1, 2, 3, 4, 5]).unwrap();
        assert!(close(p, q, 1e-12));
        // Ties: a = [1,2,2,3,3], b = [2,3,3,4,4]. Sorted: 1 | 2 2 2 | 3 3 3 3 | 4 4 with mean
        // ranks 1, 3, 6.5, 9.5; R_a = 1 + 3 + 3 + 6.5 + 6.5 = 20, U = 20 − 15 = 5; the ties
        // Σ(t³ − t) = 24 + 60 + 6 = 90, variance 25/12·(11 − 90/90) = 20.833;
        // z = (12.5 − 5 − 0.5)/4.564 = 1.5336; p = erfc(z/√2) = 0.12512.
        let p = mann_whitney(&[1, 2, 2, 3, 3], &[2, 3, 3, 4, 4]).unwrap();
        assert!(close(p, 0.125_12, 1e-4), "{p}");
    }

    #[test]
    fn identical_samples_give_p_one_and_small_ones_no_p() {
        let a: Vec<u64> = (0..50).map(|i| 1000 + (i * 37) % 101).collect();
        assert_eq!(mann_whitney(&a, &a), Some(1.0));
        assert_eq!(mann_whitney(&[3; 8], &[3; 9]), Some(1.0), "all tied");
        assert_eq!(mann_whitney(&a[..4], &a), None);
        assert_eq!(mann_whitney(&a, &[]), None);
    }

    #[test]
    fn a_clear_shift_is_significant() {
        let a: Vec<u64> = (0..30).map(|i| 1000 + (i * 37) % 101).collect();
        let b: Vec<u64> = a.iter().map(|v| v + 150).collect();
        let p = mann_whitney(&a, &b).unwrap();
        assert!(p < 0.001, "{p}");
    }

    #[test]
    fn the_interval_covers_the_true_shift_and_is_deterministic() {
        // Noisy durations around 1000, and the same noise 20% slower.
        let mut rng = SplitMix64::new(42);
        let a: Vec<u64> = (0..200).map(|_| 900 + rng.below(200) as u64).collect();
        let b: Vec<u64> = (0..200)
            .map(|_| ((900 + rng.below(200)) as f64 * 1.2) as u64)
            .collect();
        let (low, high) = median_change_ci(&a, &b, 9).unwrap();
        assert!(low < 20.0 && 20.0 < high, "[{low}, {high}]");
        assert!(low > 10.0 && high < 30.0, "narrow enough: [{low}, {high}]");
        assert_eq!(median_change_ci(&a, &b, 9), Some((low, high)));
        // A sample against itself: an interval around 0.
        let (low, high) = median_change_ci(&a, &a, 9).unwrap();
        assert!(low < 0.0 && 0.0 < high, "[{low}, {high}]");
        assert_eq!(median_change_ci(&a, &[], 9), None);
    }

    #[test]
    fn huge_groups_are_capped() {
        let a: Vec<u64> = (0..1_000_000).map(|i| 1000 + i % 7).collect();
        let b: Vec<u64> = a.iter().map(|v| v * 2).collect();
        let (low, high) = median_change_ci(&a, &b, 1).unwrap();
        assert!(low > 90.0 && high < 110.0, "[{low}, {high}]");
    }
}
