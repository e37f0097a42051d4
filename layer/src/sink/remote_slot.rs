//! Each device's place for the sink of a capture asked from outside the process
//! (`crate::control`): empty until a capture starts, then a text sink writing the capture's
//! file, fed the batches and frame ends of the captured frames only (see
//! [`crate::trace::remote`]), closed when the capture ends. It sits in every device's sink
//! (beside the configured ones) on the traceq thread, so the capture's batches come in the
//! order they complete and its file is written as any trace is: whole batches.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Weak};
use std::time::Duration;

use parking_lot::Mutex;

use super::origin::{Origin, PendingHeader};
use super::{BatchInfo, EventPieces, Sink, TraceSummary};
use crate::gpu::interface::GpuClock;
use crate::trace::remote::REMOTE;

#[derive(Default)]
struct Inner {
    device: u32,
    /// What the capture's header says of the device.
    origin: Arc<Origin>,
    clock: Option<GpuClock>,
    sink: Option<Box<dyn Sink>>,
    batches: u64,
    events: u64,
    /// Frame ends written.
    frames: u32,
}

/// A device's slot, as its sink.
pub struct Slot(Arc<Mutex<Inner>>);

/// Every live device's slot.
static SLOTS: LazyLock<Mutex<Vec<Weak<Mutex<Inner>>>>> = LazyLock::new(Default::default);
/// Set when a slot has written the end of the capture's last frame (all of the capture's
/// batches of that device are written: they come before it).
static DONE: LazyLock<(std::sync::Mutex<bool>, Condvar)> = LazyLock::new(Default::default);

/// What the capture wrote for the devices that went during it (their slots are gone by its
/// end, their counts with them otherwise).
static CLOSED: Mutex<Totals> = Mutex::new(Totals {
    frames: 0,
    batches: 0,
    events: 0,
});

/// Batches traced in this process, by every output (each passes every device's slot): the
/// control socket's `status` says it, so that one can see tracing stop.
static TRACED_BATCHES: AtomicU64 = AtomicU64::new(0);

pub fn traced_batches() -> u64 {
    TRACED_BATCHES.load(Ordering::Relaxed)
}

/// A new device's slot.
pub fn slot(device: u32, origin: Arc<Origin>, clock: Option<GpuClock>) -> Box<dyn Sink> {
    let inner = Arc::new(Mutex::new(Inner {
        device,
        origin,
        clock,
        ..Inner::default()
    }));
    let mut slots = SLOTS.lock();
    slots.retain(|s| s.strong_count() > 0);
    slots.push(Arc::downgrade(&inner));
    Box::new(Slot(inner))
}

fn live() -> Vec<Arc<Mutex<Inner>>> {
    SLOTS.lock().iter().filter_map(Weak::upgrade).collect()
}

/// Gives every live device a sink for the capture (`make` for its device index and its
/// header); the devices' indexes.
pub fn install(make: &dyn Fn(u32, PendingHeader) -> Box<dyn Sink>) -> Vec<u32> {
    if let Ok(mut done) = DONE.0.lock() {
        *done = false;
    }
    *CLOSED.lock() = Totals::default();
    let slots = live();
    for s in &slots {
        let mut inner = s.lock();
        let (device, origin, clock) =
            (inner.device, Arc::clone(&inner.origin), inner.clock.clone());
        let header = PendingHeader::new(device, Arc::clone(&origin), clock.clone());
        *inner = Inner {
            device,
            sink: Some(make(device, header)),
            origin,
            clock,
            ..Inner::default()
        };
    }
    slots.iter().map(|s| s.lock().device).collect()
}

/// Waits, at most `timeout`, until the capture's last frame is written; whether it was.
pub fn wait_done(timeout: Duration) -> bool {
    let (lock, cond) = &*DONE;
    let Ok(done) = lock.lock() else { return false };
    match cond.wait_timeout_while(done, timeout, |d| !*d) {
        Ok((done, _)) => *done,
        Err(_) => false,
    }
}

/// What the capture wrote.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Frame ends written (the most any device wrote: frames are the process's).
    pub frames: u32,
    pub batches: u64,
    pub events: u64,
}

/// Whether some device still has the capture's sink (false once every device that had one
/// is gone: the capture cannot end by its frames any more).
pub fn any_open() -> bool {
    live().iter().any(|s| s.lock().sink.is_some())
}

/// Ends the capture's file: each device's end of trace (its counts), everything written
/// (bounded by `timeout`), the sinks closed. The totals count the devices whose part was
/// closed before (they went) and those closed now.
pub fn finish(timeout: Duration) -> Totals {
    let mut totals = std::mem::take(&mut *CLOSED.lock());
    for s in live() {
        let mut inner = s.lock();
        let (device, batches, events) = (inner.device, inner.batches, inner.events);
        if let Some(mut sink) = inner.sink.take() {
            sink.end_of_trace(&TraceSummary {
                device,
                batches,
                events,
                dropped: 0,
            });
            sink.drain(timeout);
            totals.frames = totals.frames.max(inner.frames);
            totals.batches += batches;
            totals.events += events;
        }
    }
    totals
}

impl Sink for Slot {
    fn batch(&mut self, info: &BatchInfo, events: &mut dyn EventPieces<'_>) {
        TRACED_BATCHES.fetch_add(1, Ordering::Relaxed);
        let mut inner = self.0.lock();
        if REMOTE.includes(info.frame) {
            if let Some(sink) = inner.sink.as_mut() {
                sink.batch(info, events);
                inner.batches += 1;
                inner.events += events.count();
            }
        }
    }

    fn end_of_frame(&mut self, device: u32, frame: u32) {
        let mut inner = self.0.lock();
        if !REMOTE.includes(frame) {
            return;
        }
        if let Some(sink) = inner.sink.as_mut() {
            sink.end_of_frame(device, frame);
            inner.frames += 1;
            if REMOTE.frames().1 == Some(frame) {
                let (lock, cond) = &*DONE;
                if let Ok(mut done) = lock.lock() {
                    *done = true;
                    cond.notify_all();
                }
            }
        }
    }

    /// The device is going during a capture: its part of the file is closed as a trace is.
    fn end_of_trace(&mut self, _summary: &TraceSummary) {
        let mut inner = self.0.lock();
        let (device, batches, events) = (inner.device, inner.batches, inner.events);
        if let Some(mut sink) = inner.sink.take() {
            sink.end_of_trace(&TraceSummary {
                device,
                batches,
                events,
                dropped: 0,
            });
            sink.drain(Duration::from_secs(1));
            let mut closed = CLOSED.lock();
            closed.frames = closed.frames.max(inner.frames);
            closed.batches += batches;
            closed.events += events;
        }
    }

    fn drain(&mut self, timeout: Duration) -> usize {
        self.0.lock().sink.as_mut().map_or(0, |s| s.drain(timeout))
    }
}
