//! The Perfetto format (the layer's `sink/perfetto`): a protobuf `Trace`, its packets one
//! after the other, each field 1 and length-delimited. Told from the content: the first
//! packet must be whole and decode. Packets are read one at a time, so a file cut short
//! (a process killed while the session wrote it) is read as far as it goes.

use prost::Message;

use super::perfetto_batches::Assembler;
use super::Trace;
use crate::tracepoint_spec::StageSpec;
use utrace_format::perfetto::{TracePacket, TRACE_PACKET_FIELD};

/// The key of a `Trace.packet` field: field 1, wire type 2 (length-delimited).
const PACKET_KEY: u64 = ((TRACE_PACKET_FIELD as u64) << 3) | 2;

/// Whether `bytes` start with a whole Perfetto trace packet.
pub fn detect(bytes: &[u8]) -> bool {
    matches!(next_packet(bytes), Ok((body, _)) if TracePacket::decode(body).is_ok())
}

pub fn parse(bytes: &[u8]) -> Result<Trace, String> {
    parse_with(bytes, &StageSpec::built_in())
}

/// [`parse`] with the spec given (parsing it takes longer than a small trace).
fn parse_with(bytes: &[u8], spec: &StageSpec) -> Result<Trace, String> {
    let mut assembler = Assembler::new(spec);
    let mut notes = Vec::new();
    let mut origins = Vec::new();
    let mut rest = bytes;
    let mut index = 0usize;
    while !rest.is_empty() {
        let offset = bytes.len() - rest.len();
        match next_packet(rest) {
            Ok((body, after)) => {
                match TracePacket::decode(body) {
                    Ok(packet) => {
                        if let Some(info) = &packet.gpu_info {
                            super::origin::from_gpu_info(info, &mut origins);
                        }
                        assembler.packet(&packet)
                    }
                    Err(e) => notes.push(format!(
                        "packet {index} (byte {offset}) does not decode ({e}); skipped"
                    )),
                }
                rest = after;
            }
            Err(Stop::Cut) => {
                notes.push(format!(
                    "the trace ends inside packet {index} (byte {offset}; cut short?); read as far as it goes"
                ));
                break;
            }
            Err(Stop::NotAPacket) => {
                notes.push(format!(
                    "byte {offset}: not a trace packet; the rest of the file is skipped"
                ));
                break;
            }
        }
        index += 1;
    }
    let mut trace = assembler.finish();
    trace.origins = origins;
    notes.append(&mut trace.notes);
    trace.notes = notes;
    Ok(trace)
}

/// Why packets stop.
#[derive(Debug, PartialEq, Eq)]
enum Stop {
    /// The bytes end inside a packet.
    Cut,
    /// Something other than a packet field.
    NotAPacket,
}

/// The body of the packet at the start of `bytes`, and the bytes after it.
fn next_packet(bytes: &[u8]) -> Result<(&[u8], &[u8]), Stop> {
    let (key, used) = varint(bytes)?;
    if key != PACKET_KEY {
        return Err(Stop::NotAPacket);
    }
    let rest = &bytes[used..];
    let (len, used) = varint(rest)?;
    let rest = &rest[used..];
    match usize::try_from(len) {
        Ok(len) if len <= rest.len() => Ok(rest.split_at(len)),
        _ => Err(Stop::Cut),
    }
}

/// A base-128 varint and its length in bytes.
fn varint(bytes: &[u8]) -> Result<(u64, usize), Stop> {
    let mut value = 0u64;
    for (i, b) in bytes.iter().take(10).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    if bytes.len() < 10 {
        Err(Stop::Cut)
    } else {
        Err(Stop::NotAPacket)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_are_split_and_cuts_told_apart() {
        let mut bytes = Vec::new();
        utrace_format::perfetto::encode_packet(
            &TracePacket {
                timestamp: Some(300),
                ..Default::default()
            },
            &mut bytes,
        );
        assert!(detect(&bytes));
        let (body, rest) = next_packet(&bytes).unwrap();
        assert!(rest.is_empty() && TracePacket::decode(body).unwrap().timestamp == Some(300));
        for cut in 1..bytes.len() {
            assert_eq!(next_packet(&bytes[..cut]), Err(Stop::Cut), "cut at {cut}");
            assert!(!detect(&bytes[..cut]));
        }
        assert_eq!(next_packet(b"\x12\x00"), Err(Stop::NotAPacket));
        assert_eq!(next_packet(&[0xff; 11]), Err(Stop::NotAPacket));
        // Text is not a trace, even where its first byte is a packet's key.
        assert!(!detect(b"\x0a\x0bnot a trace\n"));
        assert!(!detect(b"\n\nBATCH 1: device=0 queue=0x1\n"));
        assert!(!detect(b"BATCH 1: device=0\n"));
    }

    #[test]
    fn garbage_never_panics() {
        // A deterministic stream of bytes, some of it shaped like packets.
        let mut x: u32 = 0x1234_5678;
        let mut bytes = Vec::new();
        for i in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            bytes.push(if i % 7 == 0 { 0x0a } else { x as u8 });
        }
        let spec = StageSpec::built_in();
        for start in 0..64 {
            let _ = parse_with(&bytes[start..], &spec);
        }
    }
}

#[cfg(test)]
#[path = "perfetto_tests.rs"]
mod read_tests;
