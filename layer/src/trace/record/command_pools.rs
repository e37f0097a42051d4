//! The application's command pools and the command buffers allocated from them: each
//! command buffer's trace is made at allocation and forgotten at reset and free.

use std::collections::HashSet;

use ash::vk;
use ash::vk::Handle;

use crate::trace::tracepoints::CommandTrace;
use crate::trace::DeviceTracer;

/// A command pool of the application: its queue family and its command buffers.
pub struct PoolRecord {
    pub family: u32,
    pub cmdbufs: HashSet<u64>,
}

impl DeviceTracer {
    pub fn pool_created(&self, pool: vk::CommandPool, family: u32) {
        self.pools.lock().insert(
            pool.as_raw(),
            PoolRecord {
                family,
                cmdbufs: HashSet::new(),
            },
        );
    }

    /// After `vkResetCommandPool`: the application synchronises the pool and all of its
    /// command buffers.
    pub fn pool_reset(&self, pool: vk::CommandPool) {
        let pools = self.pools.lock();
        let Some(record) = pools.get(&pool.as_raw()) else {
            return;
        };
        // SAFETY: a pool reset is externally synchronised with every use of its buffers.
        unsafe {
            self.cmdbufs
                .for_each(record.cmdbufs.iter().copied(), |t| self.reset_trace(t))
        };
    }

    pub fn pool_destroyed(&self, pool: vk::CommandPool) {
        let Some(record) = self.pools.lock().remove(&pool.as_raw()) else {
            return;
        };
        for cb in record.cmdbufs {
            if let Some(mut trace) = self.cmdbufs.remove(cb) {
                self.reset_trace(&mut trace);
            }
        }
    }

    pub fn allocated(
        &self,
        pool: vk::CommandPool,
        level: vk::CommandBufferLevel,
        cbs: &[vk::CommandBuffer],
    ) {
        let mut pools = self.pools.lock();
        let Some(record) = pools.get_mut(&pool.as_raw()) else {
            return;
        };
        for &cb in cbs {
            record.cmdbufs.insert(cb.as_raw());
            self.cmdbufs
                .insert(cb, CommandTrace::new(pool, record.family, level));
        }
    }

    pub fn freed(&self, pool: vk::CommandPool, cbs: &[vk::CommandBuffer]) {
        let mut pools = self.pools.lock();
        let mut record = pools.get_mut(&pool.as_raw());
        for cb in cbs {
            if let Some(record) = record.as_deref_mut() {
                record.cmdbufs.remove(&cb.as_raw());
            }
            if let Some(mut trace) = self.cmdbufs.remove(cb.as_raw()) {
                self.reset_trace(&mut trace);
            }
        }
    }

    /// Forgets a trace's recording, keeping the count of recordings in progress.
    pub(super) fn reset_trace(&self, trace: &mut CommandTrace) {
        if trace.reset(&self.chunks) {
            self.cmdbufs.recording_ended();
        }
    }
}
