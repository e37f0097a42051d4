//! Summaries of a set of durations.

/// Count, total and the distribution of some durations (nanoseconds).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub count: u64,
    pub total: u64,
    pub mean: u64,
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

impl Summary {
    /// Sorts `values` and summarises them (percentiles by nearest rank).
    pub fn of(values: &mut [u64]) -> Summary {
        if values.is_empty() {
            return Summary::default();
        }
        values.sort_unstable();
        let count = values.len() as u64;
        let total: u64 = values.iter().sum();
        let rank = |p: u64| values[((p * count).div_ceil(100).max(1) - 1) as usize];
        Summary {
            count,
            total,
            mean: total / count,
            min: values[0],
            p50: rank(50),
            p90: rank(90),
            p99: rank(99),
            max: values[values.len() - 1],
        }
    }
}

/// The time covered by at least one of `spans` (begin, end), overlaps counted once.
pub fn covered(spans: &mut [(u64, u64)]) -> u64 {
    spans.sort_unstable();
    let mut total = 0;
    let mut current: Option<(u64, u64)> = None;
    for &(b, e) in spans.iter() {
        match current {
            Some((cb, ce)) if b <= ce => current = Some((cb, ce.max(e))),
            Some((cb, ce)) => {
                total += ce - cb;
                current = Some((b, e));
            }
            None => current = Some((b, e)),
        }
    }
    total + current.map_or(0, |(b, e)| e - b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        let s = Summary::of(&mut v);
        assert_eq!((s.count, s.total, s.mean), (100, 5050, 50));
        assert_eq!((s.min, s.p50, s.p90, s.p99, s.max), (1, 50, 90, 99, 100));
        let s = Summary::of(&mut [7]);
        assert_eq!((s.p50, s.p99, s.max), (7, 7, 7));
        assert_eq!(Summary::of(&mut []), Summary::default());
    }

    #[test]
    fn overlaps_are_covered_once() {
        assert_eq!(covered(&mut [(0, 10), (5, 20), (30, 40), (35, 36)]), 30);
        assert_eq!(covered(&mut []), 0);
    }
}
