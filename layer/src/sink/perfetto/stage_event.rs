//! One `GpuRenderStageEvent`'s bytes, encoded into a reused buffer and appended to its
//! packet as one field.
//!
//! Why not the generated setters: each nested message of the SDK's Rust wrapper allocates
//! a reference-counted size field and patches it on finalize, and a draw's stage carries a
//! nested `ExtraData` per argument; with a handful of small appends per field through the
//! stream writer, that was ~1 µs per stage (Perfetto output at ~1 M events/s). Here the
//! body is plain bytes (tags from the SDK's own `pb_utils`), appended with one
//! call. The field numbers are those of `gpu_render_stage_event.proto`, as in the
//! generated `GpuRenderStageEvent` of `perfetto-sdk-protos-gpu`; a test decodes the bytes
//! with the SDK's decoder.

use std::fmt::Write;

use perfetto_sdk::pb_utils::{pb_make_tag, PbWireType};

use crate::sink::{Counters, Event};
use crate::trace::tracepoints::{Payload, ValueKind};
use utrace_format::PERFETTO_FRAME_EXTRA;

/// `TracePacket` fields.
mod packet {
    pub const TIMESTAMP: u32 = 8;
    pub const SEQUENCE_FLAGS: u32 = 13;
    pub const GPU_RENDER_STAGE_EVENT: u32 = 53;
    pub const TIMESTAMP_CLOCK_ID: u32 = 58;
}

/// `GpuRenderStageEvent` fields.
mod field {
    pub const EVENT_ID: u32 = 1;
    pub const DURATION: u32 = 2;
    pub const CONTEXT: u32 = 5;
    pub const EXTRA_DATA: u32 = 6;
    pub const RENDER_TARGET_HANDLE: u32 = 8;
    pub const RENDER_PASS_HANDLE: u32 = 9;
    pub const SUBMISSION_ID: u32 = 10;
    pub const GPU_ID: u32 = 11;
    pub const COMMAND_BUFFER_HANDLE: u32 = 12;
    pub const HW_QUEUE_IID: u32 = 13;
    pub const STAGE_IID: u32 = 14;
    /// `GpuRenderStageEvent.ExtraData.name` and `.value`.
    pub const EXTRA_NAME: u32 = 1;
    pub const EXTRA_VALUE: u32 = 2;
}

/// What one stage says besides its arguments.
pub struct Stage<'a> {
    pub event_id: u64,
    pub duration: u64,
    pub queue_iid: u64,
    pub stage_iid: u64,
    pub gpu_id: u32,
    pub context: u64,
    pub submission: u32,
    pub command_buffer: u64,
    /// 0 when not in a render pass.
    pub render_pass: u64,
    /// 0 when unknown.
    pub render_target: u64,
    /// The name the application gave the draw's or dispatch's pipeline: one more
    /// `extra_data` after its `pipeline` handle.
    pub pipeline_name: Option<&'a str>,
    /// The range's pipeline statistics (`GPU_TRACE_COUNTERS`), from its end event: more
    /// `extra_data`, named as the text formats name them.
    pub counters: Option<&'a Counters>,
    /// The batch's frame in decimal (formatted once per batch): the last `extra_data`,
    /// `frame`, as the text formats' `frame=N` of the batch.
    pub frame: &'a str,
}

/// Encodes stages, reusing its buffers: allocation-free once warm.
#[derive(Default)]
pub struct StageEncoder {
    packet: Vec<u8>,
    body: Vec<u8>,
    value: String,
}

impl StageEncoder {
    /// The fields of the `TracePacket` carrying `stage`: its timestamp `ns` on clock
    /// `clock_id`, `sequence_flags`, and the `GpuRenderStageEvent`, whose `extra_data` are the
    /// arguments of the stage's begin event `e`. Appended to an empty packet with one call.
    pub fn encode_packet(
        &mut self,
        ns: u64,
        clock_id: u32,
        sequence_flags: u32,
        stage: &Stage<'_>,
        e: &Event<'_>,
    ) -> &[u8] {
        self.encode_body(stage, e);
        let p = &mut self.packet;
        p.clear();
        varint_field(p, packet::TIMESTAMP, ns);
        varint_field(p, packet::TIMESTAMP_CLOCK_ID, u64::from(clock_id));
        varint_field(p, packet::SEQUENCE_FLAGS, u64::from(sequence_flags));
        bytes_field(p, packet::GPU_RENDER_STAGE_EVENT, &self.body);
        &self.packet
    }

