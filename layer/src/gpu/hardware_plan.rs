//! The hardware counters a device collects (`GPU_TRACE_COUNTERS=perf:...`), as decided at
//! `vkCreateDevice` (`perf_counters`) and kept by its backend.

use ash::vk;

use super::perf_counters::PerfPlan;

/// The hardware counters a device collects: per queue family the counters' indices in the
/// driver's list, in the order asked; their keys in outputs, how each value is stored and
/// its unit;
/// and whether a query spans whole command buffers (a counter of command-buffer scope is
/// among them) or each render pass.
#[derive(Debug, PartialEq, Eq)]
pub struct HardwarePlan {
    pub families: Vec<(u32, Vec<u32>)>,
    pub keys: Vec<String>,
    pub storage: Vec<vk::PerformanceCounterStorageKHR>,
    pub units: Vec<vk::PerformanceCounterUnitKHR>,
    pub command_buffer_scope: bool,
}

impl HardwarePlan {
    /// The plan of a device whose counters were chosen.
    pub fn of(plan: &PerfPlan) -> Option<HardwarePlan> {
        let PerfPlan::Chosen {
            families,
            names,
            storage,
            units,
            command_buffer_scope,
        } = plan
        else {
            return None;
        };
        Some(HardwarePlan {
            families: families.clone(),
            keys: names.iter().map(|n| utrace_format::perf_key(n)).collect(),
            storage: storage.clone(),
            units: units.clone(),
            command_buffer_scope: *command_buffer_scope,
        })
    }

    /// The counters `family`'s pools count, if it has them.
    pub fn counters_of(&self, family: u32) -> Option<&[u32]> {
        self.families
            .iter()
            .find(|(f, _)| *f == family)
            .map(|(_, c)| c.as_slice())
    }
}
