//! The device's pool of query-pool chunks (u_trace's chunk recycling): every command trace
//! takes its chunks here and gives them back when no pending batch can still read them
//! (see [`super::command_trace::RecordedTrace`]'s `Drop`). Query pools are only destroyed
//! with the device.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ash::vk;
use parking_lot::Mutex;

use super::statistics_pools::StatsPools;
use crate::gpu::interface::{Backend, CopyRange, QueryRange, RunSlot, CHUNK_SIZES};
use crate::trace::health::Health;

/// Lists of each kind kept for reuse; more than this are freed.
const SPARE_LISTS: usize = 256;

/// Emptied lists that keep their room, so that recordings in the steady state allocate
/// nothing per tracepoint.
pub struct Spares<T>(Mutex<Vec<Vec<T>>>);

impl<T> Spares<T> {
    fn new() -> Self {
        Spares(Mutex::new(Vec::new()))
    }

    pub fn take(&self) -> Vec<T> {
        self.0.lock().pop().unwrap_or_default()
    }

    pub fn give(&self, mut list: Vec<T>) {
        list.clear();
        if list.capacity() == 0 {
            return;
        }
        let mut spare = self.0.lock();
        if spare.len() < SPARE_LISTS {
            spare.push(list);
        }
    }
}

pub struct ChunkPool {
    backend: Backend,
    health: Arc<Health>,
    /// Chunks no trace holds, by size class ([`CHUNK_SIZES`]).
    free: [Mutex<Vec<vk::QueryPool>>; CHUNK_SIZES.len()],
    all: Mutex<Vec<vk::QueryPool>>,
    /// The pipeline statistics pools (`GPU_TRACE_COUNTERS=pipeline`).
    pub statistics: StatsPools,
    /// The hardware counter pools (`GPU_TRACE_COUNTERS=perf:...`).
    pub hardware: super::hardware::HwPools,
    pub spare_events: Spares<RecordedEvent>,
    pub spare_args: Spares<u32>,
    pub spare_chunks: Spares<QueryRange>,
    pub spare_copies: Spares<CopyRange>,
    /// Recorded traces alive (held by a command buffer or a pending batch): while there are
    /// none, a submission has nothing to trace and passes straight down.
    recorded_traces: AtomicUsize,
    /// Chunks are reset on the host before they are handed out (`hostQueryReset`), so a
    /// trace's first submission finds its queries ready.
    host_reset: bool,
}

/// One tracepoint as recorded: which one it is, and where its timestamp lands in the
/// trace's readback (queries are numbered across the trace's chunks in copy order). Its
/// arguments follow the previous events' in the trace's argument words
/// ([`Payload::WORDS`](crate::trace::tracepoints::Payload::WORDS) of them): eight bytes per event, plus its own arguments' room,
/// rather than the size of the largest payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordedEvent {
    pub id: u16,
    pub slot: u32,
}

impl ChunkPool {
    pub fn new(backend: Backend, health: Arc<Health>) -> ChunkPool {
        let host_reset = backend.host_reset();
        ChunkPool {
            statistics: StatsPools::new(backend.clone()),
            hardware: super::hardware::HwPools::new(backend.clone()),
            backend,
            health,
            free: Default::default(),
            all: Mutex::new(Vec::new()),
            spare_events: Spares::new(),
            spare_args: Spares::new(),
            spare_chunks: Spares::new(),
            spare_copies: Spares::new(),
            recorded_traces: AtomicUsize::new(0),
            host_reset,
        }
    }

    /// The device's backend (for the statistics queries a recording begins and ends).
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Whether the chunks handed out are reset (see [`Self::release`]).
    pub fn resets_on_host(&self) -> bool {
        self.host_reset
    }

    /// A slot for a trackable recording's runs (see `gpu::run_slots`), recorded into at the
    /// end of `cb`; `None` where the family cannot copy query results or memory is short.
    pub fn self_copy(
        &self,
        cb: vk::CommandBuffer,
        family: u32,
        copies: &[CopyRange],
    ) -> Option<RunSlot> {
        if !self.backend.family_copies_queries(family) || no_run_slots() {
            return None;
        }
        let slot = self.backend.acquire_run_slot()?;
        // SAFETY: the caller records `cb`, a primary at its end (outside any render pass);
        // `copies` are its own queries, and the family copies query results.
        unsafe { self.backend.record_self_copy(cb, copies, slot) };
        Some(slot)
    }

    pub fn release_run_slot(&self, slot: RunSlot) {
        self.backend.release_run_slot(slot);
    }

