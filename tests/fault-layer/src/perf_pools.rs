//! `UTRACE_PERF_QUERY=1`, the device's side: performance query pools (VK_KHR_performance_
//! query) kept by this layer, never the driver's. A query counts what the command buffer
//! records between its begin and end (draws, vertices, workgroups; "GPU busy" is 100, "L2
//! misses" twice the vertices), and its values become available when the command buffer
//! is submitted. The rules a tool beside the application must keep are checked and any
//! breach said on stderr (`utrace-perf: VUID-...`): a query of a pool with a counter of
//! command-buffer scope must be the command buffer's first command at its begin and its
//! last at its end (commands counted: those this layer hooks, which include every command
//! utrace records).

use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;

use ash::vk;
use ash::vk::Handle;
use parking_lot::Mutex;

use crate::loader::next_device_fn;

/// What a query counted.
#[derive(Clone, Copy, Default)]
pub(crate) struct Counted {
    pub(crate) draws: u64,
    pub(crate) vertices: u64,
    pub(crate) workgroups: u64,
}

impl Counted {
    pub(crate) fn add(&mut self, other: &Counted) {
        self.draws += other.draws;
        self.vertices += other.vertices;
        self.workgroups += other.workgroups;
    }

    /// The value of counter `index` (see `perf_query`'s list) as the 8 bytes of a
    /// `VkPerformanceCounterResultKHR`.
    pub(crate) fn value(&self, index: u32) -> u64 {
        match index {
            0 => self.draws,
            1 => self.vertices,
            2 => self.workgroups,
            3 => 100f64.to_bits(),
            _ => 2 * self.vertices,
        }
    }
}

pub(crate) struct Pool {
    pub(crate) counters: Vec<u32>,
    pub(crate) results: Vec<Option<Counted>>,
}

/// Per command buffer: commands recorded so far, the query open in it, and the queries it
/// ended (written when it is submitted).
#[derive(Default)]
pub(crate) struct Recording {
    commands: u32,
    /// All it counted, in a query or not: what a primary that executes it (a secondary)
    /// counts in its own open query.
    pub(crate) total: Counted,
    open: Option<(u64, u32, Counted, bool)>,
    pub(crate) ended: Vec<(u64, u32, Counted)>,
    /// A command-buffer-scope query ended at this command count.
    scope_end: Option<u32>,
}

pub(crate) static POOLS: LazyLock<Mutex<HashMap<u64, Pool>>> = LazyLock::new(Default::default);
pub(crate) static RECORDINGS: LazyLock<Mutex<HashMap<u64, Recording>>> =
    LazyLock::new(Default::default);
static NEXT: AtomicU64 = AtomicU64::new(0x5e7f_0000_0000_0001);

/// The counters of command-buffer scope (`perf_query`'s list: "Workgroups", "GPU busy",
/// "L2 misses").
fn command_buffer_scope(counters: &[u32]) -> bool {
    counters.iter().any(|&c| c >= 2)
}

pub(crate) fn breach(vuid: &str, what: &str) {
    eprintln!("utrace-perf: {vuid}: {what}");
}

/// A command of `cb` recorded (any this layer hooks).
pub(crate) fn command(cb: vk::CommandBuffer, count: impl FnOnce(&mut Counted)) {
    let mut recordings = RECORDINGS.lock();
    let r = recordings.entry(cb.as_raw()).or_default();
    r.commands += 1;
    let mut this = Counted::default();
    count(&mut this);
    r.total.add(&this);
    if let Some((_, _, counted, _)) = r.open.as_mut() {
        counted.add(&this);
    }
}

/// Calls what answers `$name` beneath the emulation: this layer's other hooks (the fault
/// plan, the shape), else the next layer's function (resolved at device creation).
macro_rules! chain {
    ($handle:expr, $name:literal, $pfn:ty, ($($arg:expr),*), $fail:expr) => {{
        let f = crate::hooks::lookup($name)
            // SAFETY: a live object of a device of this chain.
            .or_else(|| unsafe { next_device_fn($handle, $name) });
        match f {
            // SAFETY: the pointer is a function of this signature; the arguments are the
            // caller's.
            Some(f) => unsafe { std::mem::transmute::<unsafe extern "system" fn(), $pfn>(f)($($arg),*) },
            None => $fail,
        }
    }};
}

