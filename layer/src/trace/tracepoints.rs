//! The tracepoints, generated from `tracepoints/tracepoints.toml` by the layer's build script:
//! the `TOGGLES` and `TRACEPOINTS` tables, one payload struct per tracepoint, the `Payload`
//! enum and one `trace_*` function per tracepoint, which the hooks call. Nothing else knows a
//! payload's layout; this file only adds what is the same for every tracepoint.

use ash::vk;

use super::args;
use super::record::command_trace;
use super::record::command_trace::Bracket;
use super::record::recorder::Recorder;
pub use super::tracepoint::{
    Category, FieldInfo, LabelInput, LabelRef, RangeKind, Toggle, TracepointInfo, ValueKind,
};

include!(concat!(env!("OUT_DIR"), "/tracepoints.rs"));

/// The trace of one command buffer, for this spec's payloads.
pub type CommandTrace = command_trace::CommandTrace<{ Payload::MAX_WORDS }>;

impl Payload {
    pub fn info(&self) -> &'static TracepointInfo {
        &TRACEPOINTS[self.id()]
    }
}

/// Applies a `GPU_TRACEPOINTS` list (`-draw,+barrier,...`; a bare name means `+`) over the
/// spec's defaults. Returns the names that match no range or marker; the rest still apply.
pub fn apply_toggles(list: &str) -> Vec<String> {
    let mut unknown = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (on, name) = match item.as_bytes()[0] {
            b'-' => (false, &item[1..]),
            b'+' => (true, &item[1..]),
            _ => (true, item),
        };
        match TOGGLES.iter().find(|t| t.name == name) {
            Some(toggle) => toggle.set(on),
            // A sign without a name is shown as written.
            None if name.is_empty() => unknown.push(item.to_string()),
            None => unknown.push(name.to_string()),
        }
    }
    unknown
}

/// The names `GPU_TRACEPOINTS` understands.
pub fn toggle_names() -> Vec<&'static str> {
    TOGGLES.iter().map(|t| t.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_and_end_of_a_range_share_a_toggle() {
        for tp in &TRACEPOINTS {
            let begin = TRACEPOINTS
                .iter()
                .find(|b| b.range == tp.range && b.kind != RangeKind::End)
                .expect("every range has a begin");
            assert_eq!(tp.toggle, begin.toggle, "{}", tp.name);
            assert_eq!(TOGGLES[tp.toggle].name, tp.range);
        }
    }

    #[test]
    fn toggles_apply_over_defaults_and_report_unknown_names() {
        // Runs alone in this test binary's use of the barrier and query toggles.
        let barrier = TOGGLES.iter().find(|t| t.name == "barrier").unwrap();
        let query = TOGGLES.iter().find(|t| t.name == "query").unwrap();
        assert!(!barrier.default && !query.default);
        let unknown = apply_toggles(" +barrier, nonsense ,-query,,+");
        assert_eq!(unknown, vec!["nonsense".to_string(), "+".to_string()]);
        assert!(barrier.is_enabled());
        assert!(!query.is_enabled());
        apply_toggles("-barrier");
        assert!(!barrier.is_enabled());
    }

    #[test]
    fn printers() {
        let mut s = String::new();
        Payload::StartCmdBuffer(StartCmdBuffer {
            cmd: 0x1234,
            level: vk::CommandBufferLevel::PRIMARY,
            usage: vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT
                | vk::CommandBufferUsageFlags::SIMULTANEOUS_USE,
            thread: 77,
        })
        .write_args(&mut s, &[]);
        assert_eq!(
            s,
            "cmd=0x1234, level=primary, usage=one_time_submit|simultaneous_use, thread=77"
        );
        s.clear();
        Payload::EndCmdBuffer(EndCmdBuffer { cmd: 0xff }).write_args(&mut s, &[]);
        assert_eq!(s, "cmd=0xff");
    }

    /// The generated `write_args` names every field of the tracepoint's table, in order,
    /// with the value its own printer writes.
    #[test]
    fn write_args_follows_the_field_table() {
        for (id, tp) in TRACEPOINTS.iter().enumerate() {
            let words: Vec<u32> = (0..Payload::WORDS[id]).map(|i| i as u32 % 3).collect();
            let payload = Payload::decode(id, &words).expect(tp.name);
            let mut want = String::new();
            for (i, field) in tp.fields.iter().enumerate() {
                if i > 0 {
                    want.push_str(", ");
                }
                want.push_str(field.name);
                want.push('=');
                payload.write_arg(i, &mut want, b"label");
            }
            let mut got = String::new();
            payload.write_args(&mut got, b"label");
            assert_eq!(got, want, "{}", tp.name);
        }
    }

    /// Every tracepoint's words come back as they went: a payload decoded from words of
    /// 0 and 1 (a value every argument type keeps) encodes to the same words, so each field
    /// reads the words it was written to.
    #[test]
    fn every_payload_round_trips_through_its_words() {
        for (id, tp) in TRACEPOINTS.iter().enumerate() {
            let n = Payload::WORDS[id];
            for pattern in [[1u32, 0, 0, 1, 1, 0, 1], [0, 1, 1, 0, 0, 1, 0]] {
                let words: Vec<u32> = (0..n).map(|i| pattern[i % pattern.len()]).collect();
                let payload = Payload::decode(id, &words).expect(tp.name);
                assert_eq!(payload.id(), id, "{}", tp.name);
                let (back, len) = payload.encode();
                assert_eq!(&back[..len], &words[..], "{}", tp.name);
            }
            assert!(n <= Payload::MAX_WORDS, "{}", tp.name);
            if n > 0 {
                assert_eq!(
                    Payload::decode(id, &vec![0; n - 1]),
                    None,
                    "{}: too few words",
                    tp.name
                );
            }
        }
        assert_eq!(
            Payload::decode(TRACEPOINTS.len(), &[0; Payload::MAX_WORDS]),
            None
        );
    }

    /// Values wider than a word, negative ones and flags keep every bit.
    #[test]
    fn wide_and_signed_values_keep_their_bits() {
        let pass = Payload::StartRenderPass(StartRenderPass {
            render_pass: 0xdead_beef_0000_0001,
            framebuffer: u64::MAX - 1,
            width: 1920,
            height: 1080,
            attachments: 3,
            subpasses: 2,
            color_format: vk::Format::B8G8R8A8_SRGB,
            depth_format: vk::Format::D32_SFLOAT,
            load_op: vk::AttachmentLoadOp::NONE_EXT,
            store_op: vk::AttachmentStoreOp::NONE,
            samples: vk::SampleCountFlags::TYPE_4,
            view_mask: 0x8000_0000_0000_0003,
            contents: vk::SubpassContents::SECONDARY_COMMAND_BUFFERS,
        });
        let indexed = Payload::StartDrawIndexed(StartDrawIndexed {
            index_count: u32::MAX,
            instance_count: 7,
            first_index: 9,
            vertex_offset: -123_456,
            first_instance: 1,
            pipeline: 0xdead_beef_0000_0001,
        });
        for payload in [pass, indexed] {
            let (words, len) = payload.encode();
            assert_eq!(Payload::decode(payload.id(), &words[..len]), Some(payload));
        }
    }
}
