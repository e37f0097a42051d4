//! utrace's test workload and the tools its integration tests use.
//!
//! - [`vk`], [`window`], [`workload`]: the Vulkan program `utrace-workload` (also the demo);
//! - [`report`]: what it reports about its run;
//! - [`harness`]: running it under the freshly built layer;
//! - [`control_socket`]: reaching a running workload's control socket;
//! - [`trace_txt`]: reading the layer's `txt` trace back;
//! - [`validation_control`]: the scenario with one deliberate validation error, the
//!   positive control of the "validation stays silent" checks;
//! - [`view_page`]: `utrace view`'s page loaded in a headless browser and read back.

pub mod bench;
pub mod chatter;
pub mod checks;
pub mod clock_truth;
pub mod control_socket;
pub mod counter_checks;
pub mod frame_passes;
pub mod gpu_work;
pub mod harness;
pub mod modern;
pub mod patterns;
pub mod perfetto_checks;
pub mod perfetto_trace;
pub mod queue_counts;
pub mod readme_blocks;
pub mod report;
pub mod shapes;
pub mod stage_ranges;
pub mod submitter;
pub mod synthetic_runs;
pub mod system_tracing;
pub mod trace_txt;
pub mod two_users;
pub mod validation_control;
pub mod view_page;
pub mod vk;
pub mod window;
pub mod workload;