pub(crate) use chain;

/// Calls the next layer's `$name` (resolved at device creation) for `$handle`.
macro_rules! down {
    ($handle:expr, $name:literal, $pfn:ty, ($($arg:expr),*), $fail:expr) => {{
        // SAFETY: a live object of a device of this chain; the pointer is the next layer's
        // function of this signature; the arguments are the caller's.
        unsafe {
            match next_device_fn($handle, $name) {
                Some(f) => std::mem::transmute::<unsafe extern "system" fn(), $pfn>(f)($($arg),*),
                None => $fail,
            }
        }
    }};
}

pub(crate) use down;

unsafe extern "system" fn create_query_pool(
    device: vk::Device,
    info: *const vk::QueryPoolCreateInfo<'_>,
    alloc: *const vk::AllocationCallbacks<'_>,
    out: *mut vk::QueryPool,
) -> vk::Result {
    // SAFETY: the caller's valid info and chain.
    let (kind, count, perf) = unsafe {
        let info = &*info;
        let mut next = info.p_next.cast::<vk::BaseInStructure>();
        let mut perf = None;
        while !next.is_null() {
            if (*next).s_type == vk::StructureType::QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR {
                let p = &*next.cast::<vk::QueryPoolPerformanceCreateInfoKHR>();
                perf = Some(
                    std::slice::from_raw_parts(p.p_counter_indices, p.counter_index_count as usize)
                        .to_vec(),
                );
            }
            next = (*next).p_next;
        }
        (info.query_type, info.query_count, perf)
    };
    if kind != vk::QueryType::PERFORMANCE_QUERY_KHR {
        return chain!(
            device,
            c"vkCreateQueryPool",
            vk::PFN_vkCreateQueryPool,
            (device, info, alloc, out),
            vk::Result::ERROR_DEVICE_LOST
        );
    }
    let handle = NEXT.fetch_add(1, Ordering::Relaxed);
    let pool = Pool {
        counters: perf.unwrap_or_default(),
        results: vec![None; count as usize],
    };
    POOLS.lock().insert(handle, pool);
    // SAFETY: the caller's output.
    unsafe { *out = vk::QueryPool::from_raw(handle) };
    vk::Result::SUCCESS
}

unsafe extern "system" fn destroy_query_pool(
    device: vk::Device,
    pool: vk::QueryPool,
    alloc: *const vk::AllocationCallbacks<'_>,
) {
    if POOLS.lock().remove(&pool.as_raw()).is_none() {
        chain!(
            device,
            c"vkDestroyQueryPool",
            vk::PFN_vkDestroyQueryPool,
            (device, pool, alloc),
            ()
        )
    }
}

unsafe extern "system" fn reset_query_pool(
    device: vk::Device,
    pool: vk::QueryPool,
    first: u32,
    count: u32,
) {
    if let Some(p) = POOLS.lock().get_mut(&pool.as_raw()) {
        for r in p
            .results
            .iter_mut()
            .skip(first as usize)
            .take(count as usize)
        {
            *r = None;
        }
        return;
    }
    down!(
        device,
        c"vkResetQueryPool",
        vk::PFN_vkResetQueryPool,
        (device, pool, first, count),
        ()
    )
}

unsafe extern "system" fn cmd_begin_query(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    query: u32,
    flags: vk::QueryControlFlags,
) {
    let scope = POOLS
        .lock()
        .get(&pool.as_raw())
        .map(|p| command_buffer_scope(&p.counters));
    let Some(scope) = scope else {
        command(cb, |_| {});
        return down!(
            cb,
            c"vkCmdBeginQuery",
            vk::PFN_vkCmdBeginQuery,
            (cb, pool, query, flags),
            ()
        );
    };
    let mut recordings = RECORDINGS.lock();
    let r = recordings.entry(cb.as_raw()).or_default();
    if scope && r.commands > 0 {
        breach(
            "VUID-vkCmdBeginQuery-queryPool-03224",
            &format!(
                "a performance query of command-buffer scope begun after {} commands",
                r.commands
            ),
        );
    }
    r.commands += 1;
    r.open = Some((pool.as_raw(), query, Counted::default(), scope));
}

