//! What the pipeline statistics of a range are made of (`GPU_TRACE_COUNTERS=pipeline`):
//! the queries a recording takes, the ranges that sum them, and the values an output
//! prints; shared by the recording (`statistics`) and its frozen trace (`recorded_stats`).

/// The statistics one range gets, in a fixed order (names in [`Counters::NAMES`]).
pub const STATISTICS: usize = 9;
/// Where the compute statistic is among them; the mesh shading ones (task, mesh) follow it.
pub const COMPUTE_AT: usize = 6;

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
    /// The device counts task and mesh shader invocations (`meshShaderQueries`): graphics
    /// ranges and sums show them too.
    pub mesh: bool,
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
        let (first, then) = if self.measured {
            self.statistics()
        } else {
            (0..0, 0..0)
        };
        first
            .chain(then)
            .map(|i| (Self::NAMES[i], self.values[i]))
            .chain(self.partial.then_some(("partial", 1)))
    }

    /// The indices shown: a range of them, then the mesh shading ones where counted.
    fn statistics(&self) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let mesh = if self.mesh {
            COMPUTE_AT + 1..STATISTICS
        } else {
            0..0
        };
        match self.shown {
            Shown::Graphics => (0..COMPUTE_AT, mesh),
            Shown::Compute | Shown::ComputeSum => (COMPUTE_AT..COMPUTE_AT + 1, 0..0),
            Shown::All => (0..COMPUTE_AT + 1, mesh),
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
