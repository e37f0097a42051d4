//! Hardware counters beside a command buffer's ranges (`GPU_TRACE_COUNTERS=perf:NAME,...`,
//! VK_KHR_performance_query): the queries a recording takes ([`HwRecording`]), what its
//! frozen trace keeps (`record::recorded_hw`), and the device's pools ([`HwPools`]).
//!
//! One performance query may be active in a command buffer at a time, and one of a counter
//! of command-buffer scope must be the command buffer's first command and its last: such a
//! set is counted per command buffer. A set without one is counted per render pass
//! instance, each query begun before the pass begins and ended after it ends (a query of
//! render-pass scope may not begin or end inside one). Primaries are counted, one-time and
//! reusable ones, not those for simultaneous use (their runs may overlap): a query is reset
//! on the host, never by the command buffer that begins it, so a reusable recording's
//! queries are read and reset on the host between its runs (`record::hardware_runs`). A
//! recording takes one pool (two pools in one command buffer need
//! `performanceCounterMultipleQueryPools`); ranges past its queries go without.

use ash::vk;
use parking_lot::Mutex;

use super::counter_values::HardwareSet;
use super::recorded_hw::{RecordedHw, UNMEASURED};
use crate::gpu::interface::Backend;
use crate::gpu::perf_queries::PERF_POOL_QUERIES;

/// The hardware counter queries of one recording in progress.
pub struct HwRecording {
    pool: vk::QueryPool,
    used: u32,
    /// The query active in the command buffer.
    active: Option<u32>,
    /// Ranges counted: (end event, query; [`UNMEASURED`] for a range the pool had no
    /// query left for).
    ranges: Vec<(u32, u32)>,
    /// A query spans the whole command buffer (else each render pass).
    whole: bool,
    /// The range being recorded found the pool used up.
    skipped: bool,
}

impl HwRecording {
    /// A recording's counters, its pool taken from `pools` (`None` when none could be had).
    pub fn new(pools: &HwPools, family: u32, whole: bool) -> Option<HwRecording> {
        Some(HwRecording {
            pool: pools.acquire(family)?,
            used: 0,
            active: None,
            ranges: Vec::new(),
            whole,
            skipped: false,
        })
    }

    /// Whether a query spans the whole command buffer (else each render pass).
    pub fn whole(&self) -> bool {
        self.whole
    }

    /// The next query, to begin now: its pool and index; `None` when one is active or the
    /// pool has no more.
    pub fn begin(&mut self) -> Option<(vk::QueryPool, u32)> {
        if self.active.is_some() {
            return None;
        }
        if self.used == PERF_POOL_QUERIES {
            self.skipped = true;
            pool_used_up_said_once();
            return None;
        }
        let query = self.used;
        self.used += 1;
        self.active = Some(query);
        Some((self.pool, query))
    }

    /// The active query, to end now (`None` when none is).
    pub fn end(&mut self) -> Option<(vk::QueryPool, u32)> {
        self.active.map(|q| (self.pool, q))
    }

    /// The active query was ended: its values go to the range whose end event is `event`
    /// (`None`: not recorded, the values go nowhere).
    pub fn ended(&mut self, event: Option<u32>) {
        if let (Some(query), Some(event)) = (self.active.take(), event) {
            self.ranges.push((event, query));
        }
    }

    /// A range ended that had no query: where the pool was used up, it says so (its end
    /// event `event`, if recorded).
    pub fn ended_without(&mut self, event: Option<u32>) {
        if let (true, Some(event)) = (std::mem::take(&mut self.skipped), event) {
            self.ranges.push((event, UNMEASURED));
        }
    }

    /// The recording's end: what the frozen trace keeps (`reusable`: its queries are read
    /// and reset between runs, see `record::hardware_runs`).
    pub fn freeze(self, family: u32, set: &'static HardwareSet, reusable: bool) -> RecordedHw {
        RecordedHw::new(family, (self.pool, self.used), self.ranges, set, reusable)
    }

    /// The pool of a recording that was never frozen (reset, or freed), for
    /// [`HwPools::release`].
    pub fn into_pool(self) -> vk::QueryPool {
        self.pool
    }
}

/// Says, once per process, that a recording's pool of hardware counter queries was used up.
fn pool_used_up_said_once() {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        log::warn!("a command buffer has more render pass instances than its hardware counter pool has queries ({PERF_POOL_QUERIES}): the later ones get no hardware counters and say partial=1");
    }
}

/// Says, once per process, that a command buffer for simultaneous use gets no hardware
/// counters.
pub fn simultaneous_said_once() {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        log::warn!("a command buffer recorded for SIMULTANEOUS_USE gets no hardware counters: its runs may overlap, and each would need the queries to itself (read and reset on the host between runs)");
    }
}

