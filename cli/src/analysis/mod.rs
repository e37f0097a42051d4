//! What the command computes from a trace's model: ranges paired from begin and end events,
//! grouped, summed per queue and per frame, summarised in statistics and histograms, and
//! compared between two traces.

pub mod counted_groups;
pub mod counters;
pub mod exact_rank;
pub mod groups;
pub mod hardware_counters;
pub mod histogram;
pub mod innermost;
pub mod latency;
pub mod queues;
pub mod ranges;
pub mod report;
pub mod significance;
pub mod stats;
