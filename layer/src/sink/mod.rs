//! Output formats. A sink only knows [`Event`]s and the batch, frame and trace boundaries
//! around them (u_trace's printer callbacks); [`output`] is where the bytes go.

mod c_stdout;
pub mod csv;
pub mod destinations;
pub mod json;
pub mod output;
mod ranges;
mod tee;
pub mod txt;
mod writer;

use std::sync::Arc;

use parking_lot::Mutex;

use crate::config::{Config, Destination, Format};
use crate::trace::tracepoints::Payload;

pub use crate::trace::batch::SubmitTiming;

/// One timestamped tracepoint.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    /// Absolute GPU time in nanoseconds.
    pub ns: u64,
    pub payload: &'a Payload,
    /// The labels of the command trace the event belongs to (see `LabelRef`).
    pub strings: &'a [u8],
    /// The command buffer it was recorded in (a secondary's own handle).
    pub cmd: u64,
}

/// What the header of a batch shows.
#[derive(Clone, Debug, Default)]
pub struct BatchInfo<'a> {
    /// The device's traced batches, counted from 1.
    pub number: u64,
    pub device: u32,
    pub queue: u64,
    /// The queue's family and its index in it.
    pub queue_family: u32,
    pub queue_index: u32,
    pub frame: u32,
    pub submission: u64,
    pub cmdbufs: u32,
    /// Timestamp queries the batch wrote (secondaries' included).
    pub queries: u32,
    /// Every command buffer the call submitted, in submission order.
    pub command_buffers: &'a [u64],
    /// The `vkQueueSubmit*` call on the CPU.
    pub submit: SubmitTiming,
}

/// A name the application gave an object (`vkSetDebugUtilsObjectNameEXT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectName {
    /// When it was named (`CLOCK_BOOTTIME`): before any work that uses the object, so a
    /// trace processor knows the name when it meets the object's stages.
    pub named_at_ns: u64,
    pub device: u64,
    pub object_type: i32,
    pub object: u64,
    pub name: String,
}

/// Closing counts of a device's trace.
#[derive(Clone, Debug)]
pub struct TraceSummary {
    pub device: u32,
    pub batches: u64,
    pub events: u64,
    pub dropped: u64,
}

pub trait Sink: Send {
    /// A completed batch, its events in submission order.
    fn batch(&mut self, info: &BatchInfo, events: &[Event<'_>]);
    /// `vkQueuePresentKHR` ended `frame`.
    fn end_of_frame(&mut self, device: u32, frame: u32);
    /// The device is going (or the process is exiting).
    fn end_of_trace(&mut self, summary: &TraceSummary);
    /// Waits, at most `timeout`, until what this sink queued is written; returns how many
    /// batches are still unwritten. Sinks that write synchronously have nothing to wait for.
    fn drain(&mut self, _timeout: std::time::Duration) -> usize {
        0
    }
}

/// The names the application gave a device's objects, in the order given: the hook appends,
/// formats that show names read (Perfetto re-sends them to every new sequence).
pub type ObjectNames = Arc<Mutex<Vec<ObjectName>>>;

/// What a sink may need of its device beyond the events.
pub struct DeviceContext {
    pub index: u32,
    pub handle: u64,
    /// Pairs the device's timestamps with the CPU's clocks (Perfetto's clock snapshots).
    pub clock: Option<crate::gpu::calibration::GpuClock>,
    pub names: ObjectNames,
}

/// The sinks `config` asks for, writing to their destinations for device `device`.
pub fn open(config: &Config, device: DeviceContext) -> Box<dyn Sink> {
    use crate::perfetto::render_stages::RenderStageSink;
    // On demand, only a Perfetto session ever asks for the trace.
    if config.on_demand {
        return Box::new(RenderStageSink::new(device));
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
    tee::Tee::of(sinks)
}
