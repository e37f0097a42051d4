//! Several devices and instances in one process: each device traced on its own, to its own
//! file with `%i`, or sharing one file without losing a batch.

use utrace_tests::checks::{
    assert_batches_match, assert_clean, assert_trace_matches, device_batches, parse,
};
use utrace_tests::harness::{Run, TempDir};
use utrace_tests::workload;

/// Runs `scenario` with `GPU_TRACEFILE=<dir>/trace-%i.txt` and checks each device's file.
fn traced_per_device(scenario: &str) {
    let dir = TempDir::new(scenario);
    let template = dir.path().join("trace-%i.txt");
    let run: Run = workload!(scenario)
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", template.to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    assert_eq!(run.report().devices.len(), 2);
    let mut queues = Vec::new();
    for device in &run.report().devices {
        let path = dir.path().join(format!("trace-{}.txt", device.index));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let trace = parse(&text);
        assert!(trace.batches.iter().all(|b| b.device == device.index));
        assert_batches_match(&device_batches(&trace, device.index), &device.submissions);
        assert_eq!(trace.ends.len(), 1);
        assert_eq!(trace.ends[0].device, device.index);
        queues.push(trace.batches[0].queue.clone());
    }
    assert_ne!(queues[0], queues[1], "each device has its own queue");
}

#[test]
fn two_devices_each_traced_on_their_own() {
    traced_per_device("two-devices");
}

#[test]
fn two_instances_each_with_a_device() {
    traced_per_device("two-instances");
}

#[test]
fn two_devices_share_one_file_without_losing_batches() {
    let dir = TempDir::new("two-devices-one-file");
    let file = dir.path().join("trace.txt");
    let run = workload!("two-devices")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&std::fs::read_to_string(&file).unwrap(), &run);
    assert_eq!(trace.ends.len(), 2);
}

#[test]
fn a_device_of_a_later_instance_gets_a_new_number_and_keeps_the_file() {
    // The first instance is destroyed before the second exists (Zink probes this way): the
    // loader unloads the layer in between. The second device must not be device 0 again nor
    // truncate the trace the first one wrote.
    let dir = TempDir::new("instance-after-instance");
    let file = dir.path().join("trace.txt");
    let run = workload!("instance-after-instance")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    let trace = assert_trace_matches(&std::fs::read_to_string(&file).unwrap(), &run);
    let ends: Vec<u32> = trace.ends.iter().map(|e| e.device).collect();
    assert_eq!(ends, [0, 1], "one end record per device, in order");
    assert_eq!(trace.batches.len(), 8);
}

#[test]
fn the_layer_library_is_never_unloaded() {
    // What keeps the test above passing on every toolchain: the library is linked with
    // `-z nodelete`, so the loader's dlclose between instances leaves its state in place
    // (today the Perfetto SDK's C++ unique symbols pin it too, but nothing promises that).
    let lib = utrace_tests::harness::layer_library();
    let out = std::process::Command::new("readelf")
        .arg("--dynamic")
        .arg(&lib)
        .output()
        .expect("readelf (binutils) runs");
    assert!(out.status.success(), "readelf failed on {}", lib.display());
    let dynamic = String::from_utf8_lossy(&out.stdout);
    let flags = dynamic
        .lines()
        .find(|l| l.contains("(FLAGS_1)"))
        .unwrap_or_else(|| panic!("{} has no FLAGS_1 entry:\n{dynamic}", lib.display()));
    assert!(
        flags.contains("NODELETE"),
        "not linked -z nodelete: {flags}"
    );
}
