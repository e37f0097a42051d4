//! A batch's submit time on the device's clock, for the formats that print one timeline.
//!
//! The submit hook reads `CLOCK_BOOTTIME` when a traced `vkQueueSubmit*` begins (one vDSO
//! read); Perfetto places it with its clock snapshots. The text formats have only the
//! device's nanoseconds, so the batch's `submitted` is moved onto them here, on the traceq
//! thread, by a clock pair taken at most [`PAIR_PERIOD`] before (a calibrated device's
//! pairs follow drift; a measured pair is the one taken when the device's first queue was
//! got). Then `submitted` and the batch's first event are on one clock: their difference is
//! the time from the submit call to the GPU starting the work.

use std::time::{Duration, Instant};

use super::{BatchInfo, Sink, TraceSummary};
use crate::gpu::interface::{ClockPair, GpuClock};
use crate::trace::sink_interface::EventPieces;

/// How long a pair serves (Perfetto's snapshot period): 1 s of drift at 100 ppm is 100 µs,
/// below what a submit-to-start latency shows.
pub const PAIR_PERIOD: Duration = Duration::from_secs(1);

/// Gives each batch its `submitted_ns`, then hands it on.
pub struct SubmitClock {
    inner: Box<dyn Sink>,
    clock: Option<GpuClock>,
    pair: Option<(ClockPair, Instant)>,
}

impl SubmitClock {
    pub fn wrap(inner: Box<dyn Sink>, clock: Option<GpuClock>) -> Box<dyn Sink> {
        Box::new(SubmitClock {
            inner,
            clock,
            pair: None,
        })
    }

    fn pair(&mut self) -> Option<ClockPair> {
        match self.pair {
            Some((pair, taken)) if taken.elapsed() < PAIR_PERIOD => Some(pair),
            _ => {
                let pair = self.clock.as_ref()?.sample()?;
                self.pair = Some((pair, Instant::now()));
                Some(pair)
            }
        }
    }
}

/// `boottime_ns` on the device's clock by `pair`; `None` for an untimed submission (0) or
/// one the clock cannot reach (before its zero).
pub fn on_device_clock(boottime_ns: u64, pair: ClockPair) -> Option<u64> {
    if boottime_ns == 0 {
        return None;
    }
    let offset = i128::from(boottime_ns) - i128::from(pair.boottime_ns);
    u64::try_from(i128::from(pair.gpu_ns) + offset).ok()
}

impl Sink for SubmitClock {
    fn batch(&mut self, info: &BatchInfo, events: &mut dyn EventPieces<'_>) {
        let submitted_ns = self
            .pair()
            .and_then(|pair| on_device_clock(info.submit.start_ns, pair));
        let info = BatchInfo {
            submitted_ns,
            ..info.clone()
        };
        self.inner.batch(&info, events);
    }

    fn end_of_frame(&mut self, device: u32, frame: u32) {
        self.inner.end_of_frame(device, frame);
    }

    fn end_of_trace(&mut self, summary: &TraceSummary) {
        self.inner.end_of_trace(summary);
    }

    fn drain(&mut self, timeout: Duration) -> usize {
        self.inner.drain(timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::SubmitTiming;
    use crate::trace::sink_interface::ListedEvents;
    use std::sync::{Arc, Mutex, OnceLock};

    #[test]
    fn a_cpu_time_moves_by_the_pairs_offset() {
        let pair = ClockPair {
            gpu_ns: 5_000,
            boottime_ns: 1_000_000,
        };
        assert_eq!(on_device_clock(1_000_300, pair), Some(5_300));
        assert_eq!(on_device_clock(999_000, pair), Some(4_000));
        // Before the device clock's zero, and an untimed submission.
        assert_eq!(on_device_clock(990_000, pair), None);
        assert_eq!(on_device_clock(0, pair), None);
    }

    /// Keeps the `submitted_ns` of each batch it is given.
    struct Seen(Arc<Mutex<Vec<Option<u64>>>>);

    impl Sink for Seen {
        fn batch(&mut self, info: &BatchInfo, _events: &mut dyn EventPieces<'_>) {
            self.0.lock().unwrap().push(info.submitted_ns);
        }
        fn end_of_frame(&mut self, _device: u32, _frame: u32) {}
        fn end_of_trace(&mut self, _summary: &TraceSummary) {}
    }

    #[test]
    fn batches_get_their_submit_time_once_the_clock_is_paired() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let slot = Arc::new(OnceLock::new());
        let mut sink = SubmitClock::wrap(
            Box::new(Seen(Arc::clone(&seen))),
            Some(GpuClock::Measured(Arc::clone(&slot))),
        );
        let info = |start_ns| BatchInfo {
            submit: SubmitTiming {
                start_ns,
                ..SubmitTiming::default()
            },
            ..BatchInfo::default()
        };
        // Not measured yet: no time rather than a wrong one.
        sink.batch(&info(2_000), &mut ListedEvents::whole(&[]));
        slot.set(crate::gpu::interface::MeasuredPair {
            pair: ClockPair {
                gpu_ns: 100,
                boottime_ns: 1_000,
            },
            within_ns: 500,
            rounds: crate::gpu::calibration::Rounds::Gated,
        })
        .unwrap();
        sink.batch(&info(2_000), &mut ListedEvents::whole(&[]));
        sink.batch(&info(0), &mut ListedEvents::whole(&[]));
        assert_eq!(*seen.lock().unwrap(), [None, Some(1_100), None]);
    }
}
