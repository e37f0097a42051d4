//! Submission patterns real applications use, which the layer must time right: a reusable
//! command buffer resubmitted for many frames, a simultaneous-use one pending twice, pools
//! reset, trimmed and destroyed right after the fence wait, recording on eight threads,
//! submissions without command buffers or with the application's own timeline semaphores,
//! work queued behind a wait the host signals later, the application's idle waits, a fork
//! with a live device, a multiview render pass, bursts of submissions without a fence, a
//! resubmitted command buffer re-recorded between submissions, and one resubmitted while
//! long work is in flight.

use ash::vk;

use crate::submitter::Submitter;
use crate::vk::{check, Buffer, Device, Result};

mod allocations;
mod busy_resubmission;
mod compute_queue;
mod fallback;
mod fork;
mod host_signal;
mod idle_waits;
mod layer_debug;
mod lifetime;
pub mod many_commands;
mod passes;
mod proc_addrs;
pub mod rerecord;
mod resubmission;
mod shuffled;
mod submits;
mod transfer_queue;
mod unsignalled;

pub const SCENARIOS: &[&str] = &[
    "resubmit",
    "simultaneous",
    "reset-after-wait",
    "threads",
    "odd-submits",
    "multiview",
    "secondary-reuse",
    "soak",
    "twice-in-one-submit",
    "in-flight",
    "wait-before-signal",
    "idle-waits",
    "fork",
    "many-commands",
    "many-draws",
    "allocations",
    "proc-addrs",
    "unsignalled",
    "unsignalled-at-exit",
    "transfer-queue",
    "compute-queue",
    "rerecord",
    "resubmit-busy",
    "resubmit-busy-many",
    "fallback",
    "shuffled-resubmits",
];

pub fn is_scenario(name: &str) -> bool {
    SCENARIOS.contains(&name)
}

/// Runs scenario `name`; `frames` (`--frames`) is how many rounds the repeating ones make,
/// `draws` (`--draws`) the size of `many-draws`.
pub fn run(
    name: &str,
    dev: &Device,
    sub: &mut Submitter,
    (frames, draws): (u32, u32),
) -> Result<bool> {
    match name {
        "resubmit" => resubmission::resubmit(dev, sub, frames),
        "simultaneous" => resubmission::simultaneous(dev, sub),
        "reset-after-wait" => lifetime::reset_after_wait(dev, sub),
        "threads" => lifetime::threads(dev, sub),
        "odd-submits" => submits::odd_submits(dev, sub),
        "multiview" => passes::multiview(dev, sub),
        "secondary-reuse" => passes::secondary_reuse(dev, sub),
        "soak" => resubmission::soak(dev, sub, frames),
        "twice-in-one-submit" => resubmission::twice_in_one_submit(dev, sub),
        "in-flight" => resubmission::in_flight(dev, sub, frames),
        "wait-before-signal" => host_signal::wait_before_signal(dev, sub),
        "idle-waits" => idle_waits::idle_waits(dev, sub),
        "fork" => fork::fork_child(dev, sub),
        "many-commands" => many_commands::many_commands(dev, sub),
        "many-draws" => many_commands::many_draws(dev, sub, draws),
        "allocations" => allocations::allocations(dev),
        "proc-addrs" => proc_addrs::proc_addrs(dev),
        "unsignalled" => unsignalled::unsignalled(dev, sub),
        "unsignalled-at-exit" => unsignalled::unsignalled_at_exit(dev, sub),
        "transfer-queue" => transfer_queue::transfer_queue(dev, sub),
        "compute-queue" => compute_queue::compute_queue(dev, sub),
        "rerecord" => rerecord::rerecord(dev, sub, frames),
        "resubmit-busy" => busy_resubmission::resubmit_busy(dev, sub, frames, 1),
        "resubmit-busy-many" => busy_resubmission::resubmit_busy(dev, sub, frames, 6),
        "fallback" => fallback::fallback(dev, sub),
        "shuffled-resubmits" => shuffled::shuffled(dev, sub, frames),
        other => Err(format!("unknown scenario {other:?}")),
    }
}

/// A small transfer: fill the first 4 KiB of `buffer` with `value`, then update a word.
pub(super) fn record_transfer(dev: &Device, cb: vk::CommandBuffer, buffer: &Buffer, value: u32) {
    // SAFETY: `cb` is recording; the buffer has TRANSFER_DST and is at least 4 KiB.
    unsafe {
        dev.device
            .cmd_fill_buffer(cb, buffer.buffer, 0, 4096, value);
    }
    transfer_barrier(dev, cb);
    // SAFETY: as above.
    unsafe {
        dev.device
            .cmd_update_buffer(cb, buffer.buffer, 0, &value.to_ne_bytes());
    }
}

/// Orders the transfer writes recorded after it behind those before it (in this command
/// buffer, or in earlier submissions).
pub(super) fn transfer_barrier(dev: &Device, cb: vk::CommandBuffer) {
    let barrier = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
    // SAFETY: `cb` is recording.
    unsafe {
        dev.device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[barrier],
            &[],
            &[],
        );
    }
}

/// One primary command buffer of `pool`.
pub(super) fn one_of(dev: &Device, pool: vk::CommandPool) -> Result<vk::CommandBuffer> {
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .command_buffer_count(1);
    // SAFETY: a live pool of this device.
    check(
        unsafe { dev.device.allocate_command_buffers(&info) },
        "vkAllocateCommandBuffers",
    )
    .map(|v| v[0])
}

/// A command pool of `family`, whose command buffers are not reset one by one.
pub(super) fn pool_of(dev: &Device, family: u32) -> Result<vk::CommandPool> {
    let info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
    // SAFETY: valid create info for a family the device has a queue of.
    check(
        unsafe { dev.device.create_command_pool(&info, None) },
        "vkCreateCommandPool",
    )
}

pub(super) fn pool(dev: &Device) -> Result<vk::CommandPool> {
    let info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(dev.family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: valid create info.
    check(
        unsafe { dev.device.create_command_pool(&info, None) },
        "vkCreateCommandPool",
    )
}

pub(super) fn allocate(
    dev: &Device,
    pool: vk::CommandPool,
    count: u32,
) -> Result<Vec<vk::CommandBuffer>> {
    let info = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(count);
    // SAFETY: valid allocate info.
    check(
        unsafe { dev.device.allocate_command_buffers(&info) },
        "vkAllocateCommandBuffers",
    )
}

pub(super) fn first_word(buffer: &Buffer) -> u32 {
    buffer.words()[0]
}
