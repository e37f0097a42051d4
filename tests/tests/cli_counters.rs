//! `utrace counters`: the hardware counters of VK_KHR_performance_query, per device and
//! queue family. Lavapipe has none; the fault layer's emulation (`UTRACE_PERF_QUERY=1`)
//! offers five, one of which needs a pass of its own.

use serde_json::Value;
use utrace_tests::harness::{run_application, utrace_exe, TempDir};

/// `utrace counters ARGS` with `layers` enabled and `envs` set: status, stdout, stderr.
fn utrace_counters(
    args: &[&str],
    layers: &str,
    envs: &[(&str, &str)],
) -> (Option<i32>, String, String) {
    let dir = TempDir::new("cli-counters");
    let exe = utrace_exe();
    let all: Vec<&str> = ["counters"].iter().chain(args).copied().collect();
    let out = run_application(&dir, exe.to_str().unwrap(), &all, layers, envs);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_driver_without_the_extension_has_none() {
    let (code, out, err) = utrace_counters(&[], "", &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("device 0: llvmpipe")
            && out.contains(": none (the driver has no VK_KHR_performance_query)"),
        "{out}"
    );
    let (_, out, _) = utrace_counters(&["--json"], "", &[]);
    let v: Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(v["devices"][0]["performance_query"], false, "{v}");
    // The driver and its version follow the device's name: Lavapipe 22.3 and 25.0 are both
    // llvmpipe.
    assert_eq!(v["devices"][0]["index"], 0);
    assert!(
        v["devices"][0]["name"]
            .as_str()
            .is_some_and(|n| n.contains("Mesa 22.3")),
        "{v}"
    );
    assert_eq!(v["devices"][0]["families"], serde_json::json!([]));
}

/// The fault layer alone: `utrace counters` is an application like any other.
const LAYERS: &str = "VK_LAYER_UTRACE_fault";

#[test]
fn each_counter_says_its_unit_scope_storage_and_passes() {
    let (code, out, err) = utrace_counters(&["--json"], LAYERS, &[("UTRACE_PERF_QUERY", "1")]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).expect("one JSON object");
    let family = &v["devices"][0]["families"][0];
    let counters = family["counters"].as_array().expect("counters");
    let row = |c: &Value| {
        ["name", "unit", "scope", "storage"]
            .map(|k| c[k].as_str().unwrap().to_string())
            .join(" / ")
            + &format!(" / {}", c["passes"])
    };
    let rows: Vec<String> = counters.iter().map(row).collect();
    assert_eq!(
        rows,
        [
            "Draws / generic / render pass / uint64 / 1",
            "Vertices / generic / command / uint64 / 1",
            "Workgroups / generic / command buffer / uint64 / 1",
            "GPU busy / percentage / command buffer / float64 / 1",
            "L2 misses / generic / command buffer / uint64 / 1",
        ]
    );
    assert!(counters
        .iter()
        .all(|c| !c["description"].as_str().unwrap().is_empty()));
    // Each alone in one pass; the last needs a pass of its own, so all of them two.
    assert_eq!(family["passes_all"], 2, "{family}");
    let (_, text, _) = utrace_counters(&[], LAYERS, &[("UTRACE_PERF_QUERY", "1")]);
    assert!(
        text.contains("(VK_KHR_performance_query)\n  queue family 0 (graphics, compute, transfer): 5 counters, 2 passes together"),
        "{text}"
    );
}

/// The AMD shape's families: a compute family has the counters, the transfer-only one none.
#[test]
fn a_transfer_only_family_has_none() {
    let envs = [("UTRACE_PERF_QUERY", "1"), ("UTRACE_SHAPE", "amd")];
    let (code, out, err) = utrace_counters(&[], LAYERS, &envs);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("  queue family 1 (transfer): none\n"), "{out}");
    assert!(
        out.contains("  queue family 2 (compute, transfer): 5 counters, 2 passes together"),
        "{out}"
    );
}
