//! The Perfetto reader on traces built here (encoded with the same prost types), and the
//! writer read back.

use crate::analysis::ranges::{pair, Spec};
use crate::trace::{perfetto, txt, Trace};
use crate::tracepoint_spec::StageSpec;
use utrace_format::perfetto::*;

const QUEUE_A: &str = "VkQueue 0xa0: family 0, index 0";
/// As written where the GPU clock was measured: the bound after the queue (older layers
/// wrote none, as `QUEUE_A`).
const QUEUE_B: &str = "VkQueue 0xb0: family 1, index 0; GPU clock measured to within 931 ns";

fn specs(seq: u32, flags: u32, list: &[(u64, &str, &str)]) -> TracePacket {
    TracePacket {
        trusted_packet_sequence_id: Some(seq),
        sequence_flags: Some(flags),
        interned_data: Some(InternedData {
            gpu_specifications: list
                .iter()
                .map(
                    |(iid, name, description)| InternedGpuRenderStageSpecification {
                        iid: Some(*iid),
                        name: Some(name.to_string()),
                        description: Some(description.to_string()),
                        category: None,
                    },
                )
                .collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A stage: (start, duration, stage iid, queue iid, submission, arguments).
fn stage(seq: u32, s: (u64, u64, u64, u64, u32, &[(&str, &str)])) -> TracePacket {
    TracePacket {
        timestamp: Some(s.0),
        timestamp_clock_id: Some(64),
        trusted_packet_sequence_id: Some(seq),
        sequence_flags: Some(SEQ_NEEDS_INCREMENTAL_STATE),
        gpu_render_stage_event: Some(GpuRenderStageEvent {
            duration: Some(s.1),
            stage_iid: Some(s.2),
            hw_queue_iid: Some(s.3),
            submission_id: Some(s.4),
            gpu_id: Some(0),
            extra_data: s
                .5
                .iter()
                .map(|(n, v)| ExtraData {
                    name: Some(n.to_string()),
                    value: Some(v.to_string()),
                })
                .collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn submit(seq: u32, queue: u64, submission: u32, tid: u32) -> TracePacket {
    TracePacket {
        timestamp: Some(1),
        trusted_packet_sequence_id: Some(seq),
        vulkan_api_event: Some(VulkanApiEvent {
            vk_queue_submit: Some(VkQueueSubmit {
                tid: Some(tid),
                vk_queue: Some(queue),
                submission_id: Some(submission),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Two queues; nested labels, a render pass with a draw and a label marker; the sequence
/// cleared mid-trace and its iids reused with other meanings; a second sequence whose
/// state was never sent (a wrapped ring buffer).
fn hand_built() -> Vec<u8> {
    let cleared = SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE;
    let packets = [
        specs(7, cleared, &[(1, "q", QUEUE_A), (2, "Command Buffer", "")]),
        specs(
            7,
            2,
            &[(3, "Render Pass", ""), (4, "Draw", ""), (5, "scene", "")],
        ),
        specs(
            7,
            2,
            &[(6, "q", QUEUE_B), (7, "mark", ""), (8, "Dispatch", "")],
        ),
        specs(7, 2, &[(9, "inner", "")]),
        // Written as the layer does: in the order their ends came.
        stage(7, (110, 10, 4, 1, 1, &[("vertex_count", "3")])),
        stage(7, (105, 20, 9, 1, 1, &[("label", "inner")])),
        stage(7, (130, 0, 7, 1, 1, &[("label", "mark")])),
        stage(7, (102, 40, 3, 1, 1, &[("render_pass", "0x10")])),
        stage(7, (100, 50, 5, 1, 1, &[("label", "scene")])),
        stage(
            7,
            (90, 100, 2, 1, 1, &[("cmd", "0xc1"), ("level", "primary")]),
        ),
        submit(7, 0xa0, 1, 42),
        stage(7, (200, 5, 8, 6, 2, &[])),
        stage(7, (195, 20, 2, 6, 2, &[("cmd", "0xc2")])),
        submit(7, 0xb0, 2, 43),
        // The same iids, other names.
        specs(7, cleared, &[(1, "Dispatch", ""), (2, "q", QUEUE_B)]),
        specs(7, 2, &[(3, "Command Buffer", "")]),
        stage(7, (300, 7, 1, 2, 3, &[])),
        stage(7, (290, 30, 3, 2, 3, &[("cmd", "0xc3")])),
        stage(8, (400, 1, 1, 2, 9, &[])),
        submit(7, 0xb0, 3, 44),
    ];
    let mut bytes = Vec::new();
    for p in &packets {
        encode_packet(p, &mut bytes);
    }
    bytes
}

/// (range, begin, end, args, queue, submission, thread) of every range, in pairing order.
type Row = (String, u64, u64, String, Option<u64>, u64, Option<u64>);

fn rows(trace: &Trace) -> Vec<Row> {
    let spec = Spec::built_in();
    let paired = pair(trace, &spec);
    assert_eq!(paired.unpaired, 0);
    paired
        .ranges
        .iter()
        .map(|r| {
            let b = r.batch;
            let args = r.args.to_string();
            (
                r.range.into(),
                r.begin_ns,
                r.end_ns,
                args,
                b.queue,
                b.submission,
                b.thread,
            )
        })
        .collect()
}

#[test]
fn stages_become_the_ranges_they_were() {
    let t = perfetto::parse(&hand_built()).unwrap();
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    assert!(t.notes[0].contains("skipped 1 stage"), "{:?}", t.notes);
    let got = rows(&t);
    let a = |r: &str, b, e, args: &str| (r.into(), b, e, args.into(), Some(0xa0), 1, Some(42));
    let b = |r: &str, b, e, args: &str, s, t| (r.into(), b, e, args.into(), Some(0xb0), s, Some(t));
    let want: Vec<Row> = vec![
        a("draw", 110, 120, "vertex_count=3"),
        a("label", 105, 125, "label=\"inner\""),
        a("render_pass", 102, 142, "render_pass=0x10"),
        a("label", 100, 150, "label=\"scene\""),
        a("cmd_buffer", 90, 190, "cmd=0xc1, level=primary"),
        b("dispatch", 200, 205, "", 2, 43),
        b("cmd_buffer", 195, 215, "cmd=0xc2", 2, 43),
        b("dispatch", 300, 307, "", 3, 44),
        b("cmd_buffer", 290, 320, "cmd=0xc3", 3, 44),
    ];
    assert_eq!(got, want);
    assert_eq!(t.batches.len(), 3);
    let numbers: Vec<u64> = t.batches.iter().map(|b| b.number).collect();
    assert_eq!(numbers, [1, 2, 3]);
    assert!(
        t.batches.iter().all(|b| b.frame == 0),
        "stages of older layers carry no frame: frame 0"
    );
    // The zero-length label stage is the marker, in its place among the events.
    let names: Vec<&str> = t.batches[0]
        .events
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "start_cmd_buffer",
            "begin_label",
            "start_render_pass",
            "begin_label",
            "start_draw",
            "end_draw",
            "end_label",
            "insert_label",
            "end_render_pass",
            "end_label",
            "end_cmd_buffer",
        ]
    );
    assert_eq!(t.batches[0].events[7].args, "label=\"mark\"");
}

#[test]
fn a_trace_cut_anywhere_is_read_as_far_as_it_goes() {
    let bytes = hand_built();
    let whole = perfetto::parse(&bytes).unwrap();
    let spec = StageSpec::built_in();
    let mut cut_notes = 0;
    for cut in 1..bytes.len() {
        let t = perfetto::parse_with(&bytes[..cut], &spec).unwrap();
        assert!(t.batches.len() <= whole.batches.len());
        cut_notes += t.notes.iter().filter(|n| n.contains("cut short")).count();
    }
    assert!(
        cut_notes > bytes.len() / 2,
        "most cuts fall inside a packet"
    );
    // Cut inside the last stage packet: the first two batches are whole.
    let last_stage = bytes.len() - 40;
    let t = perfetto::parse(&bytes[..last_stage]).unwrap();
    assert!(
        t.notes.iter().any(|n| n.contains("cut short")),
        "{:?}",
        t.notes
    );
    assert_eq!(rows(&t)[..7], rows(&whole)[..7]);
}

const TXT: &str = "\
BATCH 1: device=0 queue=0xa0 frame=0 submission=1 cmdbufs=1 queries=2 thread=42
0000000000001000        +0: start_cmd_buffer: cmd=0xc1, level=primary, usage=one_time_submit
0000000000001000        +0:    begin_label: label=\"say \\\"a, b=c\\\"\"
0000000000001010       +10:       begin_label: label=\"inner\"
0000000000001010        +0:          start_render_pass: render_pass=0x10, framebuffer=0xf0, load_op=clear
0000000000001020       +10:             start_draw: vertex_count=3, instance_count=1
0000000000001030       +10:             end_draw
0000000000001030        +0:             start_draw: vertex_count=3, instance_count=2
0000000000001040       +10:             end_draw
0000000000001045        +5:             insert_label: label=\"mark\"
0000000000001050        +5:          end_render_pass
0000000000001050        +0:       end_label
0000000000001060       +10:    end_label
0000000000001070       +10: end_cmd_buffer: cmd=0xc1
ELAPSED: 70 ns
BATCH 2: device=0 queue=0xb0 frame=1 submission=2 cmdbufs=1 queries=2 thread=43
0000000000002000        +0: start_cmd_buffer: cmd=0xc2, level=primary, usage=none
0000000000002010       +10:    start_dispatch: group_count_x=64, group_count_y=1, group_count_z=1
0000000000002010        +0:    end_dispatch
0000000000002020       +10: end_cmd_buffer: cmd=0xc2
ELAPSED: 20 ns
BATCH 1: device=1 queue=0xa1 frame=0 submission=1 cmdbufs=1 queries=2
0000000000003000        +0: start_cmd_buffer: cmd=0xd1, level=primary, usage=none
0000000000003020       +20: end_cmd_buffer: cmd=0xd1
ELAPSED: 20 ns
";

#[test]
fn written_traces_read_back_with_the_same_ranges() {
    let original = txt::parse(TXT).unwrap();
    let mut bytes = Vec::new();
    crate::trace::perfetto_write::write(&original, &StageSpec::built_in(), &mut bytes).unwrap();
    assert!(perfetto::detect(&bytes));
    let back = perfetto::parse(&bytes).unwrap();
    assert!(back.notes.is_empty(), "{:?}", back.notes);
    let mut want = rows(&original);
    let mut got = rows(&back);
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert!(got.iter().any(|r| r.3 == "label=\"say \\\"a, b=c\\\"\""));
    let devices: Vec<(u32, u64)> = back.batches.iter().map(|b| (b.device, b.number)).collect();
    assert_eq!(devices, [(0, 1), (0, 2), (1, 1)]);
    let frames: Vec<u64> = back.batches.iter().map(|b| b.frame).collect();
    assert_eq!(frames, [0, 1, 0], "each batch's frame, not an argument");
    let marker = back.batches[0]
        .events
        .iter()
        .find(|e| e.name == "insert_label");
    assert_eq!(
        marker.map(|e| (e.ns, e.args.as_str())),
        Some((1045, "label=\"mark\""))
    );
}

fn snapshot(seq: u32, boottime: u64, gpu: u64) -> TracePacket {
    let clock = |id, ts| Clock {
        clock_id: Some(id),
        timestamp: Some(ts),
    };
    TracePacket {
        trusted_packet_sequence_id: Some(seq),
        clock_snapshot: Some(ClockSnapshot {
            clocks: vec![clock(CLOCK_BOOTTIME, boottime), clock(64, gpu)],
        }),
        ..Default::default()
    }
}

/// The submit packet's CPU time (boottime) lands on the device's clock by the sequence's
/// latest snapshot; without a snapshot there is none.
#[test]
fn the_submit_time_is_moved_onto_the_gpu_clock() {
    let cleared = SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE;
    let at = |mut p: TracePacket, ns: u64| {
        p.timestamp = Some(ns);
        p.timestamp_clock_id = Some(CLOCK_BOOTTIME);
        p
    };
    let packets = [
        specs(7, cleared, &[(1, "q", QUEUE_A), (2, "Command Buffer", "")]),
        stage(7, (90, 100, 2, 1, 1, &[("cmd", "0xc1")])),
        submit(7, 0xa0, 1, 42),
        snapshot(7, 1_000_000, 500),
        stage(7, (600, 10, 2, 1, 2, &[("cmd", "0xc2")])),
        at(submit(7, 0xa0, 2, 42), 1_000_040),
        snapshot(7, 2_000_000, 1_000_300),
        stage(7, (1_000_900, 10, 2, 1, 3, &[("cmd", "0xc3")])),
        at(submit(7, 0xa0, 3, 42), 2_000_100),
    ];
    let mut bytes = Vec::new();
    for p in &packets {
        encode_packet(p, &mut bytes);
    }
    let t = perfetto::parse(&bytes).unwrap();
    let submits: Vec<Option<u64>> = t.batches.iter().map(|b| b.submit_ns).collect();
    assert_eq!(submits, [None, Some(540), Some(1_000_400)]);
}

/// The layer's last `extra_data`, `frame`, is the batch's frame and not an argument; one
/// that is not a number stays an argument, with a note.
#[test]
fn the_frame_extra_data_is_the_batchs_frame() {
    let cleared = SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE;
    let packets = [
        specs(7, cleared, &[(1, "q", QUEUE_A), (2, "Command Buffer", "")]),
        stage(7, (90, 100, 2, 1, 1, &[("cmd", "0xc1"), ("frame", "7")])),
        submit(7, 0xa0, 1, 42),
        stage(7, (300, 10, 2, 1, 2, &[("cmd", "0xc2")])),
        submit(7, 0xa0, 2, 42),
        stage(7, (500, 10, 2, 1, 3, &[("cmd", "0xc3"), ("frame", "x")])),
        submit(7, 0xa0, 3, 42),
    ];
    let mut bytes = Vec::new();
    for p in &packets {
        encode_packet(p, &mut bytes);
    }
    let t = perfetto::parse(&bytes).unwrap();
    let frames: Vec<u64> = t.batches.iter().map(|b| b.frame).collect();
    assert_eq!(frames, [7, 0, 0]);
    let args: Vec<String> = rows(&t).into_iter().map(|r| r.3).collect();
    assert_eq!(args, ["cmd=0xc1", "cmd=0xc2", "cmd=0xc3, frame=x"]);
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    assert!(t.notes[0].contains("1 stage events carry a `frame` that is not a frame number"));
}

/// A stage's GPU counters (statistics, hardware counters, `partial`) go on its range's end
/// event, as the layer's text formats have them; its other arguments stay on the begin.
#[test]
fn a_stages_counters_go_on_its_end_event() {
    let cleared = SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE;
    let args: &[(&str, &str)] = &[
        ("cmd", "0xc1"),
        ("compute_invocations", "64"),
        ("perf_draws", "2"),
        ("partial", "1"),
    ];
    let packets = [
        specs(7, cleared, &[(1, "q", QUEUE_A), (2, "Command Buffer", "")]),
        stage(7, (90, 100, 2, 1, 1, args)),
        submit(7, 0xa0, 1, 42),
    ];
    let mut bytes = Vec::new();
    for p in &packets {
        encode_packet(p, &mut bytes);
    }
    let t = perfetto::parse(&bytes).unwrap();
    let events: Vec<(&str, &str)> = t.batches[0]
        .events
        .iter()
        .map(|e| (e.name.as_str(), e.args.as_str()))
        .collect();
    assert_eq!(
        events,
        [
            ("start_cmd_buffer", "cmd=0xc1"),
            (
                "end_cmd_buffer",
                "compute_invocations=64, perf_draws=2, partial=1"
            )
        ]
    );
}
