//! The trace of one command buffer (u_trace's `struct u_trace`): the chunks its timestamps
//! are written to and the events recorded with them, in recording order.
//!
//! While the application records, the trace is mutable and owned by the command buffer's
//! entry (the application synchronises a command buffer externally, so no lock is contended).
//! `vkEndCommandBuffer` freezes it into a [`RecordedTrace`] shared by every batch that
//! submits the command buffer.
//!
//! Where a timestamp may not be written, the trace knows it (see [`WriteState`]):
//! - inside a subpass whose contents are secondary command buffers, a primary records only
//!   `vkCmdExecuteCommands`, so its events there are left out;
//! - between a suspended dynamic render pass and its resumption nothing that does work may be
//!   recorded, so events there share the last timestamp written before.
//!
//! In a multiview render pass a timestamp takes one query per view (consecutive); the first
//! holds the time.

use std::sync::Arc;

use ash::vk;

use super::bound_pipelines::BoundPipelines;
use super::chunk::{ChunkPool, RecordedEvent};
use super::hardware::HwRecording;
use super::query_slots::QuerySlots;
use super::recorded_trace::{Child, RecordedTrace};
use super::recorder::Recorder;
use super::statistics::StatsRecording;
use crate::trace::tracepoint::{LabelInput, LabelRef};

mod counted;
mod counted_hardware;
mod freeze;
mod pair;

pub use pair::Bracket;

/// An event held back (`start_cmd_buffer`, until the first command that does work).
#[derive(Clone, Copy, Debug)]
struct HeldEvent<const MAX_WORDS: usize> {
    id: usize,
    end_of_pipe: bool,
    words: [u32; MAX_WORDS],
    len: usize,
}

impl<const MAX_WORDS: usize> HeldEvent<MAX_WORDS> {
    fn new(id: usize, end_of_pipe: bool, words: &[u32]) -> Self {
        let mut held = HeldEvent {
            id,
            end_of_pipe,
            words: [0; MAX_WORDS],
            len: words.len().min(MAX_WORDS),
        };
        held.words[..held.len].copy_from_slice(&words[..held.len]);
        held
    }
}

/// Longest label kept, in bytes.
pub const MAX_LABEL: usize = 256;

/// Whether a timestamp may be written at the current point of the recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteState {
    Free,
    /// A primary inside a subpass (or dynamic render pass) whose contents are secondary
    /// command buffers: events are left out.
    SecondaryContents,
    /// After a suspending `vkCmdEndRendering`, until the render pass resumes: events share the
    /// last timestamp written.
    Suspended,
}

/// `MAX_WORDS`: the most words a tracepoint's arguments take (the generated
/// `Payload::MAX_WORDS`; `tracepoints::CommandTrace` names the trace with it). A parameter,
/// so that the trace needs nothing of the generated code that calls it.
pub struct CommandTrace<const MAX_WORDS: usize> {
    pub pool: vk::CommandPool,
    pub family: u32,
    pub level: vk::CommandBufferLevel,
    /// Whether the current recording gets tracepoints (decided at begin).
    instrumented: bool,
    /// How many tracepoints may still take the short path of [`Self::append`] (one
    /// counter tested, instead of each condition): 0 unless the recording is instrumented
    /// and complete, a timestamp of one view may be written here, no event is held back or
    /// pending, and queries are read chunk by chunk; else the room left in `events`, in
    /// `args` and in the current chunk of queries. Kept by [`Self::refresh_fast`] wherever
    /// one of those changes.
    fast_left: u32,
    /// Begun with `ONE_TIME_SUBMIT`: the recording runs at most once.
    one_time: bool,
    /// Begun with `SIMULTANEOUS_USE`: a run may start while another is pending.
    simultaneous: bool,
    /// An instrumented recording is in progress (begun, not yet ended or reset): counted in
    /// the device's [`super::cmdbufs::CommandBuffers::any_recording`].
    recording: bool,
    /// The next event (`start_cmd_buffer`) waits in `pending_start`.
    defer_next: bool,
    /// `start_cmd_buffer`, written before the first command that does work (so that a
    /// command buffer that resumes a render pass writes nothing before the resumption).
    pending_start: Option<HeldEvent<MAX_WORDS>>,
    pub write_state: WriteState,
    /// Queries per timestamp: the number of views of the current multiview subpass, else 1.
    pub views: u32,
    /// The current render pass instance (classic), for subpass view masks.
    pub render_pass: vk::RenderPass,
    pub subpass: u32,
    /// The current dynamic render pass instance will be suspended at its end.
    pub suspending: bool,
    /// What its draws and dispatches name as their pipeline.
    pub pipelines: BoundPipelines,
    /// Labels opened in this recording and not yet closed, innermost last.
    labels: Vec<LabelRef>,
    /// The queries the recording writes and reads.
    queries: QuerySlots,
    events: Vec<RecordedEvent>,
    /// The events' arguments, one after the other (see [`RecordedEvent`]).
    args: Vec<u32>,
    /// Labels of this recording, referenced by `LabelRef`s in payloads.
    strings: Vec<u8>,
    /// Secondary command buffers executed by this one, with their position among `events`.
    children: Vec<Child>,
    /// The slot of the last timestamp written, shared by events that cannot write their own.
    last_slot: Option<u32>,
    /// False once a chunk could not be had: the trace is then left out of the output.
    complete: bool,
    recorded: Option<Arc<RecordedTrace>>,
    /// The trace of an earlier recording, given back, whose allocation the next one takes.
    spare: Option<Arc<RecordedTrace>>,
    /// Pipeline statistics around its ranges (`GPU_TRACE_COUNTERS=pipeline`; see
    /// `counted`).
    stats: Option<Box<StatsRecording>>,
    /// Hardware counters around it or its render passes (`GPU_TRACE_COUNTERS=perf:...`;
    /// see `counted_hardware`).
    hardware: Option<Box<HwRecording>>,
}

