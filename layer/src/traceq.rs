//! The traceq thread, one per device (u_trace's `traceq`): waits for each batch to complete
//! (bounded waits), reads its timestamps, turns ticks into nanoseconds and hands the events
//! to the sink, in submission order. Frame ends and syncs travel the same channel, so they
//! are written after the batches submitted before them.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ash::vk;
use ash::vk::Handle;
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use parking_lot::Mutex;

use crate::gpu::caps::{ticks_to_ns, DeviceCaps};
use crate::gpu::completion::{self, WaitOutcome};
use crate::gpu::cpu_clock;
use crate::gpu::query_pool;
use crate::loader::dispatch::DeviceDispatch;
use crate::sink::{BatchInfo, Event, Sink, TraceSummary};
use crate::trace::batch::{Batch, Results};
use crate::trace::events::batch_events;
use crate::trace::recorded_trace::RecordedTrace;

/// Batches sent to the traceq thread and not yet taken by it, at most. A submission never
/// waits for the thread: a batch may wait on work that the application releases only after
/// later submissions returned (a timeline wait-before-signal), so the queue grows instead.
/// Past this many, a batch is dropped and its events are counted as dropped. A pending batch
/// holds its command buffers' traces and its layer resources (two command buffers and a
/// readback buffer of 8 bytes per timestamp): a few hundred bytes of host memory, plus the
/// readback's device memory.
pub const MAX_PENDING_BATCHES: usize = 65_536;
/// One wait on the GPU; the thread re-checks whether it is stopping between waits.
const WAIT_SLICE: Duration = Duration::from_millis(100);
/// How long the thread lets work gather after it was woken from idle.
const COALESCE: Duration = Duration::from_millis(1);
/// How long a stopping thread still waits for a batch before giving it up.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How long the process-exit path waits for the thread to finish.
const EXIT_GRACE: Duration = Duration::from_secs(3);
/// How long a stopping thread waits for its outputs to write what it queued.
const DRAIN_GRACE: Duration = Duration::from_secs(1);
/// How long `vkDestroyDevice` waits for the thread, at most: its GPU waits give up after
/// [`STOP_GRACE`], a full output makes it wait at most `sink::output::STALL`, and its drain
/// at most [`DRAIN_GRACE`]. Past this the device's remaining trace is given up.
const DESTROY_LIMIT: Duration = Duration::from_secs(8);

pub enum Message {
    Batch(Batch),
    EndOfFrame(u32),
    Sync(Sender<()>),
    Shutdown,
}

/// Counters shown at the end of the trace.
#[derive(Default)]
pub struct Stats {
    pub batches: AtomicU64,
    pub events: AtomicU64,
    pub dropped: AtomicU64,
}

/// The batches in the channel, counted against a cap by the submitting threads (which
/// add) and the traceq thread (which takes).
struct PendingBatches {
    count: AtomicUsize,
    cap: usize,
}

impl PendingBatches {
    fn new(cap: usize) -> PendingBatches {
        PendingBatches {
            count: AtomicUsize::new(0),
            cap,
        }
    }

