//! The traceq thread's work: each batch waited for (bounded waits), its timestamps read
//! and turned into nanoseconds, its events handed to the sink, in submission order.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ash::vk::Handle;

use super::copied_values::CopiedValues;
use super::early_timeout::pause_after_timeout;
use super::events::{BatchEvents, Timestamps};
use super::mailbox::Inbox;
use super::query_window::QueryScratch;
use super::write_deadline::{Cut, WriteDeadline};
use super::{Message, PendingBatches, Stats, COALESCE, DRAIN_GRACE, STOP_GRACE, WAIT_SLICE};
use crate::gpu::interface::{cpu_clock, cpu_ticks, Backend, Completion, QueueContext, WaitOutcome};
use crate::trace::pipeline_names::PipelineNames;
use crate::trace::sink_interface::{BatchInfo, EventPieces, ObjectNames, Sink, TraceSummary};
use crate::trace::submit::batch::{Batch, Results};

pub(super) struct Traceq {
    device_index: u32,
    backend: Backend,
    sink: Box<dyn Sink>,
    stats: Arc<Stats>,
    /// Batches in the channel; one is taken off as the thread receives it.
    pending: Arc<PendingBatches>,
    stopping: Arc<AtomicBool>,
    /// When a stopping thread stops writing; what that cut.
    deadline: Arc<WriteDeadline>,
    cut: Cut,
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
    /// Where the timestamps of a batch left in its queries are read (kept for the next).
    query_scratch: QueryScratch,
    /// A read of queries failed (said once).
    read_failed: bool,
    /// Batches left waiting for a signal were given up at exit (said once).
    said_unsignalled: bool,
    /// When the batch being processed completed, if traceq saw it complete (it waited for
    /// it); `None` when it had completed before traceq got to it.
    completed_at: Option<Instant>,
    /// The last completion value whose batches settled (see `settle`).
    settled: u64,
    /// What the batches' draws and dispatches name as their pipeline.
    pipeline_names: PipelineNames,
}

impl Traceq {
    pub(super) fn new(
        device_index: u32,
        backend: Backend,
        sink: Box<dyn Sink>,
        stats: Arc<Stats>,
        pending: Arc<PendingBatches>,
        (stopping, deadline): (Arc<AtomicBool>, Arc<WriteDeadline>),
    ) -> Traceq {
        Traceq {
            device_index,
            backend,
            sink,
            stats,
            pending,
            stopping,
            deadline,
            cut: Cut::default(),
            broken: false,
            batches_written: 0,
            busy: Duration::ZERO,
            releasing: Duration::ZERO,
            busy_cpu_ns: 0,
            query_scratch: QueryScratch::default(),
            read_failed: false,
            said_unsignalled: false,
            completed_at: None,
            settled: 0,
            pipeline_names: PipelineNames::new(ObjectNames::default()),
        }
    }

    /// Pipeline names read from `names`, the device's list of object names.
    pub(super) fn with_names(mut self, names: ObjectNames) -> Traceq {
        self.pipeline_names = PipelineNames::new(names);
        self
    }