unsafe extern "system" fn cmd_end_query(cb: vk::CommandBuffer, pool: vk::QueryPool, query: u32) {
    if !POOLS.lock().contains_key(&pool.as_raw()) {
        command(cb, |_| {});
        return down!(
            cb,
            c"vkCmdEndQuery",
            vk::PFN_vkCmdEndQuery,
            (cb, pool, query),
            ()
        );
    }
    let mut recordings = RECORDINGS.lock();
    let r = recordings.entry(cb.as_raw()).or_default();
    r.commands += 1;
    if let Some((p, q, counted, scope)) = r.open.take() {
        r.ended.push((p, q, counted));
        if scope {
            r.scope_end = Some(r.commands);
        }
    }
}

unsafe extern "system" fn begin_command_buffer(
    cb: vk::CommandBuffer,
    info: *const vk::CommandBufferBeginInfo<'_>,
) -> vk::Result {
    RECORDINGS.lock().insert(cb.as_raw(), Recording::default());
    chain!(
        cb,
        c"vkBeginCommandBuffer",
        vk::PFN_vkBeginCommandBuffer,
        (cb, info),
        vk::Result::ERROR_DEVICE_LOST
    )
}

unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    if let Some(r) = RECORDINGS.lock().get(&cb.as_raw()) {
        if let Some(at) = r.scope_end.filter(|&at| at < r.commands) {
            breach(
                "VUID-vkCmdEndQuery-queryPool-03227",
                &format!(
                    "a performance query of command-buffer scope ended at command {at} of {}",
                    r.commands
                ),
            );
        }
    }
    chain!(
        cb,
        c"vkEndCommandBuffer",
        vk::PFN_vkEndCommandBuffer,
        (cb),
        vk::Result::ERROR_DEVICE_LOST
    )
}

/// The commands the emulation resolves down at device creation.
pub const COMMANDS: &[&CStr] = &[
    c"vkResetQueryPool",
    c"vkCmdBeginQuery",
    c"vkCmdEndQuery",
    c"vkCmdDraw",
    c"vkCmdDrawIndexed",
    c"vkCmdDispatch",
    c"vkCmdWriteTimestamp",
    c"vkCmdWriteTimestamp2",
    c"vkCmdBeginRenderPass",
    c"vkCmdEndRenderPass",
    c"vkCmdResetQueryPool",
    c"vkCmdExecuteCommands",
];

/// The emulation's hook for device command `name`.
pub fn lookup(name: &CStr) -> vk::PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkCreateQueryPool" => hook!(create_query_pool),
        b"vkDestroyQueryPool" => hook!(destroy_query_pool),
        b"vkResetQueryPool" | b"vkResetQueryPoolEXT" => hook!(reset_query_pool),
        b"vkGetQueryPoolResults" => hook!(crate::perf_results::get_query_pool_results),
        b"vkCmdBeginQuery" => hook!(cmd_begin_query),
        b"vkCmdEndQuery" => hook!(cmd_end_query),
        b"vkBeginCommandBuffer" => hook!(begin_command_buffer),
        b"vkEndCommandBuffer" => hook!(end_command_buffer),
        b"vkQueueSubmit" => hook!(crate::perf_results::queue_submit),
        b"vkQueueSubmit2" | b"vkQueueSubmit2KHR" => hook!(crate::perf_results::queue_submit2),
        b"vkCmdDraw" => hook!(crate::perf_commands::cmd_draw),
        b"vkCmdDrawIndexed" => hook!(crate::perf_commands::cmd_draw_indexed),
        b"vkCmdDispatch" => hook!(crate::perf_commands::cmd_dispatch),
        b"vkCmdWriteTimestamp" => hook!(crate::perf_commands::cmd_write_timestamp),
        b"vkCmdWriteTimestamp2" | b"vkCmdWriteTimestamp2KHR" => {
            hook!(crate::perf_commands::cmd_write_timestamp2)
        }
        b"vkCmdBeginRenderPass" => hook!(crate::perf_commands::cmd_begin_render_pass),
        b"vkCmdEndRenderPass" => hook!(crate::perf_commands::cmd_end_render_pass),
        b"vkCmdResetQueryPool" => hook!(crate::perf_commands::cmd_reset_query_pool),
        b"vkCmdExecuteCommands" => hook!(crate::perf_commands::cmd_execute_commands),
        _ => None,
    }
}
