//! A text histogram of durations (the frames' GPU time): equal-width buckets from the
//! shortest to the longest, a bar of `#` per bucket.

use std::fmt::Write;

pub struct Bucket {
    pub from_ns: u64,
    pub to_ns: u64,
    pub count: usize,
}

/// `buckets` buckets over `values` (fewer when the values are fewer or all equal), the last
/// one including the maximum. Equal-width, unless the longest is more than ten times the
/// shortest (a first frame that compiles shaders, a hitch): then each bucket is a constant
/// factor wider than the one before, so that the common durations are not all in one.
pub fn of(values: &[u64], buckets: usize) -> Vec<Bucket> {
    let (Some(&min), Some(&max)) = (values.iter().min(), values.iter().max()) else {
        return Vec::new();
    };
    let n = if max == min {
        1
    } else {
        buckets.clamp(1, values.len())
    };
    let geometric = max / min.max(1) > 10;
    let bound = |i: usize| -> u64 {
        let t = i as f64 / n as f64;
        let at = if geometric {
            min.max(1) as f64 * (max as f64 / min.max(1) as f64).powf(t)
        } else {
            min as f64 + (max - min) as f64 * t
        };
        (at.round() as u64).clamp(min, max)
    };
    let mut out: Vec<Bucket> = (0..n)
        .map(|i| Bucket {
            from_ns: bound(i),
            to_ns: if i + 1 == n { max } else { bound(i + 1) },
            count: 0,
        })
        .collect();
    for &v in values {
        // The last bucket whose start is at or below the value.
        let i = out.partition_point(|b| b.from_ns <= v).max(1) - 1;
        out[i].count += 1;
    }
    out
}

/// One line per bucket: its bounds in µs, its count and a bar scaled to `bar` characters.
pub fn text(buckets: &[Bucket], bar: usize) -> String {
    let most = buckets.iter().map(|b| b.count).max().unwrap_or(0).max(1);
    let mut out = String::new();
    for b in buckets {
        let len = (b.count * bar).div_ceil(most);
        let _ = writeln!(
            out,
            "  {:>10.1} .. {:>10.1} µs {:>6} {}",
            b.from_ns as f64 / 1000.0,
            b.to_ns as f64 / 1000.0,
            b.count,
            "#".repeat(len)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lands_in_one_bucket() {
        let values = [10, 11, 12, 19, 20, 40, 99];
        let b = of(&values, 9);
        assert_eq!(b.len(), 7, "no more buckets than values");
        assert_eq!(b.iter().map(|b| b.count).sum::<usize>(), values.len());
        assert_eq!((b[0].from_ns, b.last().unwrap().to_ns), (10, 99));
        assert_eq!(b.last().unwrap().count, 1, "the maximum is in the last");
        let widths: Vec<u64> = b.iter().map(|b| b.to_ns - b.from_ns).collect();
        assert!(widths
            .windows(2)
            .all(|w| w[0] == w[1] || w[0].abs_diff(w[1]) <= 1));
        let same = of(&[5, 5, 5], 10);
        assert_eq!((same.len(), same[0].count), (1, 3));
        assert!(of(&[], 10).is_empty());
        // A hitch a hundred times the rest: buckets grow geometrically.
        let hitch = of(&[1000, 1100, 1200, 1300, 100_000], 4);
        assert!(
            hitch[0].count >= 3,
            "the common frames are told apart from the hitch"
        );
        assert!(hitch[3].to_ns - hitch[3].from_ns > 10 * (hitch[0].to_ns - hitch[0].from_ns));
        assert_eq!(hitch.iter().map(|b| b.count).sum::<usize>(), 5);
        let t = text(&of(&[1000, 1000, 3000], 2), 10);
        assert!(t.lines().next().unwrap().ends_with(" 2 ##########"), "{t}");
    }
}