/// A device's hardware counter pools: those no trace holds (reset), by queue family, and
/// every one made (destroyed with the device); and the set outputs name.
#[derive(Default)]
pub struct HwPools {
    free: Mutex<Vec<(u32, vk::QueryPool)>>,
    all: Mutex<Vec<vk::QueryPool>>,
    backend: Option<Backend>,
    set: Option<&'static HardwareSet>,
}

impl HwPools {
    pub fn new(backend: Backend) -> HwPools {
        let set = backend
            .hardware()
            .map(|h| HardwareSet::interned(&h.keys, &h.storage, &h.units));
        HwPools {
            backend: Some(backend),
            set,
            ..Default::default()
        }
    }

    /// The counters' names and storage, where the device collects them.
    pub fn set(&self) -> Option<&'static HardwareSet> {
        self.set
    }

    /// A reset pool of `family`'s counters.
    pub fn acquire(&self, family: u32) -> Option<vk::QueryPool> {
        {
            let mut free = self.free.lock();
            if let Some(i) = free.iter().position(|(f, _)| *f == family) {
                return Some(free.swap_remove(i).1);
            }
        }
        match self.backend.as_ref()?.create_perf_pool(family) {
            Ok(pool) => {
                self.all.lock().push(pool);
                Some(pool)
            }
            Err(e) => {
                made_failed_once(e);
                None
            }
        }
    }

    /// Takes back a pool no pending work uses, resetting it on the host.
    pub fn release(&self, family: u32, pool: vk::QueryPool) {
        let Some(backend) = self.backend.as_ref() else {
            return;
        };
        // SAFETY: host reset is on wherever hardware counters are (`Backend::new`), and no
        // pending work uses the pool (the caller's promise).
        unsafe { backend.reset_queries(pool, PERF_POOL_QUERIES) };
        self.free.lock().push((family, pool));
    }

    /// Destroys every pool (device teardown, no work pending).
    pub fn destroy_all(&self) {
        self.free.lock().clear();
        if let Some(backend) = self.backend.as_ref() {
            for pool in self.all.lock().drain(..) {
                backend.destroy_query_chunk(pool);
            }
        }
    }
}

/// Says, once per process, that a hardware counter pool could not be made.
fn made_failed_once(e: vk::Result) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        log::warn!("a hardware counter query pool could not be made ({e}): command buffers go without counters");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording(whole: bool) -> HwRecording {
        HwRecording {
            pool: vk::QueryPool::null(),
            used: 0,
            active: None,
            ranges: Vec::new(),
            whole,
            skipped: false,
        }
    }

    #[test]
    fn each_range_gets_its_own_query_and_one_at_a_time() {
        let mut r = recording(false);
        assert_eq!(r.begin().map(|q| q.1), Some(0));
        assert_eq!(r.begin(), None, "one active at a time");
        r.ended(Some(4));
        assert_eq!(r.begin().map(|q| q.1), Some(1));
        r.ended(None);
        assert_eq!(r.begin().map(|q| q.1), Some(2));
        r.ended(Some(9));
        assert_eq!(r.ranges, [(4, 0), (9, 2)], "a range not recorded gets none");
        r.used = PERF_POOL_QUERIES;
        assert_eq!(r.begin(), None, "no more than the pool holds");
        r.ended_without(Some(12));
        assert_eq!(r.ranges[2], (12, UNMEASURED), "a range past them says so");
        r.ended_without(Some(13));
        assert_eq!(
            r.ranges.len(),
            3,
            "only a range that found the pool used up"
        );
    }

    #[test]
    fn a_ranges_values_are_its_querys_in_the_order_of_the_keys() {
        let set = HardwareSet::interned(
            &["perf_draws".into(), "perf_gpu_busy".into()],
            &[
                vk::PerformanceCounterStorageKHR::UINT64,
                vk::PerformanceCounterStorageKHR::FLOAT64,
            ],
            &[
                vk::PerformanceCounterUnitKHR::GENERIC,
                vk::PerformanceCounterUnitKHR::PERCENTAGE,
            ],
        );
        let mut r = recording(true);
        r.begin();
        r.ended(Some(3));
        r.begin();
        r.ended(Some(7));
        let frozen = r.freeze(0, set, false);
        let raw = [2, 100f64.to_bits(), 5, 12.5f64.to_bits()];
        let c = frozen.counters(&raw, 1);
        let shown: Vec<String> = c
            .shown()
            .map(|(k, v)| {
                let mut s = format!("{k}=");
                v.push(&mut s);
                s
            })
            .collect();
        assert_eq!(shown, ["perf_draws=5", "perf_gpu_busy=12.5"]);
        assert_eq!(frozen.range_events().collect::<Vec<_>>(), [3, 7]);
    }
}
