//! The layer's man page, `utrace-layer(7)`: how to switch it on, and each of its settings
//! as its manifest lists them for vkconfig (key, variable, type, default, description, the
//! values of a choice). Made from the manifest itself, which a unit test of the layer
//! holds to the layer's settings table, so the page says what the layer reads.

use std::fmt::Write;

use serde_json::Value;

/// The explicit manifest, as the package installs it (but for its library path).
const MANIFEST: &str = include_str!("../../../manifest/VkLayer_utrace.json");

/// The page in roff, for the build `version` names.
pub fn page(version: &str) -> Result<String, String> {
    let manifest: Value =
        serde_json::from_str(MANIFEST).map_err(|e| format!("the layer's manifest: {e}"))?;
    let settings = manifest["layer"]["features"]["settings"]
        .as_array()
        .ok_or("the layer's manifest lists no settings")?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        ".TH UTRACE-LAYER 7 \"\" \"utrace {}\" \"utrace\"",
        escape(version)
    );
    out.push_str(".SH NAME\nutrace-layer \\- VK_LAYER_utrace, GPU timestamps of any Vulkan application's work\n");
    out.push_str(".SH SYNOPSIS\n.B GPU_TRACE=1\n.I application\n.br\n.B VK_INSTANCE_LAYERS=VK_LAYER_utrace GPU_TRACE=1\n.I application\n");
    out.push_str(".SH DESCRIPTION\nThe layer times the command buffers, render passes, draws, dispatches, copies and debug labels an application records, without stalling it, and writes them as text, JSON, CSV or Perfetto GPU render stages. Its implicit manifest loads it whenever\n.B GPU_TRACE=1\nis set (never with\n.BR UTRACE_DISABLE=1 );\nits explicit one when the application or\n.B VK_INSTANCE_LAYERS\nnames it.\n");
    out.push_str(".SH SETTINGS\nEach setting is given by its variable, by vkconfig or a\n.I vk_layer_settings.txt\n(lines\n.IR utrace.key \" = \" value ),\nor by the application through VK_EXT_layer_settings. The shorter variables Mesa's u_trace reads (GPU_TRACE, GPU_TRACEFILE, GPU_TRACE_FORMAT, GPU_TRACEPOINTS, GPU_TRACE_COUNTERS) are named in each description.\n");
    for s in settings {
        let text = |k: &str| s[k].as_str().unwrap_or_default();
        let _ = writeln!(
            out,
            ".TP\n.B {}\n.RI ( {} ,",
            escape(text("env")),
            escape(text("key"))
        );
        let _ = writeln!(
            out,
            "{}, default {})",
            escape(&text("type").to_lowercase()),
            escape(&default_of(&s["default"]))
        );
        let _ = writeln!(out, "{}", escape(text("description")));
        for flag in s["flags"].as_array().into_iter().flatten() {
            let value = |k: &str| flag[k].as_str().unwrap_or_default();
            let _ = writeln!(
                out,
                ".RS\n.TP\n.B {}\n{}\n.RE",
                escape(value("key")),
                escape(value("description"))
            );
        }
    }
    out.push_str(".SH FILES\n.TP\n.I /usr/share/vulkan/explicit_layer.d/VkLayer_utrace.json\n.TQ\n.I /usr/share/vulkan/implicit_layer.d/VkLayer_utrace_implicit.json\nThe manifests, as the package installs them.\n");
    out.push_str(".SH SEE ALSO\n.BR utrace (1)\n");
    Ok(out)
}

fn default_of(v: &Value) -> String {
    match v {
        Value::String(s) if s.is_empty() => "none".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `text` safe in roff: backslashes escaped, a line that starts with a control character
/// made plain text.
fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e");
    text.lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_page_lists_every_setting_and_escapes_roff() {
        let page = super::page("0.1.0 (commit 1)").unwrap();
        for key in [
            "VK_UTRACE_TRACE_FILE",
            "VK_UTRACE_COUNTERS",
            "VK_UTRACE_CONTROL",
        ] {
            assert!(page.contains(key), "{key}");
        }
        assert_eq!(super::escape(".x\\y"), "\\&.x\\ey");
    }
}