    /// Counts one more batch, unless `cap` are already pending.
    fn try_add(&self) -> bool {
        // Relaxed: a count, not a synchronisation point (the channel orders the batches).
        if self.count.fetch_add(1, Ordering::Relaxed) >= self.cap {
            self.count.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// The traceq thread took one.
    fn taken(&self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The submit side of the channel and the thread's handle.
pub struct Consumer {
    tx: Sender<Message>,
    pending: Arc<PendingBatches>,
    stats: Arc<Stats>,
    /// Whether the first batch dropped for a full queue was reported.
    overflow_reported: AtomicBool,
    stopping: Arc<AtomicBool>,
    done: Receiver<()>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Consumer {
    /// Never blocks. A batch beyond [`MAX_PENDING_BATCHES`] is dropped and counted.
    pub fn send(&self, msg: Message) {
        if let Message::Batch(batch) = &msg {
            if !self.pending.try_add() {
                self.stats
                    .dropped
                    .fetch_add(batch.event_count(), Ordering::Relaxed);
                if !self.overflow_reported.swap(true, Ordering::Relaxed) {
                    log::warn!(
                        "more than {MAX_PENDING_BATCHES} batches wait to be written (the GPU has not finished them); later batches are dropped and counted until it catches up"
                    );
                }
                // Dropping the batch abandons its resources: the GPU may still use them.
                return;
            }
        }
        // An error means the thread is gone: the message (and a batch's resources, through
        // `Batch`'s drop) is given up.
        let _ = self.tx.send(msg);
    }

    pub fn sync(&self, timeout: Duration) {
        let (ack_tx, ack_rx) = bounded(1);
        if self.tx.send_timeout(Message::Sync(ack_tx), timeout).is_ok() {
            let _ = ack_rx.recv_timeout(timeout);
        }
    }

    /// Asks the thread to finish and waits for it. Returns whether it has stopped.
    pub fn stop(&self, exiting: bool) -> bool {
        let Some(handle) = self.thread.lock().take() else {
            return true;
        };
        // From now on a batch that does not complete is given up after a grace period
        // rather than waited for forever.
        self.stopping.store(true, Ordering::Relaxed);
        let _ = self.tx.send(Message::Shutdown);
        let limit = if exiting { EXIT_GRACE } else { DESTROY_LIMIT };
        let finished = self.done.recv_timeout(limit).is_ok();
        if finished {
            let _ = handle.join();
        } else {
            log::error!(
                "the trace thread did not finish within {limit:?}; what it had not written is lost"
            );
        }
        finished
    }
}

/// The consumer of a device: started with the device, or (on demand) at the first message,
/// so that a device nobody traces has no thread.
pub struct TraceqHandle {
    consumer: OnceLock<Consumer>,
    start: Mutex<Option<Starter>>,
}

type Starter = Box<dyn FnOnce() -> std::io::Result<Consumer> + Send>;

impl TraceqHandle {
    pub fn started(consumer: Consumer) -> TraceqHandle {
        TraceqHandle {
            consumer: OnceLock::from(consumer),
            start: Mutex::new(None),
        }
    }

    /// `start` runs at the first message.
    pub fn lazy(
        start: impl FnOnce() -> std::io::Result<Consumer> + Send + 'static,
    ) -> TraceqHandle {
        TraceqHandle {
            consumer: OnceLock::new(),
            start: Mutex::new(Some(Box::new(start))),
        }
    }

    fn get_or_start(&self) -> Option<&Consumer> {
        if let Some(c) = self.consumer.get() {
            return Some(c);
        }
        let mut start = self.start.lock();
        if let Some(c) = self.consumer.get() {
            return Some(c);
        }
        match (start.take()?)() {
            Ok(c) => Some(self.consumer.get_or_init(|| c)),
            Err(e) => {
                log::error!("could not start the traceq thread ({e}); this device's trace is lost");
                None
            }
        }
    }

    pub fn send(&self, msg: Message) {
        if let Some(c) = self.get_or_start() {
            c.send(msg);
        }
    }

    /// Waits until what was sent is written; nothing to wait for if never started.
    pub fn sync(&self, timeout: Duration) {
        if let Some(c) = self.consumer.get() {
            c.sync(timeout);
        }
    }

    /// Stops the thread (a thread never started never will). Returns whether it stopped.
    pub fn stop(&self, exiting: bool) -> bool {
        self.start.lock().take();
        self.consumer.get().is_none_or(|c| c.stop(exiting))
    }
}

struct Traceq {
    device_index: u32,
    dispatch: Arc<DeviceDispatch>,
    caps: Arc<DeviceCaps>,
    sink: Box<dyn Sink>,
    stats: Arc<Stats>,
    /// Batches in the channel; one is taken off as the thread receives it.
    pending: Arc<PendingBatches>,
    stopping: Arc<AtomicBool>,
    /// Set after a wait failed (device lost): later batches are given up without waiting.
    broken: bool,
    batches_written: u64,
    /// Time spent turning completed batches into output (not waiting for the GPU), and the
    /// events written in it: the thread's throughput, logged at the end (`UTRACE_LOG=info`).
    busy: Duration,
    /// Time spent dropping written batches: giving their query chunks back, which resets
    /// them on the host when the device can (the driver's cost per query, not writing).
    releasing: Duration,
    /// The thread's CPU time within `busy` (less than `busy` when the application or the
    /// driver had its core).
    busy_cpu_ns: u64,
    /// Timestamps read from the queries of a batch (kept for the next).
    host_values: Vec<u64>,
    /// A read of queries failed (said once).
    read_failed: bool,
}

pub fn spawn(
    device_index: u32,
    dispatch: Arc<DeviceDispatch>,
    caps: Arc<DeviceCaps>,
    sink: Box<dyn Sink>,
    stats: Arc<Stats>,
) -> std::io::Result<Consumer> {
    let (tx, rx) = unbounded();
    let (done_tx, done) = bounded(1);
    let stopping = Arc::new(AtomicBool::new(false));
    let pending = Arc::new(PendingBatches::new(MAX_PENDING_BATCHES));
    let mut traceq = Traceq {
        device_index,
        dispatch,
        caps,
        sink,
        stats: Arc::clone(&stats),
        pending: Arc::clone(&pending),
        stopping: Arc::clone(&stopping),
        broken: false,
        batches_written: 0,
        busy: Duration::ZERO,
        releasing: Duration::ZERO,
        busy_cpu_ns: 0,
        host_values: Vec::new(),
        read_failed: false,
    };
    let thread = std::thread::Builder::new()
        .name("utrace-traceq".into())
        .spawn(move || {
            traceq.run(rx);
            let _ = done_tx.send(());
        })?;
    Ok(Consumer {
        tx,
        pending,
        stats,
        overflow_reported: AtomicBool::new(false),
        stopping,
        done,
        thread: Mutex::new(Some(thread)),
    })
}

impl Traceq {
    fn run(&mut self, rx: Receiver<Message>) {
        'idle: while let Ok(first) = rx.recv() {
            // Woken from idle: let the application go on submitting before the work starts,
            // so that a burst of submissions costs one wake-up of this thread (and of the
            // driver's waits it makes), not one per submission on cores the application
            // shares with it.
            if matches!(first, Message::Batch(_) | Message::EndOfFrame(_)) {
                std::thread::sleep(COALESCE);
            }
            let mut next = Some(first);
            while let Some(msg) = next.take().or_else(|| rx.try_recv().ok()) {
                if !self.handle(msg) {
                    break 'idle;
                }
            }
        }
        self.sink.end_of_trace(&TraceSummary {
            device: self.device_index,
            batches: self.stats.batches.load(Ordering::Relaxed),
            events: self.stats.events.load(Ordering::Relaxed),
            dropped: self.stats.dropped.load(Ordering::Relaxed),
        });
        // The device is going: give its outputs a moment to write what it queued. What
        // they hold past that is written later if they take data (or reported at exit).
        let started = Instant::now();
        let left = self.sink.drain(DRAIN_GRACE);
        self.busy += started.elapsed();
        self.log_throughput();
        if left > 0 {
            log::warn!(
                "device {}: {left} batch(es) not yet written after {DRAIN_GRACE:?} (the output is not taking data)",
                self.device_index
            );
        }
    }

    /// One message, in order. False at shutdown.
    fn handle(&mut self, msg: Message) -> bool {
        match msg {
            Message::Batch(batch) => {
                self.pending.taken();
                let outcome = catch_unwind(AssertUnwindSafe(|| {
                    if self.wait(&batch) {
                        let mut batch = batch;
                        let (started, started_cpu) = (Instant::now(), cpu_clock::thread_cpu_ns());
                        self.process(&mut batch);
                        let written = Instant::now();
                        self.busy_cpu_ns += cpu_clock::thread_cpu_ns().saturating_sub(started_cpu);
                        drop(batch);
                        self.busy += written - started;
                        self.releasing += written.elapsed();
                    } else {
                        self.give_up(&batch);
                    }
                }));
                if outcome.is_err() {
                    log::error!(
                        "internal error while writing a batch of device {}; it is dropped",
                        self.device_index
                    );
                }
            }
            Message::EndOfFrame(frame) => self.sink.end_of_frame(self.device_index, frame),
            Message::Sync(ack) => {
                let _ = ack.send(());
            }
            Message::Shutdown => return false,
        }
        true
    }

    fn wait(&mut self, batch: &Batch) -> bool {
        if self.broken {
            return false;
        }
        let mut stop_started: Option<Instant> = None;
        loop {
            match completion::wait(
                &self.dispatch,
                &batch.completion,
                WAIT_SLICE.as_nanos() as u64,
            ) {
                WaitOutcome::Done => return true,
                WaitOutcome::TimedOut => {
                    if self.stopping.load(Ordering::Relaxed) {
                        let started = *stop_started.get_or_insert_with(Instant::now);
                        if started.elapsed() >= STOP_GRACE {
                            // The GPU is not finishing: later batches cannot complete
                            // before this one, so they are given up without waiting too.
                            log::warn!(
                                "device {}: a batch did not complete within {:?} of shutdown; it and the batches after it are dropped",
                                self.device_index,
                                STOP_GRACE
                            );
                            self.broken = true;
                            return false;
                        }
                    }
                }
                WaitOutcome::Failed(e) => {
                    log::error!(
                        "device {}: waiting for a batch failed ({e}); tracing stops for this device",
                        self.device_index
                    );
                    self.broken = true;
                    return false;
                }
            }
        }
    }

    fn log_throughput(&self) {
        let events = self.stats.events.load(Ordering::Relaxed);
        let seconds = self.busy.as_secs_f64();
        if events > 0 && seconds > 0.0 {
            log::info!(
                "device {}: traceq wrote {events} events in {:.1} ms of work, {:.2} M events/s ({:.1} ms on the CPU, {:.2} M events/s); {:.1} ms more giving their query chunks back",
                self.device_index,
                seconds * 1e3,
                events as f64 / seconds / 1e6,
                self.busy_cpu_ns as f64 / 1e6,
                events as f64 / (self.busy_cpu_ns.max(1) as f64 / 1e9) / 1e6,
                self.releasing.as_secs_f64() * 1e3
            );
        }
    }

    /// A batch that will not complete (or whose wait failed): its events are counted lost.
    fn give_up(&mut self, batch: &Batch) {
        self.stats
            .dropped
            .fetch_add(batch.event_count(), Ordering::Relaxed);
    }

    /// Writes a completed batch.
    fn process(&mut self, batch: &mut Batch) {
        let Some(results) = batch.results.take() else {
            return;
        };
        if !batch.captured {
            // Outside a capture: the batch only kept its queries valid.
            self.recycle(batch, results);
            return;
        }
        let mut total = 0u32;
        for trace in &batch.traces {
            trace.visit(&mut |t| total += t.slots);
        }
        let mask = self.caps.timestamp_mask(batch.queue.family);
        let period = self.caps.timestamp_period;
        let to_ns = |raw: u64| ticks_to_ns(raw & mask, period);
        let mut events: Vec<Event<'_>> = Vec::with_capacity(batch.event_count() as usize);
        let values = match &results {
            Results::Copied(resources) => resources
                .readback
                .as_ref()
                .map(|readback| readback.read(&self.dispatch, total)),
            Results::InQueries => {
                match read_queries(&self.dispatch, &batch.traces, total, &mut self.host_values) {
                    Ok(values) => Some(values),
                    Err(e) => {
                        if !self.read_failed {
                            self.read_failed = true;
                            log::error!("device {}: reading a batch's timestamps failed ({e}); such batches are dropped and counted", self.device_index);
                        }
                        None
                    }
                }
            }
        };
        match values {
            Some(values) => {
                let dropped = batch_events(&batch.traces, values, &to_ns, &mut events);
                self.stats.dropped.fetch_add(dropped, Ordering::Relaxed);
            }
            // An untimed batch (no readback could be had, the queries could not be read):
            // its events are given up.
            None => {
                self.stats
                    .dropped
                    .fetch_add(batch.event_count(), Ordering::Relaxed);
            }
        }
        if events.is_empty() {
            // Nothing could be read (an untimed batch, incomplete traces): no empty block.
            drop(events);
            self.recycle(batch, results);
            return;
        }
        self.batches_written += 1;
        let info = BatchInfo {
            number: self.batches_written,
            device: self.device_index,
            queue: batch.queue.queue.as_raw(),
            queue_family: batch.queue.family,
            queue_index: batch.queue.index,
            frame: batch.frame,
            submission: batch.submission,
            cmdbufs: batch.traces.len() as u32,
            queries: total,
            command_buffers: &batch.command_buffers,
            submit: batch.submit,
        };
        self.sink.batch(&info, &events);
        self.stats.batches.fetch_add(1, Ordering::Relaxed);
        self.stats
            .events
            .fetch_add(events.len() as u64, Ordering::Relaxed);
        drop(events);
        self.recycle(batch, results);
    }

    /// Gives a completed batch's layer resources back to its queue.
    fn recycle(&self, batch: &Batch, results: Results) {
        if let Results::Copied(resources) = results {
            batch.queue.recycle(&self.dispatch, resources);
        }
    }
}

/// The timestamps of a completed batch whose queries hold them, in readback order (each
/// trace's region after the previous one's, depth first), into `values`.
fn read_queries<'v>(
    d: &DeviceDispatch,
    traces: &[Arc<RecordedTrace>],
    total: u32,
    values: &'v mut Vec<u64>,
) -> Result<&'v [u64], vk::Result> {
    values.clear();
    values.resize(total as usize, 0);
    let mut base = 0u32;
    let mut outcome = Ok(());
    for trace in traces {
        trace.visit(&mut |t| {
            for c in &t.copies {
                let at = (base + c.slot) as usize;
                let out = &mut values[at..at + c.count as usize];
                outcome = outcome.and(query_pool::read(d, c.pool, c.first, out));
            }
            base += t.slots;
        });
    }
    outcome.map(|()| &values[..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// A starter that counts its runs and fails (a Consumer needs a device).
    fn counting(runs: &Arc<AtomicU32>) -> impl FnOnce() -> std::io::Result<Consumer> + Send {
        let runs = Arc::clone(runs);
        move || {
            runs.fetch_add(1, Ordering::Relaxed);
            Err(std::io::Error::other("no device in a unit test"))
        }
    }

    #[test]
    fn pending_batches_are_counted_against_the_cap() {
        let pending = PendingBatches::new(2);
        assert!(pending.try_add());
        assert!(pending.try_add());
        assert!(!pending.try_add(), "the third is refused");
        assert!(!pending.try_add(), "and a refusal takes no room");
        pending.taken();
        assert!(pending.try_add(), "room again once the thread took one");
        assert!(!pending.try_add());
    }

    #[test]
    fn a_lazy_traceq_starts_at_the_first_message_only() {
        let runs = Arc::new(AtomicU32::new(0));
        let handle = TraceqHandle::lazy(counting(&runs));
        handle.sync(Duration::from_millis(1));
        assert_eq!(runs.load(Ordering::Relaxed), 0, "a sync starts nothing");
        handle.send(Message::EndOfFrame(0));
        handle.send(Message::EndOfFrame(1));
        assert_eq!(
            runs.load(Ordering::Relaxed),
            1,
            "started once, at the first message"
        );
        assert!(handle.stop(false));
    }

    #[test]
    fn a_stopped_lazy_traceq_never_starts() {
        let runs = Arc::new(AtomicU32::new(0));
        let handle = TraceqHandle::lazy(counting(&runs));
        assert!(handle.stop(false), "nothing to stop");
        handle.send(Message::EndOfFrame(0));
        assert_eq!(runs.load(Ordering::Relaxed), 0);
    }
}