    pub(super) fn run(&mut self, rx: Inbox<Message>) {
        'idle: while let Some(first) = rx.recv() {
            // Woken from idle: let the application go on submitting before the work starts,
            // so that a burst of submissions costs one wake-up of this thread (and of the
            // driver's waits it makes), not one per submission on cores the application
            // shares with it.
            if matches!(first, Message::Batch(_) | Message::EndOfFrame(_)) {
                std::thread::sleep(COALESCE);
            }
            let mut next = Some(first);
            while let Some(msg) = next.take().or_else(|| rx.try_recv()) {
                if !self.handle(msg) {
                    break 'idle;
                }
            }
        }
        self.cut.say(self.device_index, self.deadline.limit());
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
                #[cfg(debug_assertions)]
                super::write_deadline::debug_hold(&self.stopping);
                let outcome = catch_unwind(AssertUnwindSafe(|| {
                    // Past the writing deadline nothing is waited for any more.
                    if !self.deadline.passed() && self.wait(&batch) {
                        let mut batch = batch;
                        let (started, started_cpu) = (Instant::now(), cpu_clock::thread_cpu_ns());
                        self.process(&mut batch);
                        let written = Instant::now();
                        self.busy_cpu_ns += cpu_clock::thread_cpu_ns().saturating_sub(started_cpu);
                        drop(batch);
                        self.busy += written - started;
                        self.releasing += written.elapsed();
                    } else {
                        if self.deadline.passed() {
                            self.cut.add(batch.event_count());
                        }
                        self.give_up(&batch);
                    }
                }));
                if outcome.is_err() {
                    log::error!(
                        "internal error while writing a batch of device {}; it is dropped",
                        self.device_index
                    );
                }
                #[cfg(debug_assertions)]
                crate::alloc_count::batch_released();
            }
            Message::EndOfFrame(frame) => self.sink.end_of_frame(self.device_index, frame),
            Message::Sync(ack) => {
                let _ = ack.send(());
            }
            Message::Shutdown => return false,
        }
        true
    }

    /// Waits for `batch`; when it had not completed yet, notes when it did
    /// (`completed_at`: see `settle`).
    fn wait(&mut self, batch: &Batch) -> bool {
        let done = matches!(self.backend.wait(&batch.completion, 0), WaitOutcome::Done);
        self.completed_at = None;
        if done {
            return true;
        }
        let waited = self.wait_for(&batch.queue, &batch.completion);
        self.completed_at = Some(Instant::now());
        waited
    }

    fn wait_for(&mut self, queue: &QueueContext, completion: &Completion) -> bool {
        if self.broken {
            return false;
        }
        let mut stop_started: Option<Instant> = None;
        loop {
            if self.stopping.load(Ordering::Relaxed) && !queue.completion_submitted(completion) {
                // Its signal was left to a later submission that will not come: the process
                // is exiting with the device alive, without having waited for the queue.
                if !self.said_unsignalled {
                    self.said_unsignalled = true;
                    log::warn!(
                        "device {}: the process ended before the last batches submitted without a fence or semaphore were known to complete; they are dropped",
                        self.device_index
                    );
                }
                return false;
            }
            let asked = Instant::now();
            match self.backend.wait(completion, WAIT_SLICE.as_nanos() as u64) {
                WaitOutcome::Done => return true,
                WaitOutcome::TimedOut => {
                    if let Some(pause) = pause_after_timeout(asked.elapsed(), WAIT_SLICE) {
                        std::thread::sleep(pause);
                    }
                    if self.deadline.passed() {
                        return false;
                    }
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
            self.recycle(batch, results, false);
            return;
        }
        let mut total = 0u32;
        for trace in &batch.traces {
            trace.visit(&mut |t| total += t.slots);
        }
        let unread = match &results {
            Results::Copied(resources) => match &resources.readback {
                Some(readback) => {
                    let all = CopiedValues::total(&batch.traces, total);
                    let values = self.backend.read_copied(readback, all);
                    let values = CopiedValues::new(values, &batch.traces, total);
                    self.write(batch, total, values)
                }
                None => None,
            },
            Results::InQueries => self.write_from_queries(batch, total),
        };
        // An untimed batch (no readback could be had, the queries could not be read): its
        // events are given up.
        let lost = unread.unwrap_or_else(|| batch.event_count());
        self.stats.dropped.fetch_add(lost, Ordering::Relaxed);
        self.recycle(batch, results, true);
    }

    /// Hands a batch's events, timed by `values`, to the sink. Returns the events a reading
    /// left out beyond those counted already.
    fn write(&mut self, batch: &Batch, total: u32, values: impl Timestamps) -> Option<u64> {
        let time = self.backend.time().family(batch.queue.family);
        let to_ns = |raw: u64| time.to_ns(raw);
        let counters = super::counters::collect(batch, &self.backend, &values);
        let mut events = BatchEvents::new(&batch.traces, values, to_ns);
        self.stats
            .dropped
            .fetch_add(events.dropped, Ordering::Relaxed);
        let count = events.count();
        if count == 0 {
            // Nothing could be read (incomplete traces): no empty block.
            return Some(0);
        }
        self.batches_written += 1;
        self.pipeline_names.refresh();
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
            submit: batch.submit.placed(cpu_ticks::tick_pair()),
            // Set by the sinks that show it (`sink::submit_clock`).
            submitted_ns: None,
            pipeline_names: Some(&self.pipeline_names),
            counters: &counters,
        };
        self.sink.batch(&info, &mut events);
        self.stats.batches.fetch_add(1, Ordering::Relaxed);
        self.stats
            .events
            .fetch_add(count - events.unread.min(count), Ordering::Relaxed);
        Some(events.unread)
    }

    /// Gives a completed batch's layer resources back to its queue, and arms its reusable
    /// traces for their next run (see `trace::record::reruns`): a copy reset their queries,
    /// or the queries of a run left there are reset now if they were not `read` (reading
    /// them reset them); so are a reusable trace's hardware counter queries.
    fn recycle(&self, batch: &Batch, results: Results, read: bool) {
        let copied = match &results {
            Results::Copied(resources) => resources.readback.is_some(),
            Results::InQueries => false,
        };
        for trace in &batch.traces {
            if copied || !read {
                trace.run_done(batch.submission, copied);
            }
            trace.hardware_done(batch.submission);
        }
        if let Results::Copied(resources) = results {
            self.backend.recycle(&batch.queue, resources);
        }
    }
}

mod in_queries;
