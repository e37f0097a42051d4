use super::*;

const SAMPLE: &str = "\
BATCH 1: device=0 queue=0x55d0c8f0a1b0 frame=0 submission=1 cmdbufs=1 queries=4 thread=4242
+----- NS -----+ +-- Δ --+  +----- MSG -----
0000123456789012        +0: start_cmd_buffer: cmd=0x55d0c8f0b000, level=primary, usage=one_time_submit
0000123456790000      +988:    begin_label: label=\"say \\\"hi\\\", twice\", depth=1
0000123456780000    -10000:    end_label
0000123456792356     +3344: end_cmd_buffer: cmd=0x55d0c8f0b000
ELAPSED: 3344 ns
END OF FRAME 0
END OF TRACE: device=0 batches=1 events=4 dropped=0
";

#[test]
fn parses_the_documented_format() {
    let t = parse_trace(SAMPLE).unwrap();
    assert_eq!(t.batches.len(), 1);
    let b = &t.batches[0];
    assert_eq!(
        (b.number, b.device, b.frame, b.submission, b.cmdbufs),
        (1, 0, 0, 1, 1)
    );
    assert_eq!(b.queue, "0x55d0c8f0a1b0");
    assert_eq!(b.events.len(), 4);
    assert_eq!(b.events[0].arg("usage"), Some("one_time_submit"));
    assert_eq!(b.events[1].depth, 1);
    assert_eq!(b.events[1].arg("label"), Some("say \"hi\", twice"));
    assert_eq!(b.events[1].arg("depth"), Some("1"));
    assert_eq!(b.events[2].delta, -10000);
    assert!(b.events[2].args.is_empty());
    assert_eq!(b.elapsed_ns, 3344);
    assert_eq!(t.frames_ended(), vec![0]);
    assert_eq!(
        t.ends,
        vec![EndOfTrace {
            device: 0,
            batches: 1,
            events: 4,
            dropped: 0
        }]
    );
    assert_eq!(
        t.items,
        vec![Item::Batch(0), Item::EndOfFrame(0), Item::EndOfTrace(0)]
    );
}

#[test]
fn wide_deltas_and_values_with_equals_signs() {
    // `{:+9}` grows past nine characters for deltas of a second or more.
    let text = "\
BATCH 2: device=1 queue=0x1 frame=7 submission=9 cmdbufs=1 queries=2 thread=4242
+----- NS -----+ +-- Δ --+  +----- MSG -----
0000000000000000        +0: start_cmd_buffer: cmd=0x2, level=secondary, usage=one_time_submit|simultaneous_use
0000012345678901 +12345678901: end_cmd_buffer: cmd=0x2, note=a=b
ELAPSED: 12345678901 ns
";
    let t = parse_trace(text).unwrap();
    let b = &t.batches[0];
    assert_eq!((b.number, b.device, b.frame, b.submission), (2, 1, 7, 9));
    assert_eq!(b.events[1].delta, 12_345_678_901);
    assert_eq!(b.events[1].arg("note"), Some("a=b"));
    assert_eq!(
        b.events[0].arg("usage"),
        Some("one_time_submit|simultaneous_use")
    );
    assert!(t.ends.is_empty() && t.frames_ended().is_empty());
}

#[test]
fn lines_out_of_place_are_errors() {
    // An event outside a batch.
    let event = "0000123456789012        +0: start_cmd_buffer: cmd=0x1\n";
    assert!(parse_trace(event).is_err());
    // A frame's end inside an open batch.
    let inside = SAMPLE.replace(
        "ELAPSED: 3344 ns\nEND OF FRAME 0\n",
        "END OF FRAME 0\nELAPSED: 3344 ns\n",
    );
    assert!(parse_trace(&inside).is_err());
    // A batch header without its column header.
    let no_columns = SAMPLE.replace("+----- NS -----+ +-- Δ --+  +----- MSG -----\n", "");
    assert!(parse_trace(&no_columns).is_err());
    // An unterminated quoted value.
    assert!(parse_args("label=\"open, depth=1").is_err());
    // Blank lines are fine.
    assert!(parse_trace(&SAMPLE.replace('\n', "\n\n")).is_ok());
}

#[test]
fn stray_lines_are_errors() {
    let e = parse_trace("hello\n").unwrap_err();
    assert!(e.contains("line 1"), "{e}");
    let cut = SAMPLE.replace("ELAPSED: 3344 ns\n", "");
    assert!(parse_trace(&cut).is_err());
    let bad_indent = SAMPLE.replace("+988:    begin", "+988:  begin");
    assert!(parse_trace(&bad_indent).is_err());
}

#[test]
fn header_lines_are_read_strictly() {
    let text = "TRACE ORIGIN: device=0, utrace=\"0.1.0 (commit 1a2b)\", pid=42\n\
                TRACE SETTINGS: device=0, format=\"txt\"\n";
    let t = parse_trace(text).unwrap();
    assert_eq!(t.items, [Item::Header(0), Item::Header(1)]);
    assert_eq!(t.header(0, "utrace"), Some("0.1.0 (commit 1a2b)"));
    assert_eq!(t.header(0, "format"), Some("txt"));
    assert_eq!(t.header(1, "format"), None);
    assert!(parse_trace("TRACE OTHER: device=0\n").is_err());
    assert!(parse_trace("TRACE ORIGIN: utrace=\"x\"\n").is_err());
}
