//! What `utrace top` shows, from the layer's lines: each second's frames, frame GPU times and
//! range kinds (the `second ...` line of a watch, see the layer's `control/watch.rs`), and
//! the last seconds' history for the frame time percentiles and the sparkline.

use std::collections::VecDeque;

use crate::analysis::stats::Summary;

/// Seconds of frame times the percentiles are taken over.
pub const HISTORY_SECONDS: usize = 10;

/// One `second ...` line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Second {
    /// The time it covers.
    pub ms: u64,
    pub frames: u32,
    pub batches: u64,
    /// Each frame's GPU time, in order.
    pub frame_ns: Vec<u64>,
    /// Per range kind: name, total ns, count.
    pub ranges: Vec<(String, u64, u64)>,
    /// The pipeline statistics counted in it (`GPU_TRACE_COUNTERS=pipeline`): name, sum of
    /// the command buffers'; empty when none was.
    pub counters: Vec<(String, u64)>,
}

impl Second {
    /// Reads `second ms=M frames=F batches=B frame_ns=N,... ranges=KIND:NS:COUNT,...
    /// [counters=NAME:N,...]`.
    pub fn parse(line: &str) -> Result<Second, String> {
        // The line came escaped already (`control_socket::printable`): quoted, not escaped
        // again.
        let bad = || format!("the layer sent an unexpected line: \"{line}\"");
        let rest = line.strip_prefix("second ").ok_or_else(bad)?;
        let mut second = Second::default();
        for field in rest.split(' ') {
            let (key, value) = field.split_once('=').ok_or_else(bad)?;
            let number = |v: &str| v.parse::<u64>().map_err(|_| bad());
            match key {
                "ms" => second.ms = number(value)?,
                "frames" => second.frames = u32::try_from(number(value)?).map_err(|_| bad())?,
                "batches" => second.batches = number(value)?,
                "frame_ns" => {
                    second.frame_ns = list(value).map(number).collect::<Result<_, _>>()?
                }
                "ranges" => {
                    for range in list(value) {
                        let mut parts = range.split(':');
                        let (Some(kind), Some(ns), Some(count), None) =
                            (parts.next(), parts.next(), parts.next(), parts.next())
                        else {
                            return Err(bad());
                        };
                        second
                            .ranges
                            .push((kind.to_string(), number(ns)?, number(count)?));
                    }
                }
                "counters" => {
                    for counter in list(value) {
                        let (name, n) = counter.split_once(':').ok_or_else(bad)?;
                        second.counters.push((name.to_string(), number(n)?));
                    }
                }
                // Fields a later layer may add.
                _ => {}
            }
        }
        Ok(second)
    }

    /// Frames per second.
    pub fn fps(&self) -> f64 {
        if self.ms == 0 {
            0.0
        } else {
            f64::from(self.frames) * 1000.0 / self.ms as f64
        }
    }

    /// The range kinds by total time, most first (ties by name).
    pub fn top_ranges(&self) -> Vec<&(String, u64, u64)> {
        let mut ranges: Vec<_> = self.ranges.iter().collect();
        ranges.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        ranges
    }
}

fn list(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').filter(|v| !v.is_empty())
}

/// The frame times of the last [`HISTORY_SECONDS`] seconds.
#[derive(Default)]
pub struct History {
    seconds: VecDeque<Vec<u64>>,
}

impl History {
    pub fn push(&mut self, second: &Second) {
        if self.seconds.len() == HISTORY_SECONDS {
            self.seconds.pop_front();
        }
        self.seconds.push_back(second.frame_ns.clone());
    }

    /// Seconds held (at most [`HISTORY_SECONDS`]).
    pub fn held(&self) -> usize {
        self.seconds.len()
    }

