//! What the workload reports about its run, written as JSON for the tests to compare with
//! the layer's trace.

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, Default, Clone)]
pub struct Report {
    pub devices: Vec<DeviceReport>,
    /// Validation warnings and errors (validation enabled only).
    pub validation_messages: Vec<String>,
    /// The process's thread names just before the devices were destroyed.
    pub threads: Vec<String>,
    pub presents: u32,
    /// For each probed command name, whether `vkGetDeviceProcAddr` returned a function
    /// (first device only).
    pub proc_addrs: std::collections::BTreeMap<String, bool>,
    /// The thread (Linux thread id) that recorded and submitted the work.
    #[serde(default)]
    pub main_thread: u32,
    /// `CLOCK_BOOTTIME` when the workload wrote this report, its work done, just before it
    /// returned from `main` or called `exit` (with the harness's `Run::ended_boot_ns`:
    /// how long the process took to leave).
    #[serde(default)]
    pub leaving_boot_ns: u64,
}

#[derive(Serialize, Deserialize, Debug, Default, Clone)]
pub struct DeviceReport {
    /// Creation order in the process.
    pub index: u32,
    /// Every compute result checked out.
    pub results_ok: bool,
    pub submissions: Vec<Submission>,
    /// Submissions made but not logged one by one (the soak scenario).
    #[serde(default)]
    pub unlogged_submissions: u64,
    /// Resident memory of the process, in KiB, sampled along a long run.
    #[serde(default)]
    pub rss_kib: Vec<u64>,
    /// Durations of the application's `vkDeviceWaitIdle` and `vkQueueWaitIdle` calls in the
    /// scenarios that time them, in nanoseconds.
    #[serde(default)]
    pub idle_waits_ns: Vec<u64>,
    /// How long `vkDestroyDevice` took (the layer's shutdown of the device included), in
    /// nanoseconds; 0 when the device was left to the exit.
    #[serde(default)]
    pub destroy_ns: u64,
    /// Optional device features the scenarios used where the device had them
    /// (`multi_draw`, `draw_indirect_count`, `debug_marker`).
    #[serde(default)]
    pub features: Vec<String>,
}

#[derive(Serialize, Deserialize, Debug, Default, Clone)]
pub struct Submission {
    pub label: String,
    /// CLOCK_MONOTONIC right before the submit call.
    pub cpu_before_ns: u64,
    /// CLOCK_MONOTONIC right after the wait for its fence returned.
    pub cpu_after_ns: u64,
    /// The submitted command buffers, as `{:#x}` of their handles, in submission order.
    pub cmdbufs: Vec<String>,
    /// Presents made on the device before this submit.
    pub frame: u32,
    /// Secondary command buffers executed by the submitted ones, in execution order.
    #[serde(default)]
    pub secondaries: Vec<String>,
    /// How long the submit call itself took, where the scenario timed it (0: not timed).
    #[serde(default)]
    pub call_ns: u64,
}

/// The names of this process's threads.
pub fn thread_names() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .map(|s| s.trim().to_string())
        .collect();
    names.sort();
    names
}

/// The process's resident memory in KiB (from /proc/self/statm), 0 where unknown.
pub fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4
}
