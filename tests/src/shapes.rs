//! Hardware shapes (`UTRACE_SHAPE` of the test layer beneath utrace, tests/fault-layer):
//! the truth behind a shaped trace. The shape layer turns each of Lavapipe's timestamps
//! (`CLOCK_MONOTONIC` nanoseconds) into the ticks of the emulated GPU and logs each pair
//! (`UTRACE_SHAPE_LOG`); [`Truth`] maps a time utrace wrote back to the driver's own
//! nanoseconds: the 1-ns reference of the same run.

use std::collections::HashMap;
use std::path::Path;

use crate::trace_txt::Trace;

/// What the shape layer said of itself on stderr.
#[derive(Debug, Clone)]
pub struct ShapeParams {
    pub name: String,
    pub period: f32,
    pub valid_bits: u32,
}

impl ShapeParams {
    /// Parses the layer's `utrace-shape: NAME period=P valid_bits=B ...` line.
    pub fn from_stderr(stderr: &str) -> ShapeParams {
        let line = stderr
            .lines()
            .find(|l| l.starts_with("utrace-shape: ") && l.contains("period="))
            .unwrap_or_else(|| panic!("the shape layer says its shape: {stderr}"));
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .unwrap_or_else(|| panic!("{key} in {line}"))
        };
        ShapeParams {
            name: line.split_whitespace().nth(1).expect("a name").to_string(),
            period: field("period=").parse().expect("a period"),
            valid_bits: field("valid_bits=").parse().expect("valid bits"),
        }
    }

    /// The trace's header says the device as the layer saw it: this shape's tick and valid
    /// bits, not the driver's beneath.
    pub fn assert_in_header(&self, trace: &Trace) {
        let period: f32 = trace
            .header(0, "timestamp_period")
            .and_then(|p| p.parse().ok())
            .expect("a timestamp_period in the header");
        assert!((period - self.period).abs() < 1e-3, "{period}");
        let bits = trace.header(0, "valid_bits").unwrap_or_default();
        assert!(
            bits.split(',').any(|b| b == self.valid_bits.to_string()),
            "valid_bits={bits}, the shape's {}",
            self.valid_bits
        );
    }

    pub fn mask(&self) -> u64 {
        if self.valid_bits >= 64 {
            u64::MAX
        } else {
            (1 << self.valid_bits) - 1
        }
    }

    /// One tick, rounded up to whole nanoseconds.
    pub fn tick_ns(&self) -> u64 {
        f64::from(self.period).ceil() as u64
    }

    /// The ticks utrace converted to `ns` (it multiplies by the period in 32.32 fixed point,
    /// rounding down), masked to the valid bits.
    pub fn ticks_of(&self, ns: u64) -> u64 {
        let fixed = (f64::from(self.period) * 4_294_967_296.0).round() as u128;
        let guess = ((u128::from(ns) << 32) / fixed) as u64;
        let to_ns = |t: u64| ((u128::from(t) * fixed) >> 32) as u64;
        let ticks = (guess.saturating_sub(1)..=guess + 1)
            .find(|&t| to_ns(t) == ns)
            .unwrap_or_else(|| panic!("{ns} ns is no whole number of {} ns ticks", self.period));
        ticks & self.mask()
    }
}

/// The driver's nanoseconds of every timestamp the shape gave out, by ticks.
pub struct Truth {
    pub shape: ShapeParams,
    by_ticks: HashMap<u64, u64>,
}

impl Truth {
    /// Reads the shape's log at `log` and its parameters from the run's stderr.
    pub fn read(log: &Path, stderr: &str) -> Truth {
        let text = std::fs::read_to_string(log)
            .unwrap_or_else(|e| panic!("the shape's log {}: {e}", log.display()));
        let by_ticks = text
            .lines()
            .map(|l| {
                let (ticks, ns) = l.split_once(' ').expect("`ticks ns`");
                (ticks.parse().expect("ticks"), ns.parse().expect("ns"))
            })
            .collect();
        Truth {
            shape: ShapeParams::from_stderr(stderr),
            by_ticks,
        }
    }

    pub fn pairs(&self) -> usize {
        self.by_ticks.len()
    }

    /// The driver's nanoseconds of the timestamp utrace wrote as `ns`.
    pub fn of(&self, ns: u64) -> u64 {
        let ticks = self.shape.ticks_of(ns);
        *self.by_ticks.get(&ticks).unwrap_or_else(|| {
            panic!("utrace wrote {ns} ns (ticks {ticks}), a value the shape never gave out")
        })
    }

    /// Whether the counter wrapped between the timestamps utrace wrote: some of the trace's
    /// ticks lie in the top quarter of the counter, and some in the bottom quarter.
    pub fn crosses_wrap(&self, trace: &Trace) -> bool {
        let quarter = self.shape.mask() / 4;
        let ticks: Vec<u64> = trace
            .batches
            .iter()
            .flat_map(|b| &b.events)
            .map(|e| self.shape.ticks_of(e.ns))
            .collect();
        ticks.iter().any(|&t| t > 3 * quarter) && ticks.iter().any(|&t| t < quarter)
    }

    /// `trace` with every time replaced by the driver's, deltas and spans recomputed: the
    /// trace a 1-ns device would have given (submit times moved by their batch's offset).
    pub fn reference(&self, trace: &Trace) -> Trace {
        let mut reference = trace.clone();
        for batch in &mut reference.batches {
            // The submit time is on the clock of the events (no timestamp of the shape's):
            // it moves with the batch's first event.
            if let (Some(submitted), Some(first)) = (batch.submitted, batch.events.first()) {
                let moved =
                    i128::from(submitted) - i128::from(first.ns) + i128::from(self.of(first.ns));
                batch.submitted = u64::try_from(moved).ok();
            }
            let mut previous = None;
            for e in &mut batch.events {
                e.ns = self.of(e.ns);
                e.delta = previous.map_or(0, |p: u64| e.ns as i64 - p as i64);
                previous = Some(e.ns);
            }
            let first = batch.events.first().map_or(0, |e| e.ns);
            batch.elapsed_ns = previous.unwrap_or(0) - first;
        }
        reference
    }

    /// `text` (a txt trace) with every event's time replaced by the driver's.
    pub fn reference_text(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for line in text.lines() {
            let digits = line.bytes().take_while(u8::is_ascii_digit).count();
            if digits >= 16 && line[digits..].starts_with(' ') {
                let ns: u64 = line[..digits].parse().expect("a time");
                out.push_str(&format!("{:016}{}", self.of(ns), &line[digits..]));
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
        out
    }
}