    pub fn frame_times(&self) -> impl Iterator<Item = u64> + '_ {
        self.seconds.iter().flatten().copied()
    }

    /// The latest frame's GPU time.
    pub fn last(&self) -> Option<u64> {
        self.seconds.iter().rev().find_map(|s| s.last().copied())
    }

    /// Count, p50, p99 (nearest rank, as `utrace report`) of the kept frame times.
    pub fn summary(&self) -> Summary {
        Summary::of(&mut self.frame_times().collect::<Vec<_>>())
    }

    /// The latest `width` frame times as a sparkline.
    pub fn sparkline(&self, width: usize) -> String {
        let times: Vec<u64> = self.frame_times().collect();
        sparkline(&times[times.len().saturating_sub(width)..])
    }
}

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// One bar per value, from the lowest bar (the smallest value) to the highest (the
/// largest): frame times vary little around their level, and the slow ones must stand out.
pub fn sparkline(values: &[u64]) -> String {
    let min = values.iter().copied().min().unwrap_or(0);
    let span = (values.iter().copied().max().unwrap_or(0) - min).max(1) as u128;
    values
        .iter()
        .map(|&v| BARS[(((v - min) as u128 * 7 + span / 2) / span) as usize])
        .collect()
}

/// A duration for people: µs under a millisecond, else ms.
pub fn time(ns: u64) -> String {
    if ns < 1_000_000 {
        format!("{:.0} µs", ns as f64 / 1000.0)
    } else {
        format!("{:.2} ms", ns as f64 / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_read_whole_or_refused() {
        let s = Second::parse(
            "second ms=1000 frames=3 batches=6 frame_ns=100,300,200 ranges=draw:900:6,cmd_buffer:1200:6",
        )
        .unwrap();
        assert_eq!(s.frames, 3);
        assert_eq!(s.frame_ns, [100, 300, 200]);
        assert_eq!(s.fps(), 3.0);
        let top: Vec<&str> = s.top_ranges().iter().map(|r| r.0.as_str()).collect();
        assert_eq!(top, ["cmd_buffer", "draw"]);
        assert!(s.counters.is_empty());
        let counted = Second::parse(
            "second ms=1000 frames=1 batches=1 frame_ns=100 ranges= counters=input_vertices:24,compute_invocations:960",
        )
        .unwrap();
        assert_eq!(
            counted.counters,
            [
                ("input_vertices".into(), 24),
                ("compute_invocations".into(), 960)
            ]
        );
        let empty = Second::parse("second ms=500 frames=0 batches=0 frame_ns= ranges=").unwrap();
        assert!(empty.frame_ns.is_empty() && empty.ranges.is_empty());
        assert_eq!(empty.fps(), 0.0);
        for bad in [
            "started",
            "second ms=x frames=1",
            "second ms=1000 ranges=draw:1",
            "second ms=1000 frame_ns=1,a",
            "second ms=1000 counters=input_vertices",
            "second ms=1000 counters=input_vertices:x",
        ] {
            assert!(Second::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn percentiles_over_the_last_seconds() {
        let mut h = History::default();
        // 100 frames of 1..=100 µs in the first second.
        h.push(&Second {
            frame_ns: (1..=100).map(|i| i * 1000).collect(),
            ..Second::default()
        });
        let s = h.summary();
        assert_eq!((s.count, s.p50, s.p99), (100, 50_000, 99_000));
        assert_eq!(h.last(), Some(100_000));
        // A second without frames keeps the last frame time.
        h.push(&Second::default());
        assert_eq!(h.last(), Some(100_000));
        // The first second falls out after HISTORY_SECONDS more.
        for _ in 0..HISTORY_SECONDS {
            h.push(&Second {
                frame_ns: vec![7],
                ..Second::default()
            });
        }
        let s = h.summary();
        assert_eq!((s.count, s.p50, s.p99), (HISTORY_SECONDS as u64, 7, 7));
    }

    #[test]
    fn sparkline_spans_the_smallest_to_the_largest() {
        assert_eq!(sparkline(&[0, 50, 100]), "▁▅█");
        assert_eq!(sparkline(&[400, 450, 500]), "▁▅█", "from the smallest");
        assert_eq!(sparkline(&[3, 3]), "▁▁");
        assert_eq!(sparkline(&[]), "");
        let mut h = History::default();
        h.push(&Second {
            frame_ns: vec![100, 0, 100, 0],
            ..Second::default()
        });
        assert_eq!(h.sparkline(2), "█▁");
    }

    #[test]
    fn an_unexpected_line_is_quoted_as_it_came() {
        // Escaped once already when read from the socket.
        let e = Second::parse("\\u{1b}[2J").unwrap_err();
        assert_eq!(e, "the layer sent an unexpected line: \"\\u{1b}[2J\"");
    }

    #[test]
    fn times_for_people() {
        assert_eq!(time(512_300), "512 µs");
        assert_eq!(time(2_345_000), "2.35 ms");
    }
}
