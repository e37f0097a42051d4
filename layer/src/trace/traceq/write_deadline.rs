//! How long a stopping traceq thread goes on writing: `vkDestroyDevice` and the process's
//! exit wait for it, so its work is capped. Past the deadline the batches it has not
//! written (and the rest of the one it is reading) are counted as dropped, and the trace
//! still gets its end record, which says so: an output is never left without its end
//! because the writing was cut short. The thread then no longer touches the device beyond
//! giving its batches back, so the device can go when the wait ends.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ash::vk;

/// How long `vkDestroyDevice` lets the thread write what was submitted before it. A
/// million one-time draws (2,000,004 events) take about 0.3 s to write on the machine the
/// tests run on; this allows some fifteen times as many, or a slow output, before the
/// application is made to wait no longer.
pub const DESTROY_WRITING: Duration = Duration::from_secs(5);
/// The same at the process's exit without `vkDestroyDevice` (the exit handler waits for
/// each device in turn).
pub const EXIT_WRITING: Duration = Duration::from_secs(2);

/// The read error that stands for "cut short" (a driver never returns it without
/// `VK_QUERY_RESULT_WAIT_BIT`, which the layer does not ask for).
pub const CUT: vk::Result = vk::Result::TIMEOUT;

/// When the writing stops, and the limit it was set with: set once, when the thread is
/// asked to stop.
#[derive(Default)]
pub struct WriteDeadline(OnceLock<(Instant, Duration)>);

impl WriteDeadline {
    /// The thread stops writing `limit` from now (the first call wins). Debug builds take
    /// `UTRACE_DEBUG_WRITE_LIMIT_MS` instead when it is set, for the tests of a cut.
    pub fn set(&self, limit: Duration) {
        let limit = debug_limit().unwrap_or(limit);
        let _ = self.0.set((Instant::now() + limit, limit));
    }

    /// Whether the deadline was set and has passed.
    pub fn passed(&self) -> bool {
        self.0.get().is_some_and(|&(at, _)| Instant::now() >= at)
    }

    /// The limit it was set with.
    pub fn limit(&self) -> Option<Duration> {
        self.0.get().map(|&(_, limit)| limit)
    }
}

#[cfg(debug_assertions)]
fn debug_limit() -> Option<Duration> {
    let ms = std::env::var("UTRACE_DEBUG_WRITE_LIMIT_MS").ok()?;
    ms.parse().ok().map(Duration::from_millis)
}

#[cfg(not(debug_assertions))]
fn debug_limit() -> Option<Duration> {
    None
}

/// Debug builds only: with `UTRACE_DEBUG_TRACEQ_HOLD=1` the thread takes no batch before it
/// is asked to stop, so that the tests find every batch still to write at the device's
/// end or the exit, whatever the machine's speed.
#[cfg(debug_assertions)]
pub fn debug_hold(stopping: &std::sync::atomic::AtomicBool) {
    static HOLD: OnceLock<bool> = OnceLock::new();
    if *HOLD.get_or_init(|| std::env::var_os("UTRACE_DEBUG_TRACEQ_HOLD").is_some_and(|v| v == "1"))
    {
        while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// What the deadline cut: said once, at the end.
#[derive(Default)]
pub struct Cut {
    pub batches: u64,
    pub events: u64,
}

impl Cut {
    pub fn add(&mut self, events: u64) {
        self.batches += 1;
        self.events += events;
    }

    /// Says what was cut, if anything (`limit`: the deadline's).
    pub fn say(&self, device: u32, limit: Option<Duration>) {
        if self.batches > 0 {
            log::warn!(
                "device {device}: {:?} after the device's end or the process's exit, {} event(s) of {} batch(es) were not yet written (their batches still on the GPU, or being written): they are counted as dropped in the trace's end",
                limit.unwrap_or_default(),
                self.events,
                self.batches
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_passes_only_once_set_and_reached() {
        let deadline = WriteDeadline::default();
        assert!(!deadline.passed(), "not set: the thread is not stopping");
        deadline.set(Duration::from_secs(3600));
        assert!(!deadline.passed());
        deadline.set(Duration::ZERO);
        assert!(!deadline.passed(), "the first deadline set holds");
        assert_eq!(deadline.limit(), Some(Duration::from_secs(3600)));
        let now = WriteDeadline::default();
        now.set(Duration::ZERO);
        assert!(now.passed());
    }
}
