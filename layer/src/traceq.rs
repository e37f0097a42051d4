//! The traceq thread, one per device (u_trace's `traceq`): waits for each batch to complete
//! (bounded waits), reads its timestamps, turns ticks into nanoseconds and hands the events
//! to the sink, in submission order. Frame ends and syncs travel the same channel, so they
//! are written after the batches submitted before them.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ash::vk::Handle;
use crossbeam_channel::{bounded, Receiver, Sender};
use parking_lot::Mutex;

use crate::gpu::caps::{ticks_to_ns, DeviceCaps};
use crate::gpu::completion::{self, WaitOutcome};
use crate::loader::dispatch::DeviceDispatch;
use crate::sink::{BatchInfo, Event, ObjectName, Sink, TraceSummary};
use crate::trace::batch::Batch;
use crate::trace::events::batch_events;

/// Batches in flight between submit and the traceq thread. When full, `vkQueueSubmit`
/// waits for the thread (no event is dropped; issue-level policy may change this).
const CHANNEL_CAPACITY: usize = 256;
/// One wait on the GPU; the thread re-checks whether it is stopping between waits.
const WAIT_SLICE: Duration = Duration::from_millis(100);
/// How long a stopping thread still waits for a batch before giving it up.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How long the process-exit path waits for the thread to finish.
const EXIT_GRACE: Duration = Duration::from_secs(3);

pub enum Message {
    Batch(Batch),
    EndOfFrame(u32),
    ObjectName(ObjectName),
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

/// The submit side of the channel and the thread's handle.
pub struct Consumer {
    tx: Sender<Message>,
    stopping: Arc<AtomicBool>,
    done: Receiver<()>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Consumer {
    pub fn send(&self, msg: Message) {
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
        let finished = if exiting {
            self.done.recv_timeout(EXIT_GRACE).is_ok()
        } else {
            self.done.recv().is_ok()
        };
        if finished {
            let _ = handle.join();
        }
        finished
    }
}

struct Traceq {
    device_index: u32,
    dispatch: Arc<DeviceDispatch>,
    caps: Arc<DeviceCaps>,
    sink: Box<dyn Sink>,
    stats: Arc<Stats>,
    stopping: Arc<AtomicBool>,
    /// Set after a wait failed (device lost): later batches are given up without waiting.
    broken: bool,
    batches_written: u64,
}

pub fn spawn(
    device_index: u32,
    dispatch: Arc<DeviceDispatch>,
    caps: Arc<DeviceCaps>,
    sink: Box<dyn Sink>,
    stats: Arc<Stats>,
) -> std::io::Result<Consumer> {
    let (tx, rx) = bounded(CHANNEL_CAPACITY);
    let (done_tx, done) = bounded(1);
    let stopping = Arc::new(AtomicBool::new(false));
    let mut traceq = Traceq {
        device_index,
        dispatch,
        caps,
        sink,
        stats,
        stopping: Arc::clone(&stopping),
        broken: false,
        batches_written: 0,
    };
    let thread = std::thread::Builder::new()
        .name("utrace-traceq".into())
        .spawn(move || {
            traceq.run(rx);
            let _ = done_tx.send(());
        })?;
    Ok(Consumer {
        tx,
        stopping,
        done,
        thread: Mutex::new(Some(thread)),
    })
}

impl Traceq {
    fn run(&mut self, rx: Receiver<Message>) {
        while let Ok(msg) = rx.recv() {
            match msg {
                Message::Batch(batch) => {
                    let outcome = catch_unwind(AssertUnwindSafe(|| self.process(batch)));
                    if outcome.is_err() {
                        log::error!(
                            "internal error while writing a batch of device {}; it is dropped",
                            self.device_index
                        );
                    }
                }
                Message::EndOfFrame(frame) => self.sink.end_of_frame(self.device_index, frame),
                Message::ObjectName(name) => self.sink.object_name(&name),
                Message::Sync(ack) => {
                    let _ = ack.send(());
                }
                Message::Shutdown => break,
            }
        }
        self.sink.end_of_trace(&TraceSummary {
            device: self.device_index,
            batches: self.stats.batches.load(Ordering::Relaxed),
            events: self.stats.events.load(Ordering::Relaxed),
            dropped: self.stats.dropped.load(Ordering::Relaxed),
        });
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

    fn process(&mut self, mut batch: Batch) {
        if !self.wait(&batch) {
            self.stats
                .dropped
                .fetch_add(batch.event_count(), Ordering::Relaxed);
            return;
        }
        let Some(resources) = batch.resources.take() else {
            return;
        };
        if !batch.captured {
            // Outside a capture: the batch only kept its queries valid.
            batch.queue.recycle(&self.dispatch, resources);
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
        match resources.readback.as_ref() {
            Some(readback) => {
                let values = readback.read(&self.dispatch, total);
                let dropped = batch_events(&batch.traces, values, &to_ns, &mut events);
                self.stats.dropped.fetch_add(dropped, Ordering::Relaxed);
            }
            // An untimed batch (no readback could be had): its events are given up.
            None => {
                self.stats
                    .dropped
                    .fetch_add(batch.event_count(), Ordering::Relaxed);
            }
        }
        if events.is_empty() {
            // Nothing could be read (an untimed batch, incomplete traces): no empty block.
            drop(events);
            batch.queue.recycle(&self.dispatch, resources);
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
        batch.queue.recycle(&self.dispatch, resources);
    }
}
