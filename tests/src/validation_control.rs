//! The positive control of every "validation stays silent" check: a scenario that makes one
//! deliberate, known validation error with the layer loaded. A test asserts that the
//! harness reports exactly that message; without it, silence elsewhere could mean that
//! validation was never listening.
//!
//! The error is a dispatch recorded with no compute pipeline bound. It goes through one of
//! utrace's hooks (`vkCmdDispatch`, which writes timestamps around it when tracing), so the
//! control also shows that what validation says about a call utrace intercepted reaches
//! the application. The command buffer is freed without being submitted: the driver never
//! executes the invalid dispatch.

use ash::vk;

use crate::submitter::Submitter;
use crate::vk::{Device, Result};

/// The scenario's name (`utrace-workload --scenario validation-error`).
pub const SCENARIO: &str = "validation-error";

/// What validation says about the dispatch: its VUID (no compute pipeline bound at
/// `vkCmdDispatch`).
pub const EXPECTED_VUID: &str = "VUID-vkCmdDispatch-None-02700";

/// Records the invalid dispatch, then does one valid submission so that the run is traced
/// like any other.
pub fn run(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let cbs = dev.command_buffers(2)?;
    dev.begin(cbs[0], vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    // SAFETY: a recording command buffer; the missing pipeline is the deliberate error,
    // and this command buffer is never submitted.
    unsafe { dev.device.cmd_dispatch(cbs[0], 1, 1, 1) };
    dev.end(cbs[0])?;
    dev.begin(cbs[1], vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)?;
    dev.end(cbs[1])?;
    sub.submit("valid", &cbs[1..], None)?;
    // SAFETY: the only submission has completed (`submit` waits for its fence); the invalid
    // command buffer was never submitted.
    unsafe { dev.device.free_command_buffers(dev.pool, &cbs) };
    Ok(true)
}
