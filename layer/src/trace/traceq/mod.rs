//! The traceq thread, one per device (u_trace's `traceq`): waits for each batch to complete
//! (bounded waits), reads its timestamps, turns ticks into nanoseconds and hands the events
//! to the sink, in submission order. Frame ends and syncs travel the same channel, so they
//! are written after the batches submitted before them.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, Sender};
use parking_lot::Mutex;

use crate::gpu::interface::Backend;
use crate::trace::sink_interface::{ObjectNames, Sink};
use crate::trace::submit::batch::Batch;

mod copied_values;
mod counters;
mod early_timeout;
mod events;
mod mailbox;
mod query_window;
mod queue_quiet;
mod settle;
mod thread;
mod write_deadline;

use mailbox::{mailbox, Outbox};

use thread::Traceq;
use write_deadline::{WriteDeadline, DESTROY_WRITING, EXIT_WRITING};

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
/// How long a stopping thread waits for its outputs to write what it queued.
const DRAIN_GRACE: Duration = Duration::from_secs(1);
/// What a stopping thread may still take after its writing deadline (see
/// [`write_deadline`]): the read it was in (a chunk), a record waiting for room in a full
/// output (`sink::output::STALL`, 2 s), the end record and the drain ([`DRAIN_GRACE`]).
/// `vkDestroyDevice` waits 8 s at most in all. A thread that is still running past this
/// (never expected) is left, and what it had not written is lost.
const FINISHING: Duration = Duration::from_secs(3);

// A batch goes inline, not boxed: the mailbox keeps its slots, so sending allocates
// nothing (a box would be one allocation per submission).
#[allow(clippy::large_enum_variant)]
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
    tx: Outbox<Message>,
    pending: Arc<PendingBatches>,
    stats: Arc<Stats>,
    /// Whether the first batch dropped for a full queue was reported.
    overflow_reported: AtomicBool,
    stopping: Arc<AtomicBool>,
    deadline: Arc<WriteDeadline>,
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
        if self.tx.send(Message::Sync(ack_tx)).is_ok() {
            let _ = ack_rx.recv_timeout(timeout);
        }
    }

    /// Asks the thread to finish and waits for it. Returns whether it has stopped.
    pub fn stop(&self, exiting: bool) -> bool {
        let Some(handle) = self.thread.lock().take() else {
            return true;
        };
        // From now on a batch that does not complete is given up after a grace period
        // rather than waited for forever, and the writing stops at a deadline.
        let writing = if exiting {
            EXIT_WRITING
        } else {
            DESTROY_WRITING
        };
        self.deadline.set(writing);
        self.stopping.store(true, Ordering::Relaxed);
        let _ = self.tx.send(Message::Shutdown);
        let limit = self.deadline.limit().unwrap_or(writing) + FINISHING;
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
    /// Batches that only a later signal on their queue completes ([`Self::hold`]), in
    /// submission order: sent before the next message. The traceq thread could only wait
    /// for them, and a burst of such submissions then shares nothing with it.
    held: Mutex<Vec<Message>>,
    /// `held` is not empty (read without its lock by every send).
    holding: AtomicBool,
}

type Starter = Box<dyn FnOnce() -> std::io::Result<Consumer> + Send>;

impl TraceqHandle {
    pub fn started(consumer: Consumer) -> TraceqHandle {
        TraceqHandle {
            consumer: OnceLock::from(consumer),
            start: Mutex::new(None),
            held: Mutex::new(Vec::new()),
            holding: AtomicBool::new(false),
        }
    }

    /// `start` runs at the first message.
    pub fn lazy(
        start: impl FnOnce() -> std::io::Result<Consumer> + Send + 'static,
    ) -> TraceqHandle {
        TraceqHandle {
            consumer: OnceLock::new(),
            start: Mutex::new(Some(Box::new(start))),
            held: Mutex::new(Vec::new()),
            holding: AtomicBool::new(false),
        }
    }

    /// The thread's stopping flag, once it started (for waits of its own elsewhere, which
    /// must give up as its waits do).
    pub fn stopping(&self) -> Option<Arc<AtomicBool>> {
        self.consumer.get().map(|c| Arc::clone(&c.stopping))
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

    /// Sends `msg` after the held batches.
    pub fn send(&self, msg: Message) {
        if let Some(c) = self.get_or_start() {
            self.send_held(c);
            c.send(msg);
        }
    }

    /// Keeps a batch whose completion only a later submission (or the host) signals until
    /// the next message is sent. Allocates nothing once the list has held as many.
    pub fn hold(&self, msg: Message) {
        self.held.lock().push(msg);
        self.holding.store(true, Ordering::Relaxed);
    }

    /// Sends the held batches now (their signal was just given).
    pub fn flush(&self) {
        if self.holding.load(Ordering::Relaxed) {
            if let Some(c) = self.get_or_start() {
                self.send_held(c);
            }
        }
    }

    fn send_held(&self, c: &Consumer) {
        if !self.holding.load(Ordering::Relaxed) {
            return;
        }
        let mut held = self.held.lock();
        self.holding.store(false, Ordering::Relaxed);
        for msg in held.drain(..) {
            c.send(msg);
        }
    }

    /// Waits until what was sent (and held) is written; nothing to wait for if never started.
    pub fn sync(&self, timeout: Duration) {
        self.flush();
        if let Some(c) = self.consumer.get() {
            c.sync(timeout);
        }
    }

    /// Stops the thread (a thread never started never will) once it took the held batches.
    /// Returns whether it stopped.
    pub fn stop(&self, exiting: bool) -> bool {
        self.flush();
        self.start.lock().take();
        self.consumer.get().is_none_or(|c| c.stop(exiting))
    }
}

pub fn spawn(
    device_index: u32,
    backend: Backend,
    sink: Box<dyn Sink>,
    stats: Arc<Stats>,
    names: ObjectNames,
) -> std::io::Result<Consumer> {
    let (tx, rx) = mailbox();
    let (done_tx, done) = bounded(1);
    let stopping = Arc::new(AtomicBool::new(false));
    let deadline = Arc::new(WriteDeadline::default());
    let pending = Arc::new(PendingBatches::new(MAX_PENDING_BATCHES));
    let mut traceq = Traceq::new(
        device_index,
        backend,
        sink,
        Arc::clone(&stats),
        Arc::clone(&pending),
        (Arc::clone(&stopping), Arc::clone(&deadline)),
    )
    .with_names(names);
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
        deadline,
        done,
        thread: Mutex::new(Some(thread)),
    })
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