    pub fn read_run_slot(&self, slot: RunSlot, out: &mut [u64]) {
        self.backend.read_run_slot(slot, out);
    }

    /// Whether a reusable run left in the queries at its resubmission is saved by the GPU
    /// rather than read on the host (see [`Backend::query_reads_wait`]).
    pub fn saves_runs_on_gpu(&self) -> bool {
        self.backend.query_reads_wait()
    }

    /// A query pool of size class `class` ([`CHUNK_SIZES`]) that no pending work uses, with
    /// none of its queries used. With host reset its queries are reset; otherwise they may
    /// hold old results, and every batch re-arms the queries it will write before they are
    /// written.
    pub fn acquire(&self, class: usize) -> Result<QueryRange, vk::Result> {
        let size = CHUNK_SIZES[class];
        let chunk = |pool| QueryRange {
            pool,
            count: 0,
            size,
        };
        if let Some(pool) = self.free[class].lock().pop() {
            return Ok(chunk(pool));
        }
        let pool = self.backend.create_query_chunk(size).inspect_err(|&e| {
            self.health.fault("creating a timestamp query pool", e);
        })?;
        self.reset_on_host(pool, size);
        self.all.lock().push(pool);
        Ok(chunk(pool))
    }

    /// Takes back chunks that no pending work uses any more (their trace's last batch has
    /// completed, or they were never submitted). With host reset, chunks are handed out
    /// reset and every run that writes them resets them after its copy, except a run read
    /// from the queries themselves: its chunks come back `written` and the queries it used
    /// are reset here, so that the next trace finds them ready.
    pub fn release<'c>(&self, chunks: impl IntoIterator<Item = &'c QueryRange>, written: bool) {
        for chunk in chunks {
            // Reset outside the lock that recording threads take to acquire.
            if written {
                self.reset_on_host(chunk.pool, chunk.count);
            }
            let class = CHUNK_SIZES.iter().position(|&s| s == chunk.size);
            if let Some(free) = class.and_then(|c| self.free.get(c)) {
                free.lock().push(chunk.pool);
            }
        }
    }

    fn reset_on_host(&self, pool: vk::QueryPool, count: u32) {
        if self.host_reset {
            // SAFETY: `hostQueryReset` is enabled and no pending work uses the pool (see
            // `acquire` and `release`); `count` is at most its size.
            unsafe { self.backend.reset_queries(pool, count) };
        }
    }

    /// The timestamps of `copy`'s queries, written by completed work, into `out`.
    pub fn read_queries(&self, copy: &CopyRange, out: &mut [u64]) -> Result<(), vk::Result> {
        self.backend.read_queries(copy.pool, copy.first, out)
    }

    /// Resets the queries a trace took of `chunk` on the host (a reusable trace between
    /// runs, see `super::reruns`).
    ///
    /// # Safety
    /// No pending work uses them.
    pub unsafe fn reset_queries(&self, chunk: &QueryRange) {
        // The caller's promise; `chunk.count` is at most its size.
        self.reset_on_host(chunk.pool, chunk.count);
    }

    pub fn trace_recorded(&self) {
        self.recorded_traces.fetch_add(1, Ordering::Relaxed);
    }

    pub fn trace_dropped(&self) {
        self.recorded_traces.fetch_sub(1, Ordering::Relaxed);
    }

    /// Whether any recorded trace is alive. Relaxed: the `vkEndCommandBuffer` that made a
    /// trace happened before the application could submit its command buffer.
    pub fn any_recorded_trace(&self) -> bool {
        self.recorded_traces.load(Ordering::Relaxed) != 0
    }

    /// Number of query pools created so far.
    pub fn created(&self) -> usize {
        self.all.lock().len()
    }

    /// Destroys every query pool. Only when the device is idle.
    pub fn destroy_all(&self) {
        for free in &self.free {
            free.lock().clear();
        }
        for pool in self.all.lock().drain(..) {
            self.backend.destroy_query_chunk(pool);
        }
        self.statistics.destroy_all();
        self.hardware.destroy_all();
        self.backend.destroy_run_slots();
    }
}

/// Debug builds only: with `UTRACE_DEBUG_NO_RUN_SLOTS=1` no recording gets a run slot, as
/// where its family cannot copy query results or memory is short, so that the tests reach
/// the paths such traces take (saves on Lavapipe, reads of the queries).
fn no_run_slots() -> bool {
    #[cfg(debug_assertions)]
    {
        static NONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *NONE
            .get_or_init(|| std::env::var_os("UTRACE_DEBUG_NO_RUN_SLOTS").is_some_and(|v| v == "1"))
    }
    #[cfg(not(debug_assertions))]
    {
        false
    }
}
