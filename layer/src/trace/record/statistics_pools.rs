//! A device's pipeline statistics query pools (`GPU_TRACE_COUNTERS=pipeline`): made on
//! demand, handed to recordings, taken back reset when their trace goes, destroyed with
//! the device.

use ash::vk;
use parking_lot::Mutex;

use crate::gpu::interface::Backend;
use crate::gpu::statistics_queries::POOL_QUERIES;

/// A device's statistics pools: those no trace holds (reset), by their statistics, and
/// every one made (destroyed with the device).
#[derive(Default)]
pub struct StatsPools {
    free: Mutex<Vec<(vk::QueryPipelineStatisticFlags, vk::QueryPool)>>,
    all: Mutex<Vec<vk::QueryPool>>,
    backend: Option<Backend>,
}

impl StatsPools {
    pub fn new(backend: Backend) -> StatsPools {
        StatsPools {
            backend: Some(backend),
            ..Default::default()
        }
    }

    /// A reset pool of `statistics`.
    pub fn acquire(&self, statistics: vk::QueryPipelineStatisticFlags) -> Option<vk::QueryPool> {
        {
            let mut free = self.free.lock();
            if let Some(i) = free.iter().position(|(s, _)| *s == statistics) {
                return Some(free.swap_remove(i).1);
            }
        }
        let backend = self.backend.as_ref()?;
        match backend.create_statistics_pool(statistics) {
            Ok(pool) => {
                self.all.lock().push(pool);
                Some(pool)
            }
            Err(e) => {
                log::warn!("a pipeline statistics query pool could not be made ({e}); ranges go without counters");
                None
            }
        }
    }

    /// Takes back pools no pending work uses, resetting them on the host.
    pub fn release(&self, statistics: vk::QueryPipelineStatisticFlags, pools: Vec<vk::QueryPool>) {
        let Some(backend) = self.backend.as_ref() else {
            return;
        };
        let mut free = self.free.lock();
        for pool in pools {
            // SAFETY: host reset is on wherever statistics are made (`statistics_for`), and
            // no pending work uses the pool (the caller's promise).
            unsafe { backend.reset_queries(pool, POOL_QUERIES) };
            free.push((statistics, pool));
        }
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
