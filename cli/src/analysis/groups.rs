//! What ranges are grouped by: the key of a range under each `--by` (shared by `report`
//! and `diff`).

use crate::analysis::ranges::Range;
use utrace_format::text_args;

/// What ranges are grouped by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// The range's kind: `cmd_buffer`, `render_pass`, `draw`, `label`, ...; every range of
    /// the trace is counted once.
    Tracepoint,
    /// The application's debug label (label ranges only).
    Label,
    /// Render pass instances, by render pass (handle and size) or, for dynamic rendering,
    /// by size and color format.
    #[value(name = "render_pass", alias = "render-pass")]
    RenderPass,
    /// Draws and dispatches, by the pipeline bound when they were recorded (its name when
    /// the application gave it one, else its handle).
    Pipeline,
    /// Primary command buffers, by the thread that recorded them.
    Thread,
    /// Primary command buffers, by the frame they were submitted in.
    Frame,
}

impl By {
    /// The heading of the key column.
    pub fn heading(self) -> &'static str {
        match self {
            By::Tracepoint => "range",
            By::Label => "label",
            By::RenderPass => "render pass",
            By::Pipeline => "pipeline",
            By::Thread => "recording thread",
            By::Frame => "frame",
        }
    }
}

/// The key of `r` under `by`; `None` when the range is not in any group of it.
pub fn key(r: &Range<'_>, by: By) -> Option<String> {
    let arg = |name: &str| {
        text_args::parse(r.args)
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    };
    match by {
        By::Tracepoint => Some(r.range.to_string()),
        By::Label if r.range == "label" => arg("label"),
        By::RenderPass if r.range == "render_pass" => Some(format!(
            "render pass {} {}x{}",
            arg("render_pass")?,
            arg("width")?,
            arg("height")?
        )),
        By::RenderPass if r.range == "rendering" => Some(format!(
            "rendering {}x{} {}",
            arg("width")?,
            arg("height")?,
            arg("color_format")?
        )),
        By::Pipeline => match arg("pipeline_name") {
            Some(name) => Some(name),
            None => arg("pipeline").filter(|p| p != "0x0"),
        },
        By::Thread if primary(r) => {
            let thread = arg("thread").or_else(|| r.batch.thread.map(|t| t.to_string()))?;
            Some(format!("thread {thread}"))
        }
        By::Frame if primary(r) => Some(match r.batch.device {
            0 => format!("frame {}", r.batch.frame),
            d => format!("device {d} frame {}", r.batch.frame),
        }),
        _ => None,
    }
}

/// A primary command buffer's range: secondaries run inside one, and would count twice.
fn primary(r: &Range<'_>) -> bool {
    r.range == "cmd_buffer" && !r.args.contains("level=secondary")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Batch;

    fn range<'t>(range: &'t str, args: &'t str, batch: &'t Batch) -> Range<'t> {
        Range {
            range,
            begin_ns: 0,
            end_ns: 10,
            args,
            end_args: "",
            batch,
        }
    }

    #[test]
    fn keys_by_each_grouping() {
        let batch = Batch {
            frame: 4,
            thread: Some(77),
            ..Batch::default()
        };
        let b = &batch;
        let draw = range("draw", "vertex_count=3, pipeline=0x5c00", b);
        let named = range(
            "dispatch",
            "group_count_x=1, pipeline=0x5d00, pipeline_name=\"blur \\\"x\\\"\"",
            b,
        );
        let label = range("label", "label=\"a, \\\"b\\\"\"", b);
        let pass = range(
            "render_pass",
            "render_pass=0xaa, framebuffer=0xbb, width=64, height=32",
            b,
        );
        let primary = range("cmd_buffer", "cmd=0x1, level=primary, thread=12", b);
        let old = range("cmd_buffer", "cmd=0x1, level=primary", b);
        let secondary = range("cmd_buffer", "cmd=0x2, level=secondary, thread=12", b);
        assert_eq!(key(&draw, By::Pipeline).as_deref(), Some("0x5c00"));
        assert_eq!(key(&named, By::Pipeline).as_deref(), Some("blur \"x\""));
        assert_eq!(key(&label, By::Label).as_deref(), Some("a, \"b\""));
        assert_eq!(
            key(&pass, By::RenderPass).as_deref(),
            Some("render pass 0xaa 64x32")
        );
        assert_eq!(key(&primary, By::Thread).as_deref(), Some("thread 12"));
        assert_eq!(
            key(&old, By::Thread).as_deref(),
            Some("thread 77"),
            "older traces: the submitting thread"
        );
        assert_eq!(key(&secondary, By::Thread), None);
        assert_eq!(key(&primary, By::Frame).as_deref(), Some("frame 4"));
        assert_eq!(key(&draw, By::Frame), None);
        assert_eq!(key(&pass, By::Pipeline), None);
    }
}