    fn encode_body(&mut self, stage: &Stage<'_>, e: &Event<'_>) {
        let b = &mut self.body;
        b.clear();
        varint_field(b, field::EVENT_ID, stage.event_id);
        varint_field(b, field::DURATION, stage.duration);
        varint_field(b, field::HW_QUEUE_IID, stage.queue_iid);
        varint_field(b, field::STAGE_IID, stage.stage_iid);
        varint_field(b, field::GPU_ID, u64::from(stage.gpu_id));
        varint_field(b, field::CONTEXT, stage.context);
        varint_field(b, field::SUBMISSION_ID, u64::from(stage.submission));
        varint_field(b, field::COMMAND_BUFFER_HANDLE, stage.command_buffer);
        if stage.render_pass != 0 {
            varint_field(b, field::RENDER_PASS_HANDLE, stage.render_pass);
        }
        if stage.render_target != 0 {
            varint_field(b, field::RENDER_TARGET_HANDLE, stage.render_target);
        }
        let payload = e.payload();
        for (k, f) in e.info().fields.iter().enumerate() {
            self.value.clear();
            write_value(&mut self.value, e, &payload, k, f.kind);
            extra_data(b, f.name, &self.value);
        }
        if let Some(name) = stage.pipeline_name {
            extra_data(b, "pipeline_name", name);
        }
        if let Some(counters) = stage.counters {
            for (name, value) in counters.shown() {
                self.value.clear();
                value.push(&mut self.value);
                extra_data(b, name, &self.value);
            }
        }
        extra_data(b, PERFETTO_FRAME_EXTRA, stage.frame);
    }
}

/// One `extra_data` (name, value) of the stage.
fn extra_data(b: &mut Vec<u8>, name: &str, value: &str) {
    let (name, value) = (name.as_bytes(), value.as_bytes());
    // The nested ExtraData's size is known before it is written: no copy.
    let inner = delimited_len(field::EXTRA_NAME, name.len())
        + delimited_len(field::EXTRA_VALUE, value.len());
    varint(b, tag(field::EXTRA_DATA, PbWireType::Delimited));
    varint(b, inner as u64);
    bytes_field(b, field::EXTRA_NAME, name);
    bytes_field(b, field::EXTRA_VALUE, value);
}

/// An argument's text; a label as the application wrote it (not quoted).
fn write_value(out: &mut String, e: &Event<'_>, payload: &Payload, index: usize, kind: ValueKind) {
    match (kind, payload.label()) {
        (ValueKind::Quoted, Some(label)) => {
            let _ = write!(out, "{}", String::from_utf8_lossy(label.bytes(e.strings)));
        }
        _ => payload.write_arg(index, out, e.strings),
    }
}

/// Base-128, low group first (the SDK's `pb_write_varint`, which is not inlined across
/// crates and was a fifth of the encoding's time).
#[inline]
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn tag(id: u32, wire: PbWireType) -> u64 {
    pb_make_tag(id, wire).into()
}

fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// The encoded size of a delimited field `id` of `len` bytes.
fn delimited_len(id: u32, len: usize) -> usize {
    varint_len(tag(id, PbWireType::Delimited)) + varint_len(len as u64) + len
}

#[inline]
fn varint_field(out: &mut Vec<u8>, id: u32, v: u64) {
    varint(out, tag(id, PbWireType::Varint));
    varint(out, v);
}

