//! The fault plan, read once from `UTRACE_FAULTS`, and the per-command call counters.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use ash::vk;

struct Rule {
    result: vk::Result,
    from_call: u64,
    calls: AtomicU64,
}

fn plan() -> &'static HashMap<String, Rule> {
    static PLAN: OnceLock<HashMap<String, Rule>> = OnceLock::new();
    PLAN.get_or_init(|| {
        let text = std::env::var("UTRACE_FAULTS").unwrap_or_default();
        let mut plan = HashMap::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((command, rest)) = item.split_once('=') else {
                eprintln!("VK_LAYER_UTRACE_fault: ignoring {item:?} (want COMMAND=RESULT@N)");
                continue;
            };
            let (result, from) = rest.split_once('@').unwrap_or((rest, "1"));
            let result = match result {
                "device_lost" => vk::Result::ERROR_DEVICE_LOST,
                "out_of_device_memory" => vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
                "out_of_host_memory" => vk::Result::ERROR_OUT_OF_HOST_MEMORY,
                "timeout" => vk::Result::TIMEOUT,
                other => {
                    eprintln!("VK_LAYER_UTRACE_fault: unknown result {other:?} in {item:?}");
                    continue;
                }
            };
            let from_call = from.parse().unwrap_or(1);
            plan.insert(
                command.to_string(),
                Rule {
                    result,
                    from_call,
                    calls: AtomicU64::new(0),
                },
            );
        }
        plan
    })
}

/// Counts a call of `command`; the result to return instead of calling down, if any.
pub fn check(command: &str) -> Option<vk::Result> {
    let rule = plan().get(command)?;
    let n = rule.calls.fetch_add(1, Ordering::Relaxed) + 1;
    (n >= rule.from_call).then_some(rule.result)
}

/// Whether `command` has a rule at all (without counting a call).
pub fn planned(command: &str) -> bool {
    plan().contains_key(command)
}

/// `UTRACE_FAULT_SHOW_SUBMITS=1`: each submit call says on stderr how many batches, command
/// buffers and semaphore signals reach the driver, and each `vkBeginCommandBuffer` says it
/// was called, so that tests can count what utrace adds.
pub fn show_submits() -> bool {
    static SHOW: OnceLock<bool> = OnceLock::new();
    *SHOW.get_or_init(|| std::env::var("UTRACE_FAULT_SHOW_SUBMITS").as_deref() == Ok("1"))
}

/// `UTRACE_FAULT_SHOW_FEATURES=1`: `vkCreateDevice` says on stderr the Vulkan 1.0 features
/// that reach the driver (from `pEnabledFeatures` or a `VkPhysicalDeviceFeatures2`) that
/// utrace may add, and one the tests' device asks for itself.
pub fn show_features() -> bool {
    static SHOW: OnceLock<bool> = OnceLock::new();
    *SHOW.get_or_init(|| std::env::var("UTRACE_FAULT_SHOW_FEATURES").as_deref() == Ok("1"))
}
