//! What the pipeline statistics of a range are made of (`GPU_TRACE_COUNTERS=pipeline`):
//! the queries a recording takes, the ranges that sum them, and the values an output
//! prints; shared by the recording (`statistics`) and its frozen trace (`recorded_stats`).

/// The statistics one range gets, in a fixed order (names in [`Counters::NAMES`]).
pub const STATISTICS: usize = 7;

/// What a range shows: the graphics statistics, the compute one, or all (the command
/// buffer's sum; on a family without graphics its sum is of the compute statistic only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    Graphics,
    Compute,
    All,
    ComputeSum,
}

/// One range's pipeline statistics, as an output prints them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counters {
    pub shown: Shown,
    /// In the order of [`Self::NAMES`].
    pub values: [u64; STATISTICS],
    /// An application's own statistics query overlapped the range: the values leave its
    /// part out (`measured` false: all of it).
    pub partial: bool,
    /// Some of the range was measured (else only `partial` is shown).
    pub measured: bool,
}

impl Counters {
    /// The statistics' names in outputs (Vulkan's, in snake case).
    pub const NAMES: [&'static str; STATISTICS] = utrace_format::COUNTER_NAMES;

    /// A command buffer's sum of its ranges (not a range of its own).
    pub fn is_sum(&self) -> bool {
        matches!(self.shown, Shown::All | Shown::ComputeSum)
    }

    /// The (name, value) pairs this range shows: its statistics where measured, then
    /// `partial=1` where an application's own query overlapped it.
    pub fn shown(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        let measured = if self.measured {
            self.statistics()
        } else {
            0..0
        };
        measured
            .map(|i| (Self::NAMES[i], self.values[i]))
            .chain(self.partial.then_some(("partial", 1)))
    }

    fn statistics(&self) -> std::ops::Range<usize> {
        match self.shown {
            Shown::Graphics => 0..STATISTICS - 1,
            Shown::Compute | Shown::ComputeSum => STATISTICS - 1..STATISTICS,
            Shown::All => 0..STATISTICS,
        }
    }
}

/// One query taken by a recording: its pool (an index into the recording's pools) and
/// index in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    pub pool: u32,
    pub query: u32,
}

/// A range that gets statistics: its end event and the queries summed into it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatsRange {
    /// The end event's index among the trace's events.
    pub event: u32,
    /// Which of [`RecordedStats::queries`] are summed (`first..first + count`).
    pub first: u32,
    pub count: u32,
    pub shown: Shown,
    /// An application's own statistics query overlapped it.
    pub partial: bool,
}
