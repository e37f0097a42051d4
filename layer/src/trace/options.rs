//! What the core is told of the configuration: a few values, read once per device, so that
//! the core never reads the configuration itself.

/// What the core reads of the configuration.
#[derive(Clone, Copy, Debug)]
pub struct TracerOptions {
    /// `GPU_TRACE_FRAMES=FIRST-LAST`: the frames to trace (inclusive); all when `None`.
    pub frames: Option<(u32, u32)>,
    /// `GPU_TRACE_INSTRUMENT=1`: instrument every command buffer, even while no capture is
    /// active.
    pub instrument: bool,
    /// The device feeds Perfetto: its GPU clock is paired with the CPU's, its outputs show
    /// every object's name and each submission's CPU time.
    pub perfetto: bool,
    /// Traced on demand: the traceq thread waits for the first batch a session captures.
    pub on_demand: bool,
}
