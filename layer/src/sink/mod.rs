//! Output formats. A sink only knows [`Event`]s and the batch, frame and trace boundaries
//! around them (u_trace's printer callbacks); [`output`] is where the bytes go.

pub mod batch_stream;
mod c_stdout;
pub mod csv;
pub mod destinations;
pub mod json;
pub mod output;
pub mod perfetto;
mod ranges;
mod record_queue;
pub mod remote_slot;
mod tee;
mod text_args;
pub mod txt;
pub(crate) mod writer;

use crate::config::{Config, Destination, Format};

pub use crate::trace::batch::SubmitTiming;
pub use crate::trace::sink_interface::{
    BatchInfo, DeviceContext, Event, Lifecycle, ObjectName, ObjectNames, Outputs, Sink,
    TraceSummary,
};

/// The outputs `config` asks for, as the core is given them; `hooks` are what a Perfetto
/// session's start and stop do in the core.
pub fn outputs(config: &'static Config, hooks: perfetto::SessionHooks) -> Outputs {
    Outputs {
        open: Box::new(move |device| open(config, device)),
        lifecycle: config.perfetto().then(|| {
            Box::new(perfetto::PerfettoLifecycle::new(config, hooks)) as Box<dyn Lifecycle>
        }),
    }
}

/// The sinks `config` asks for, writing to their destinations for device `device`.
fn open(config: &Config, device: DeviceContext) -> Box<dyn Sink> {
    use perfetto::render_stages::RenderStageSink;
    // A capture asked from outside the process writes through each device's slot.
    let slot = remote_slot::slot(device.index);
    // On demand, only a Perfetto session (or such a capture) ever asks for the trace.
    if config.on_demand {
        return tee::Tee::of(vec![Box::new(RenderStageSink::new(device)), slot]);
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
            Format::Txt => sinks.push(Box::new(txt::TxtSink::new(out()))),
            Format::Json => sinks.push(Box::new(json::JsonSink::new(out()))),
            Format::Csv => sinks.push(Box::new(csv::CsvSink::new(out()))),
            Format::Perfetto => {}
        }
    }
    if perfetto {
        sinks.push(Box::new(RenderStageSink::new(device)));
    }
    sinks.push(slot);
    tee::Tee::of(sinks)
}
