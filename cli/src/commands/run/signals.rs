//! While the application runs, `utrace run` outlives the signals meant to stop it, so that
//! it can print the report of what was traced once the application has exited.
//!
//! Ctrl-C on a terminal sends SIGINT to the whole foreground process group: the application
//! gets it from the terminal as `utrace` does, and must not get it twice (a second Ctrl-C
//! often means "quit now" to an application). A signal sent to `utrace` alone (`kill`, a
//! service manager's SIGTERM) reaches nobody else, and is passed on to the application. The
//! two are told apart by where the signal came from (`si_code`): the kernel's terminal
//! driver, or a process.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signals that ask a program to stop.
const STOPPING: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// The application's pid while it runs (0: none).
static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn pass_on(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let from_terminal = !info.is_null() && unsafe { (*info).si_code } == libc::SI_KERNEL;
    let child = CHILD.load(Ordering::Relaxed);
    if !from_terminal && child > 0 {
        // SAFETY: kill is async-signal-safe; the pid is the child's, not yet reaped.
        unsafe { libc::kill(child, signal) };
    }
}

/// The stopping signals handled as the module says, until dropped.
pub struct PassedOn {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

impl PassedOn {
    /// From now until the value is dropped (after the child was waited for).
    pub fn to(child: u32) -> PassedOn {
        CHILD.store(child as i32, Ordering::Relaxed);
        let mut old = Vec::new();
        for signal in STOPPING {
            // SAFETY: a zeroed sigaction is valid; the handler is async-signal-safe;
            // SA_RESTART keeps the wait for the child going.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = pass_on as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, &mut previous) == 0 {
                    old.push((signal, previous));
                }
            }
        }
        PassedOn { old }
    }
}

impl Drop for PassedOn {
    fn drop(&mut self) {
        for (signal, previous) in &self.old {
            // SAFETY: restores the action read when this value was made.
            unsafe { libc::sigaction(*signal, previous, std::ptr::null_mut()) };
        }
        CHILD.store(0, Ordering::Relaxed);
    }
}