#[inline]
fn bytes_field(out: &mut Vec<u8>, id: u32, bytes: &[u8]) {
    varint(out, tag(id, PbWireType::Delimited));
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::sink_interface::Words;
    use crate::trace::tracepoints::{BeginLabel, LabelRef, Payload, StartDraw};
    use perfetto_sdk::pb_decoder::{PbDecoder, PbDecoderField};

    fn decode(bytes: &[u8]) -> Vec<(u32, PbDecoderField<'_>)> {
        PbDecoder::new(bytes)
            .map(|f| f.expect("well-formed"))
            .collect()
    }

    /// Checks the packet's own fields; returns its GpuRenderStageEvent.
    fn body(packet: &[u8]) -> Vec<u8> {
        let fields = decode(packet);
        let varint = |want| {
            fields.iter().find_map(|(id, f)| match f {
                PbDecoderField::Varint(v) if *id == want => Some(*v),
                _ => None,
            })
        };
        assert!(varint(packet::TIMESTAMP).is_some());
        assert_eq!(varint(packet::TIMESTAMP_CLOCK_ID), Some(64));
        assert_eq!(varint(packet::SEQUENCE_FLAGS), Some(2));
        fields
            .iter()
            .find_map(|(id, f)| match f {
                PbDecoderField::Delimited(b) if *id == packet::GPU_RENDER_STAGE_EVENT => {
                    Some(b.to_vec())
                }
                _ => None,
            })
            .expect("the stage is in the packet")
    }

    #[test]
    fn sizes_are_those_of_the_encoding() {
        for v in [
            0u64,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut out = Vec::new();
            varint(&mut out, v);
            assert_eq!(varint_len(v), out.len(), "{v}");
        }
        let long = vec![b'x'; 300];
        let mut out = Vec::new();
        bytes_field(&mut out, 6, &long);
        assert_eq!(delimited_len(6, long.len()), out.len());
    }

    fn strings(bytes: &[u8]) -> Vec<(String, String)> {
        decode(bytes)
            .into_iter()
            .filter(|(id, _)| *id == field::EXTRA_DATA)
            .map(|(_, f)| {
                let PbDecoderField::Delimited(extra) = f else {
                    panic!("extra_data is a message")
                };
                let text = |want| {
                    decode(extra)
                        .into_iter()
                        .find_map(|(id, f)| match f {
                            PbDecoderField::Delimited(s) if id == want => {
                                Some(String::from_utf8(s.to_vec()).expect("utf-8"))
                            }
                            _ => None,
                        })
                        .expect("field present")
                };
                (text(field::EXTRA_NAME), text(field::EXTRA_VALUE))
            })
            .collect()
    }

    fn stage() -> Stage<'static> {
        Stage {
            event_id: 7,
            duration: 300,
            queue_iid: 2,
            stage_iid: 3,
            gpu_id: 1,
            context: 1,
            submission: 9,
            command_buffer: 0xc0ffee,
            render_pass: 0,
            render_target: 0xf00,
            pipeline_name: None,
            counters: None,
            frame: "12",
        }
    }

    #[test]
    fn the_sdks_decoder_reads_every_field_and_argument() {
        let payload = Payload::StartDraw(StartDraw {
            vertex_count: 3,
            instance_count: 2,
            ..Default::default()
        });
        let words = Words::of(payload);
        let e = words.event(1, b"", 0xc0ffee);
        let mut encoder = StageEncoder::default();
        let bytes = body(encoder.encode_packet(1234, 64, 2, &stage(), &e));
        let varints: Vec<(u32, u64)> = decode(&bytes)
            .into_iter()
            .filter_map(|(id, f)| match f {
                PbDecoderField::Varint(v) => Some((id, v)),
                _ => None,
            })
            .collect();
        assert_eq!(
            varints,
            [
                (field::EVENT_ID, 7),
                (field::DURATION, 300),
                (field::HW_QUEUE_IID, 2),
                (field::STAGE_IID, 3),
                (field::GPU_ID, 1),
                (field::CONTEXT, 1),
                (field::SUBMISSION_ID, 9),
                (field::COMMAND_BUFFER_HANDLE, 0xc0ffee),
                (field::RENDER_TARGET_HANDLE, 0xf00),
            ],
            "no render pass: its handle is left out"
        );
        let args = strings(&bytes);
        let mut names: Vec<&str> = payload.info().fields.iter().map(|f| f.name).collect();
        names.push(PERFETTO_FRAME_EXTRA);
        assert_eq!(
            args.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            names,
            "the arguments, then the batch's frame"
        );
        assert_eq!(args.last(), Some(&("frame".into(), "12".into())));
        assert!(
            args.contains(&("vertex_count".into(), "3".into())),
            "{args:?}"
        );
        assert!(
            args.contains(&("instance_count".into(), "2".into())),
            "{args:?}"
        );
    }

    #[test]
    fn a_label_is_written_as_the_application_wrote_it() {
        let payload = Payload::BeginLabel(BeginLabel {
            label: LabelRef { offset: 0, len: 6 },
        });
        let words = Words::of(payload);
        let e = words.event(1, b"say \"x\"", 1);
        let mut encoder = StageEncoder::default();
        let bytes = body(encoder.encode_packet(1, 64, 2, &stage(), &e));
        assert_eq!(
            strings(&bytes),
            [
                ("label".into(), "say \"x".into()),
                ("frame".into(), "12".into())
            ]
        );
    }
}
