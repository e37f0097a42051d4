//! `utrace counters`: the hardware counters each Vulkan device offers through
//! VK_KHR_performance_query (radv, anv, turnip and NVIDIA's driver have it; Lavapipe does
//! not), per queue family, with their units, scopes, storage, descriptions and the passes
//! they need; "none" for a device without the extension. The names are those
//! `GPU_TRACE_COUNTERS=perf:NAME,...` will take.

mod device_counters;

use std::fmt::Write;

use ash::vk;
use serde_json::json;

use device_counters::{Device, Family};

/// `utrace counters`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// One JSON object instead of the tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> Result<(), String> {
    let devices = device_counters::devices()?;
    if args.json {
        crate::stdout::print(&format!("{}\n", json_of(&devices)))
    } else {
        crate::stdout::print_text(&text(&devices))
    }
}

/// The tables: per device, per queue family with counters, a row per counter.
fn text(devices: &[Device]) -> String {
    let mut out = String::new();
    if devices.is_empty() {
        out.push_str("no Vulkan device\n");
    }
    for (i, d) in devices.iter().enumerate() {
        let Some(families) = &d.families else {
            let _ = writeln!(
                out,
                "device {i}: {}: none (the driver has no VK_KHR_performance_query)",
                d.name
            );
            continue;
        };
        let _ = writeln!(out, "device {i}: {} (VK_KHR_performance_query)", d.name);
        for f in families {
            family_text(f, &mut out);
        }
    }
    out
}

fn family_text(f: &Family, out: &mut String) {
    let _ = write!(
        out,
        "  queue family {} ({}): ",
        f.index,
        queue_kinds(f.flags)
    );
    if f.counters.is_empty() {
        out.push_str("none\n");
        return;
    }
    let _ = writeln!(
        out,
        "{}, {} together",
        plural(f.counters.len() as u32, "counter"),
        plural(f.passes_all, "pass")
    );
    let width = f
        .counters
        .iter()
        .map(|c| c.name.chars().count())
        .chain([7])
        .max()
        .unwrap_or(7)
        .min(40);
    let _ = writeln!(
        out,
        "    {:<width$}  {:<14} {:<12} {:<14} {:<8} {:>6}  description",
        "counter", "category", "unit", "scope", "storage", "passes"
    );
    for c in &f.counters {
        let _ = writeln!(
            out,
            "    {:<width$}  {:<14} {:<12} {:<14} {:<8} {:>6}  {}",
            c.name,
            c.category,
            unit(c.unit),
            scope(c.scope),
            storage(c.storage),
            c.passes,
            c.description
        );
    }
}

fn plural(n: u32, word: &str) -> String {
    let ending = if word.ends_with('s') { "es" } else { "s" };
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}{ending}")
    }
}

fn queue_kinds(flags: vk::QueueFlags) -> String {
    let kinds: Vec<&str> = [
        (vk::QueueFlags::GRAPHICS, "graphics"),
        (vk::QueueFlags::COMPUTE, "compute"),
        (vk::QueueFlags::TRANSFER, "transfer"),
    ]
    .iter()
    .filter(|(f, _)| flags.contains(*f))
    .map(|(_, n)| *n)
    .collect();
    if kinds.is_empty() {
        "other".into()
    } else {
        kinds.join(", ")
    }
}

fn unit(u: vk::PerformanceCounterUnitKHR) -> &'static str {
    use vk::PerformanceCounterUnitKHR as U;
    match u {
        U::GENERIC => "generic",
        U::PERCENTAGE => "percentage",
        U::NANOSECONDS => "ns",
        U::BYTES => "bytes",
        U::BYTES_PER_SECOND => "bytes/s",
        U::KELVIN => "kelvin",
        U::WATTS => "watts",
        U::VOLTS => "volts",
        U::AMPS => "amps",
        U::HERTZ => "hertz",
        U::CYCLES => "cycles",
        _ => "other",
    }
}

fn scope(s: vk::PerformanceCounterScopeKHR) -> &'static str {
    use vk::PerformanceCounterScopeKHR as S;
    match s {
        S::COMMAND_BUFFER => "command buffer",
        S::RENDER_PASS => "render pass",
        S::COMMAND => "command",
        _ => "other",
    }
}

fn storage(s: vk::PerformanceCounterStorageKHR) -> &'static str {
    use vk::PerformanceCounterStorageKHR as S;
    match s {
        S::INT32 => "int32",
        S::INT64 => "int64",
        S::UINT32 => "uint32",
        S::UINT64 => "uint64",
        S::FLOAT32 => "float32",
        S::FLOAT64 => "float64",
        _ => "other",
    }
}

/// `{devices: [{index, name, performance_query, families: [{index, flags, passes_all, counters:
/// [{name, category, description, unit, scope, storage, passes}]}]}]}`.
fn json_of(devices: &[Device]) -> serde_json::Value {
    let devices: Vec<serde_json::Value> = devices
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let families: Vec<serde_json::Value> = d
                .families
                .iter()
                .flatten()
                .map(|f| {
                    let counters: Vec<serde_json::Value> = f
                        .counters
                        .iter()
                        .map(|c| {
                            json!({
                                "name": c.name, "category": c.category,
                                "description": c.description, "unit": unit(c.unit),
                                "scope": scope(c.scope), "storage": storage(c.storage),
                                "passes": c.passes,
                            })
                        })
                        .collect();
                    json!({"index": f.index, "flags": queue_kinds(f.flags),
                           "passes_all": f.passes_all, "counters": counters})
                })
                .collect();
            json!({"index": i, "name": d.name, "performance_query": d.families.is_some(),
                   "families": families})
        })
        .collect();
    json!({ "devices": devices })
}

#[cfg(test)]
mod tests {
    use super::device_counters::Counter;
    use super::*;

    #[test]
    fn each_device_says_its_counters_or_none() {
        let counter = Counter {
            name: "Draws".into(),
            category: "Work".into(),
            description: "draw commands".into(),
            unit: vk::PerformanceCounterUnitKHR::GENERIC,
            scope: vk::PerformanceCounterScopeKHR::RENDER_PASS,
            storage: vk::PerformanceCounterStorageKHR::UINT64,
            passes: 1,
        };
        let devices = [
            Device {
                name: "gpu".into(),
                families: Some(vec![
                    Family {
                        index: 0,
                        flags: vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE,
                        counters: vec![counter],
                        passes_all: 1,
                    },
                    Family {
                        index: 1,
                        flags: vk::QueueFlags::TRANSFER,
                        counters: vec![],
                        passes_all: 0,
                    },
                ]),
            },
            Device {
                name: "llvmpipe".into(),
                families: None,
            },
        ];
        let t = text(&devices);
        assert!(t.contains("device 0: gpu (VK_KHR_performance_query)\n  queue family 0 (graphics, compute): 1 counter, 1 pass together"), "{t}");
        assert!(t.contains("    Draws    Work           generic      render pass    uint64        1  draw commands"), "{t}");
        assert!(t.contains("  queue family 1 (transfer): none\n"), "{t}");
        assert!(
            t.contains("device 1: llvmpipe: none (the driver has no VK_KHR_performance_query)"),
            "{t}"
        );
        let j = json_of(&devices);
        assert_eq!(
            j["devices"][0]["families"][0]["counters"][0]["scope"],
            "render pass"
        );
        assert_eq!(j["devices"][1]["performance_query"], false);
    }
}
