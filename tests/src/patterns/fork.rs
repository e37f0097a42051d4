//! `fork()` with a live, traced device: the child exits at once through `exit()`, which
//! runs the exit handlers (the layer's among them), while the parent goes on working.
//! The child must exit promptly and leave the parent's trace alone.

use std::time::{Duration, Instant};

use ash::vk;

use super::record_transfer;
use crate::submitter::Submitter;
use crate::vk::{Buffer, Device, Result};

/// How long the parent waits for the child before giving up on it (and failing).
const CHILD_LIMIT: Duration = Duration::from_secs(10);

pub(super) fn fork_child(dev: &Device, sub: &mut Submitter) -> Result<bool> {
    let buffer = Buffer::new(dev, 4096, vk::BufferUsageFlags::TRANSFER_DST)?;
    let cb = dev.command_buffers(1)?[0];
    dev.begin(cb, vk::CommandBufferUsageFlags::empty())?;
    record_transfer(dev, cb, &buffer, 3);
    dev.end(cb)?;
    sub.submit("before-fork", &[cb], None)?;
    // SAFETY: the child calls only `exit`; the parent carries on as before.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(format!("fork failed: {}", std::io::Error::last_os_error()));
    }
    if child == 0 {
        // SAFETY: ends the child through the C library's exit path (atexit handlers run).
        unsafe { libc::exit(0) };
    }
    let started = Instant::now();
    let mut status = 0;
    let exited = loop {
        // SAFETY: waits for our own child without blocking.
        let r = unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) };
        if r == child {
            break true;
        }
        if started.elapsed() > CHILD_LIMIT {
            // SAFETY: our own child, not yet reaped.
            unsafe {
                libc::kill(child, libc::SIGKILL);
                libc::waitpid(child, &mut status, 0);
            }
            break false;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // The parent's work and trace go on after the child is gone.
    sub.submit("after-fork", &[cb], None)?;
    // SAFETY: all work completed.
    unsafe { dev.device.free_command_buffers(dev.pool, &[cb]) };
    buffer.destroy(dev);
    if !exited {
        eprintln!("utrace-workload: the forked child had not exited after {CHILD_LIMIT:?}");
        return Ok(false);
    }
    eprintln!(
        "utrace-workload: the forked child exited in {} ms",
        started.elapsed().as_millis()
    );
    Ok(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0)
}
