//! Output formats. A sink only knows [`Event`]s and the batch, frame and trace boundaries
//! around them (u_trace's printer callbacks); [`output`] is where the bytes go.

pub mod batch_stream;
mod c_stdout;
pub mod csv;
pub mod destinations;
pub(crate) mod held_file;
pub mod json;
pub mod origin;
pub mod output;
pub mod perfetto;
mod ranges;
mod record_queue;
pub mod remote_slot;
pub mod submit_clock;
pub mod tally;
mod target;
mod tee;
mod text_args;
pub mod txt;
pub(crate) mod writer;

use std::sync::Arc;

use crate::config::{Destination, Format};

pub use crate::trace::sink_interface::{
    BatchInfo, CounterValue, Counters, DeviceContext, Event, EventPieces, HardwareSet, Lifecycle,
    ObjectName, ObjectNames, Outputs, Sink, TraceSummary,
};
pub use crate::trace::submit::batch::SubmitTiming;

/// What the configuration says of the outputs.
#[derive(Clone, Debug)]
pub struct OutputChoice {
    /// Traced on demand: only a Perfetto session (or a capture from outside) asks for the
    /// trace.
    pub on_demand: bool,
    pub destination: Destination,
    /// At most one text format (txt, json, csv) and maybe perfetto; never empty.
    pub formats: Vec<Format>,
    /// Devices feed Perfetto: a file session or, on demand, a system one.
    pub perfetto: bool,
    /// The in-process Perfetto session's buffer, in KiB.
    pub perfetto_buffer_kb: u32,
    /// `GPU_TRACE_FRAMES`: the frames to trace; all when `None`.
    pub frames: Option<(u32, u32)>,
}

/// The outputs `choice` asks for, as the core is given them; `hooks` are what a Perfetto
/// session's start and stop do in the core.
pub fn outputs(
    choice: OutputChoice,
    origin: origin::Origin,
    hooks: perfetto::SessionHooks,
) -> Outputs {
    let config = Arc::new(choice);
    let origin = Arc::new(origin);
    Outputs {
        lifecycle: config.perfetto.then(|| {
            Box::new(perfetto::PerfettoLifecycle::new(Arc::clone(&config), hooks))
                as Box<dyn Lifecycle>
        }),
        open: Box::new(move |device| open(&config, origin, device)),
    }
}

/// The sinks `config` asks for, writing to their destinations for device `device`, each
/// text format's first record its header (`origin`).
fn open(
    config: &OutputChoice,
    origin: Arc<origin::Origin>,
    device: DeviceContext,
) -> Box<dyn Sink> {
    use perfetto::render_stages::RenderStageSink;
    // A capture asked from outside the process writes through each device's slot.
    let slot = remote_slot::slot(device.index, Arc::clone(&origin), device.clock.clone());
    let header =
        || origin::PendingHeader::new(device.index, Arc::clone(&origin), device.clock.clone());
    // The text formats give each batch its submit time on the device's clock.
    let clock = device.clock.clone();
    let with_submit_times = |sinks| submit_clock::SubmitClock::wrap(tee::Tee::of(sinks), clock);
    // On demand, only a Perfetto session (or such a capture) ever asks for the trace.
    if config.on_demand {
        return with_submit_times(vec![
            Box::new(RenderStageSink::new(device, Arc::clone(&origin))),
            slot,
        ]);
    }
    // With Perfetto, GPU_TRACEFILE names the Perfetto trace and text goes to stdout.
    let perfetto = config.formats.contains(&Format::Perfetto);
    let text_destination = if perfetto {
        Destination::Stdout
    } else {
        config.destination.clone()
    };
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
    for format in &config.formats {
        let out = || destinations::open(&text_destination, device.index);
        match format {
            Format::Txt => sinks.push(Box::new(txt::TxtSink::new(out(), header()))),
            Format::Json => sinks.push(Box::new(json::JsonSink::new(out(), header()))),
            Format::Csv => sinks.push(Box::new(csv::CsvSink::new(out(), header()))),
            Format::Perfetto => {}
        }
    }
    if perfetto {
        sinks.push(Box::new(RenderStageSink::new(device, Arc::clone(&origin))));
    }
    sinks.push(slot);
    with_submit_times(sinks)
}