impl<const MAX_WORDS: usize> CommandTrace<MAX_WORDS> {
    pub fn new(pool: vk::CommandPool, family: u32, level: vk::CommandBufferLevel) -> Self {
        CommandTrace {
            pool,
            family,
            level,
            instrumented: false,
            fast_left: 0,
            one_time: false,
            simultaneous: false,
            recording: false,
            defer_next: false,
            pending_start: None,
            write_state: WriteState::Free,
            views: 1,
            render_pass: vk::RenderPass::null(),
            subpass: 0,
            suspending: false,
            pipelines: BoundPipelines::default(),
            labels: Vec::new(),
            queries: QuerySlots::default(),
            events: Vec::new(),
            args: Vec::new(),
            strings: Vec::new(),
            children: Vec::new(),
            last_slot: None,
            complete: true,
            recorded: None,
            spare: None,
            stats: None,
            hardware: None,
        }
    }

    /// Starts an instrumented recording; its first event (`start_cmd_buffer`) is held back
    /// until the first command that does work, or the end.
    pub fn begin_recording(&mut self, views: u32, usage: vk::CommandBufferUsageFlags) {
        self.instrumented = true;
        self.one_time = usage.contains(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        self.simultaneous = usage.contains(vk::CommandBufferUsageFlags::SIMULTANEOUS_USE);
        self.recording = true;
        self.defer_next = true;
        self.views = views.max(1);
        self.pipelines = BoundPipelines::default();
        self.refresh_fast();
    }

    fn refresh_fast(&mut self) {
        let fast = self.instrumented
            && self.complete
            && self.write_state == WriteState::Free
            && self.views == 1
            && !self.defer_next
            && self.pending_start.is_none()
            && !self.queries.noting();
        self.fast_left = if fast {
            let events = self.events.capacity() - self.events.len();
            let args = (self.args.capacity() - self.args.len()) / MAX_WORDS.max(1);
            let queries = self.queries.left_in_chunk() as usize;
            events.min(args).min(queries).min(u32::MAX as usize) as u32
        } else {
            0
        };
    }

    pub fn is_instrumented(&self) -> bool {
        self.instrumented && self.complete
    }

    /// Between `vkBeginCommandBuffer` and the recording's end (which may come before
    /// `vkEndCommandBuffer`: see `Recording::end`).
    pub fn is_recording(&self) -> bool {
        self.recording
    }

    /// Appends tracepoint `id` (its arguments as `words`, see the generated `Payload::encode`): a
    /// timestamp write into the command buffer (where one may be written) and its event.
    ///
    /// The common case (see `fast_left`, which also counts the current chunk's queries, so
    /// that one test covers both) stays inline in the tracepoint: its words are stored from
    /// registers, and the next query is taken from the current chunk. Anything else (a new
    /// chunk included) goes through [`Self::append_slow`].
    #[inline(always)]
    pub fn append<const N: usize>(
        &mut self,
        rec: &Recorder<'_>,
        id: usize,
        end_of_pipe: bool,
        words: [u32; N],
    ) {
        if self.fast_left > 0 {
            self.fast_left -= 1;
            let place = self.queries.take_one();
            rec.write_timestamp(end_of_pipe, place);
            self.last_slot = Some(place.slot);
            self.events.push(RecordedEvent {
                id: id as u16,
                slot: place.slot,
            });
            self.args.extend_from_slice(&words);
            return;
        }
        self.append_slow(rec, id, end_of_pipe, &words);
    }

    #[inline(never)]
    fn append_slow(&mut self, rec: &Recorder<'_>, id: usize, end_of_pipe: bool, words: &[u32]) {
        if !self.is_instrumented() {
            return;
        }
        if std::mem::take(&mut self.defer_next) {
            self.pending_start = Some(HeldEvent::new(id, end_of_pipe, words));
            return;
        }
        if let Some(start) = self.pending_start.take() {
            self.push(rec, start.id, start.end_of_pipe, &start.words[..start.len]);
        }
        self.push(rec, id, end_of_pipe, words);
        self.refresh_fast();
    }

    fn push(&mut self, rec: &Recorder<'_>, id: usize, end_of_pipe: bool, words: &[u32]) {
        let slot = match self.write_state {
            WriteState::SecondaryContents => return,
            WriteState::Suspended => match self.last_slot {
                Some(slot) => slot,
                None => return,
            },
            WriteState::Free => {
                let Some(place) = self.queries.take(self.views, rec.chunks) else {
                    // This recording stays untimed.
                    self.complete = false;
                    return;
                };
                rec.write_timestamp(end_of_pipe, place);
                self.queries.written(place);
                self.last_slot = Some(place.slot);
                place.slot
            }
        };
        if self.events.capacity() == 0 {
            self.events = rec.chunks.spare_events.take();
        }
        if self.args.capacity() == 0 {
            self.args = rec.chunks.spare_args.take();
        }
        self.events.push(RecordedEvent {
            id: id as u16,
            slot,
        });
        self.args.extend_from_slice(words);
    }

    /// Copies a label into the trace's storage, cut at [`MAX_LABEL`] bytes (labels are
    /// application data of any length and encoding; they are printed lossily).
    pub fn store_label(&mut self, label: impl LabelInput) -> LabelRef {
        label.store(&mut self.strings, MAX_LABEL)
    }

    /// Notes a label opened in this recording.
    pub fn push_label(&mut self, label: LabelRef) {
        self.labels.push(label);
    }

    /// The innermost label opened in this recording, now closed (an empty label when it was
    /// opened in an earlier command buffer).
    pub fn pop_label(&mut self) -> LabelRef {
        self.labels.pop().unwrap_or_default()
    }

    /// Attaches a secondary command buffer's trace at the current position.
    pub fn add_child(&mut self, trace: Arc<RecordedTrace>) {
        if self.is_instrumented() {
            self.children.push(Child {
                position: self.events.len() as u32,
                trace,
            });
        }
    }

    /// Forgets everything recorded (begin, reset, free). Chunks of the frozen trace go back
    /// to the pool once no batch holds it; chunks of an unfinished recording were never
    /// submitted and go back now. Returns whether an instrumented recording was in progress.
    #[must_use]
    pub fn reset(&mut self, pool: &ChunkPool) -> bool {
        let was_recording = std::mem::take(&mut self.recording);
        // A frozen trace no batch holds any more gives its recording back now and keeps
        // its allocation for the next one; one a batch still holds goes when the batch does.
        if let Some(mut trace) = self.recorded.take() {
            trace.forget_order();
            if let Some(t) = Arc::get_mut(&mut trace) {
                t.give_back();
                self.spare = Some(trace);
            }
        }
        // Never submitted: their queries are as they were handed out.
        self.queries.reset(pool);
        if let Some(stats) = self.stats.take() {
            let statistics = stats.statistics;
            pool.statistics.release(statistics, (*stats).into_pools());
        }
        if let Some(hw) = self.hardware.take() {
            pool.hardware.release(self.family, (*hw).into_pool());
        }
        pool.spare_events.give(std::mem::take(&mut self.events));
        pool.spare_args.give(std::mem::take(&mut self.args));
        self.strings.clear();
        self.children.clear();
        self.labels.clear();
        self.last_slot = None;
        self.complete = true;
        self.instrumented = false;
        self.one_time = false;
        self.simultaneous = false;
        self.defer_next = false;
        self.pending_start = None;
        self.write_state = WriteState::Free;
        self.views = 1;
        self.render_pass = vk::RenderPass::null();
        self.subpass = 0;
        self.suspending = false;
        self.fast_left = 0;
        was_recording
    }

    /// Inside a render pass instance (or a new subpass of it): timestamps take `views`
    /// queries, and a primary writes none where its contents are secondary command buffers.
    pub fn enter_subpass(&mut self, views: u32, secondary_contents: bool) {
        self.views = views.max(1);
        self.write_state = if secondary_contents && self.level == vk::CommandBufferLevel::PRIMARY {
            WriteState::SecondaryContents
        } else {
            WriteState::Free
        };
        self.refresh_fast();
    }

    /// Outside any render pass instance again.
    pub fn leave_render_pass(&mut self) {
        self.views = 1;
        self.write_state = WriteState::Free;
        self.render_pass = vk::RenderPass::null();
        self.subpass = 0;
        self.suspending = false;
        self.refresh_fast();
    }

    /// After a suspending `vkCmdEndRendering`: nothing may be written until the resumption.
    pub fn suspend(&mut self) {
        self.leave_render_pass();
        self.write_state = WriteState::Suspended;
        self.refresh_fast();
    }
}
